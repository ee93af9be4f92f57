import {
  DescribeImagesCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  EC2ServiceException,
} from '@aws-sdk/client-ec2';
import { GetInstanceProfileCommand, ListInstanceProfilesCommand } from '@aws-sdk/client-iam';
import { GetParameterCommand, ParameterNotFound } from '@aws-sdk/client-ssm';
import { describe, expect, it } from 'vitest';
import { FakeClock, mockedAws, nodeClass } from '../../../../test/fakes/aws.ts';
import type { Condition, EC2NodeClass } from '../../../../engine/index.ts';
import { statusObject } from './object.ts';
import { reconcileNodeClass } from './reconcile.ts';

function happyAws() {
  const aws = mockedAws();
  aws.ssm.on(GetParameterCommand).callsFake((input: { Name: string }) => {
    if (input.Name.includes('/x86_64/standard/')) return { Parameter: { Value: 'ami-x86' } };
    throw new ParameterNotFound({ $metadata: {}, message: 'no' });
  });
  aws.ec2
    .on(DescribeImagesCommand)
    .resolves({ Images: [{ ImageId: 'ami-x86', Architecture: 'x86_64', Name: 'al2023' }] });
  aws.ec2.on(DescribeSubnetsCommand).resolves({
    Subnets: [
      {
        SubnetId: 'subnet-a',
        AvailabilityZone: 'us-west-2a',
        AvailabilityZoneId: 'usw2-az1',
        AvailableIpAddressCount: 100,
      },
    ],
  });
  aws.ec2.on(DescribeSecurityGroupsCommand).resolves({ SecurityGroups: [{ GroupId: 'sg-1', GroupName: 'nodes' }] });
  aws.iam.on(GetInstanceProfileCommand).resolves({
    InstanceProfile: {
      InstanceProfileName: 'my-cluster_1',
      InstanceProfileId: 'x',
      Arn: 'a',
      Path: '/',
      CreateDate: new Date(),
      Roles: [{ RoleName: 'KarpenterNodeRole-my-cluster', RoleId: 'r', Arn: 'a', Path: '/', CreateDate: new Date() }],
    },
  });
  aws.iam.on(ListInstanceProfilesCommand).resolves({ InstanceProfiles: [] });
  return aws;
}

const run = (aws: ReturnType<typeof mockedAws>, nc: EC2NodeClass, clock = new FakeClock()) =>
  reconcileNodeClass(nc, {
    ec2: aws.ports.ec2,
    ssm: aws.ports.ssm,
    iam: aws.ports.iam,
    clusterName: 'my-cluster',
    region: 'us-west-2',
    kubernetesVersion: async () => '1.31',
    clock,
  });

const cond = (r: { conditions: readonly Condition[] }, type: string) => r.conditions.find((c) => c.type === type);

