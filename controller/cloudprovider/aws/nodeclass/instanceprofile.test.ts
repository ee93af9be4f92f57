import {
  AddRoleToInstanceProfileCommand,
  CreateInstanceProfileCommand,
  GetInstanceProfileCommand,
  IAMServiceException,
  ListInstanceProfilesCommand,
} from '@aws-sdk/client-iam';
import 'aws-sdk-client-mock-vitest/extend';
import { describe, expect, it } from 'vitest';
import { mockedAws, nodeClass } from '../../../../test/fakes/aws.ts';
import { profileName, reconcileInstanceProfile, roleName } from './instanceprofile.ts';

const noSuchEntity = () =>
  new IAMServiceException({ name: 'NoSuchEntity', $fault: 'client', $metadata: {}, message: 'no' });
const profile = (name: string, role?: string) => ({
  InstanceProfileName: name,
  InstanceProfileId: 'AIP',
  Arn: `arn:aws:iam::1:instance-profile/${name}`,
  Path: '/',
  CreateDate: new Date(),
  Roles: role
    ? [{ RoleName: role, RoleId: 'R', Arn: `arn:aws:iam::1:role/${role}`, Path: '/', CreateDate: new Date() }]
    : [],
});
const deps = (aws: ReturnType<typeof mockedAws>) => ({
  iam: aws.ports.iam,
  clusterName: 'my-cluster',
  region: 'us-west-2',
  uuid: () => 'uuid-1',
});

describe('reconcileInstanceProfile', () => {
  it('creates a profile under the node class path with Karpenter tags and adds the role', async () => {
    const aws = mockedAws();
    const name = profileName('my-cluster', 'us-west-2', 'default', 'uuid-1');
    aws.iam.on(ListInstanceProfilesCommand).resolves({ InstanceProfiles: [] });
    aws.iam.on(CreateInstanceProfileCommand).resolves({ InstanceProfile: profile(name) });
    aws.iam.on(GetInstanceProfileCommand).resolves({ InstanceProfile: profile(name) });
    const r = await reconcileInstanceProfile(nodeClass(), deps(aws));
    expect(r).toEqual({ name });
    expect(name).toMatch(/^my-cluster_\d+$/);
    expect(aws.iam).toHaveReceivedCommandWith(CreateInstanceProfileCommand, {
      InstanceProfileName: name,
      Path: '/karpenter/us-west-2/my-cluster/0f6c4f1a-1111-2222-3333-444455556666/',
      Tags: [
        { Key: 'kubernetes.io/cluster/my-cluster', Value: 'owned' },
        { Key: 'eks:eks-cluster-name', Value: 'my-cluster' },
        { Key: 'topology.kubernetes.io/region', Value: 'us-west-2' },
        { Key: 'karpenter.k8s.aws/ec2nodeclass', Value: 'default' },
      ],
    });
    expect(aws.iam).toHaveReceivedCommandWith(AddRoleToInstanceProfileCommand, {
      InstanceProfileName: name,
      RoleName: 'KarpenterNodeRole-my-cluster',
    });
  });

  it('reuses the profile in status while it holds the role', async () => {
    const aws = mockedAws();
    aws.iam
      .on(GetInstanceProfileCommand)
      .resolves({ InstanceProfile: profile('my-cluster_1', 'KarpenterNodeRole-my-cluster') });
    const r = await reconcileInstanceProfile(nodeClass({}, { status: { instanceProfile: 'my-cluster_1' } }), deps(aws));
    expect(r).toEqual({ name: 'my-cluster_1' });
    expect(aws.iam).not.toHaveReceivedCommand(CreateInstanceProfileCommand);
    expect(aws.iam).not.toHaveReceivedCommand(AddRoleToInstanceProfileCommand);
  });

  it('finds an existing profile under the path when status lost it', async () => {
    const aws = mockedAws();
    aws.iam
      .on(ListInstanceProfilesCommand)
      .resolves({ InstanceProfiles: [profile('my-cluster_9', 'KarpenterNodeRole-my-cluster')] });
    expect(await reconcileInstanceProfile(nodeClass(), deps(aws))).toEqual({ name: 'my-cluster_9' });
    expect(aws.iam).toHaveReceivedCommandWith(ListInstanceProfilesCommand, {
      PathPrefix: '/karpenter/us-west-2/my-cluster/0f6c4f1a-1111-2222-3333-444455556666/',
    });
    expect(aws.iam).not.toHaveReceivedCommand(CreateInstanceProfileCommand);
  });

  it('creates a new profile when the role changes, reporting the old one as stale', async () => {
    const aws = mockedAws();
    const fresh = profileName('my-cluster', 'us-west-2', 'default', 'uuid-1');
    aws.iam
      .on(GetInstanceProfileCommand, { InstanceProfileName: 'my-cluster_1' })
      .resolves({ InstanceProfile: profile('my-cluster_1', 'OldRole') });
    aws.iam.on(GetInstanceProfileCommand, { InstanceProfileName: fresh }).resolves({ InstanceProfile: profile(fresh) });
    aws.iam.on(ListInstanceProfilesCommand).resolves({ InstanceProfiles: [profile('my-cluster_1', 'OldRole')] });
    aws.iam.on(CreateInstanceProfileCommand).resolves({ InstanceProfile: profile(fresh) });
    const nc = nodeClass(
      { role: 'arn:aws:iam::123456789012:role/team/NewRole' },
      { status: { instanceProfile: 'my-cluster_1' } },
    );
    expect(await reconcileInstanceProfile(nc, deps(aws))).toEqual({ name: fresh, stale: 'my-cluster_1' });
    expect(aws.iam).toHaveReceivedCommandWith(AddRoleToInstanceProfileCommand, {
      InstanceProfileName: fresh,
      RoleName: 'NewRole',
    });
  });

  it('uses spec.instanceProfile as given, without IAM calls', async () => {
    const aws = mockedAws();
    aws.iam.on(GetInstanceProfileCommand).rejects(noSuchEntity());
    expect(await reconcileInstanceProfile(nodeClass({ role: undefined, instanceProfile: 'mine' }), deps(aws))).toEqual({
      name: 'mine',
    });
    expect(aws.iam).not.toHaveReceivedAnyCommand();
  });

  it('strips any path or ARN from the role', () => {
    expect(roleName('KarpenterNodeRole-c')).toBe('KarpenterNodeRole-c');
    expect(roleName('arn:aws:iam::1:role/path/to/Role')).toBe('Role');
  });
});