describe('reconcileNodeClass', () => {
  it('resolves everything and reports Ready with the status, conditions and hash annotations', async () => {
    const aws = happyAws();
    const r = await run(aws, nodeClass({}, { status: { instanceProfile: 'my-cluster_1' } }));
    expect(r.ready).toBe(true);
    expect(r.status).toMatchObject({
      subnets: [{ id: 'subnet-a', zone: 'us-west-2a', zoneID: 'usw2-az1' }],
      securityGroups: [{ id: 'sg-1', name: 'nodes' }],
      amis: [
        {
          id: 'ami-x86',
          name: 'al2023',
          requirements: expect.arrayContaining([{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }]),
        },
      ],
      instanceProfile: 'my-cluster_1',
    });
    expect(r.conditions.map((c) => `${c.type}=${c.status}`)).toEqual([
      'AMIsReady=True',
      'CapacityReservationsReady=True',
      'SubnetsReady=True',
      'SecurityGroupsReady=True',
      'InstanceProfileReady=True',
      'ValidationSucceeded=True',
      'Ready=True',
    ]);
    expect(r.conditions.every((c) => c.observedGeneration === 1)).toBe(true);
    expect(Object.keys(r.annotations).sort()).toEqual([
      'karpenter.k8s.aws/ec2nodeclass-hash',
      'karpenter.k8s.aws/ec2nodeclass-hash-version',
    ]);
    expect(r.subnets[0]?.availableIps).toBe(100);
    expect(r.errors).toEqual([]);
  });

  it('says which subnet selector matched nothing and points at the discovery tag', async () => {
    const aws = happyAws();
    aws.ec2.on(DescribeSubnetsCommand).resolves({ Subnets: [] });
    const r = await run(
      aws,
      nodeClass(
        { subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'my-cluster', 'network-type': 'private' } }] },
        { status: { instanceProfile: 'my-cluster_1' } },
      ),
    );
    expect(r.ready).toBe(false);
    expect(cond(r, 'SubnetsReady')).toMatchObject({ status: 'False', reason: 'SubnetsNotFound' });
    expect(cond(r, 'SubnetsReady')).toHaveProperty(
      'message',
      expect.stringContaining(
        'subnetSelectorTerms [{tags: {karpenter.sh/discovery: my-cluster, network-type: private}}] matched no subnets',
      ),
    );
    expect(cond(r, 'SubnetsReady')).toHaveProperty('message', expect.stringContaining('karpenter.sh/discovery'));
    expect(cond(r, 'Ready')).toMatchObject({ status: 'False', reason: 'UnhealthyDependents' });
    expect(r.status.subnets).toEqual([]);
  });

  it('reports security groups that match nothing', async () => {
    const aws = happyAws();
    aws.ec2.on(DescribeSecurityGroupsCommand).resolves({ SecurityGroups: [] });
    const r = await run(aws, nodeClass({}, { status: { instanceProfile: 'my-cluster_1' } }));
    expect(cond(r, 'SecurityGroupsReady')).toMatchObject({ status: 'False', reason: 'SecurityGroupsNotFound' });
    expect(cond(r, 'SecurityGroupsReady')).toHaveProperty(
      'message',
      expect.stringContaining('securityGroupSelectorTerms [{tags: {karpenter.sh/discovery: my-cluster}}]'),
    );
  });

  it('sets AMIsReady=False when the alias has no SSM parameter for the cluster version', async () => {
    const aws = happyAws();
    aws.ssm.on(GetParameterCommand).rejects(new ParameterNotFound({ $metadata: {}, message: 'no' }));
    const r = await run(aws, nodeClass({}, { status: { instanceProfile: 'my-cluster_1' } }));
    expect(cond(r, 'AMIsReady')).toMatchObject({ status: 'False', reason: 'AMINotFound' });
    expect(cond(r, 'AMIsReady')).toHaveProperty('message', expect.stringMatching(/al2023@latest on Kubernetes 1\.31/));
    expect(r.status.amis).toEqual([]);
    expect(r.ready).toBe(false);
  });

  it('keeps the previous status field and condition when an AWS call fails, and requeues sooner', async () => {
    const aws = happyAws();
    aws.ec2.on(DescribeSubnetsCommand).rejects(
      new EC2ServiceException({
        name: 'RequestLimitExceeded',
        $fault: 'client',
        $metadata: {},
        message: 'slow down',
      }),
    );
    const clock = new FakeClock();
    const first = await run(happyAws(), nodeClass({}, { status: { instanceProfile: 'my-cluster_1' } }), clock);
    clock.step(60_000);
    const again = await run(aws, nodeClass({}, { status: statusObject(first.status) }), clock);
    expect(again.status.subnets).toEqual(first.status.subnets);
    expect(cond(again, 'SubnetsReady')).toEqual(cond(first, 'SubnetsReady'));
    expect(again.ready).toBe(true);
    expect(again.errors.map((e) => e.name)).toEqual(['RequestLimitExceeded']);
    expect(again.requeueAfterMs).toBeLessThan(first.requeueAfterMs);
  });

  it('fails validation on restricted tags, naming the tag', async () => {
    // The engine's parser (the CRD's rules) refuses them; the reconciler still checks objects stored under an older CRD.
    const tags = { 'karpenter.sh/nodepool': 'x', Team: 'a' };
    expect(() => nodeClass({ tags })).toThrow(/spec\.tags\[karpenter\.sh\/nodepool\]/);
    const nc = nodeClass({}, { status: { instanceProfile: 'my-cluster_1' } });
    const r = await run(happyAws(), { ...nc, spec: { ...nc.spec, tags } });
    expect(cond(r, 'ValidationSucceeded')).toMatchObject({
      status: 'False',
      reason: 'TagValidationFailed',
      message: expect.stringContaining('"karpenter.sh/nodepool"'),
    });
    expect(r.ready).toBe(false);
  });

  it('keeps lastTransitionTime while a condition does not change', async () => {
    const clock = new FakeClock();
    const first = await run(happyAws(), nodeClass({}, { status: { instanceProfile: 'my-cluster_1' } }), clock);
    clock.step(300_000);
    const second = await run(happyAws(), nodeClass({}, { status: statusObject(first.status) }), clock);
    expect(cond(second, 'Ready')?.lastTransitionTime).toBe(cond(first, 'Ready')?.lastTransitionTime);
    const aws = happyAws();
    aws.ec2.on(DescribeSecurityGroupsCommand).resolves({ SecurityGroups: [] });
    clock.step(300_000);
    const third = await run(aws, nodeClass({}, { status: statusObject(second.status) }), clock);
    expect(cond(third, 'Ready')?.lastTransitionTime).not.toBe(cond(first, 'Ready')?.lastTransitionTime);
  });
});
