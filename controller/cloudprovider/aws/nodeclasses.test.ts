import {
  DeleteInstanceProfileCommand,
  GetInstanceProfileCommand,
  ListInstanceProfilesCommand,
  RemoveRoleFromInstanceProfileCommand,
} from '@aws-sdk/client-iam';
import 'aws-sdk-client-mock-vitest/extend';
import { describe, expect, it } from 'vitest';
import { iamProfiles, mockedAws, readyNodeClass } from '../../../test/fakes/aws.ts';
import type { EC2NodeClass } from '../../../engine/index.ts';
import { legacyProfileName } from './nodeclass/instanceprofile.ts';
import { awsNodeClasses } from './nodeclasses.ts';
import type { NodeClassReconcileResult } from './nodeclass/reconcile.ts';

const profile = (name: string, role?: string) => ({
  InstanceProfileName: name,
  InstanceProfileId: 'id',
  Arn: 'arn',
  Path: '/karpenter/us-west-2/my-cluster/uid/',
  CreateDate: new Date(0),
  Roles: role ? [{ RoleName: role, RoleId: 'r', Arn: 'a', Path: '/', CreateDate: new Date(0) }] : [],
});

function setup(results: Array<Partial<NodeClassReconcileResult>>, inUse: Set<string> = new Set(), isolatedVPC = false) {
  const aws = mockedAws();
  aws.iam.on(RemoveRoleFromInstanceProfileCommand).resolves({});
  aws.iam.on(DeleteInstanceProfileCommand).resolves({});
  const finalized: string[] = [];
  const nc = readyNodeClass();
  let n = 0;
  const adapter = awsNodeClasses({
    provider: {
      reconcileNodeClass: async (c: EC2NodeClass) => ({
        status: c.status,
        conditions: c.status.conditions,
        ready: true,
        subnets: [],
        errors: [],
        requeueAfterMs: 300_000,
        annotations: {
          'karpenter.k8s.aws/ec2nodeclass-hash': '42',
          'karpenter.k8s.aws/ec2nodeclass-hash-version': 'kts-v1',
        },
        ...results[Math.min(n++, results.length - 1)],
      }),
      finalizeNodeClass: async (c: EC2NodeClass) => void finalized.push(c.name),
    },
    iam: aws.ports.iam,
    profileInUse: (p) => inUse.has(p),
    clusterName: 'my-cluster',
    region: 'us-west-2',
    isolatedVPC,
  });
  return { aws, adapter, nc, finalized, inUse };
}

describe('awsNodeClasses', () => {
  it('renders the status for the API server and asks for the hash on NodeClaims of another hash version', async () => {
    const { adapter, nc } = setup([{}]);
    const r = await adapter.resolve(nc);
    expect(r.status['instanceProfile']).toBe('my-cluster_123');
    expect((r.status['conditions'] as Array<{ lastTransitionTime: string }>)[0]!.lastTransitionTime).toBe(
      '2026-08-21T11:00:00Z',
    );
    expect(r.nodeClaimAnnotations).toEqual({
      key: 'karpenter.k8s.aws/ec2nodeclass-hash-version',
      values: r.annotations,
    });
    expect(r.requeueAfterMs).toBe(300_000);
  });

  it('deletes an instance profile replaced after a role change once no NodeClaim uses it', async () => {
    const { aws, adapter, nc, inUse } = setup(
      [{ staleInstanceProfile: 'my-cluster_old' }, {}],
      new Set(['my-cluster_old']),
    );
    aws.iam.on(GetInstanceProfileCommand).resolves({ InstanceProfile: profile('my-cluster_old', 'OldRole') });
    await adapter.resolve(nc);
    expect(adapter.stale('default')).toEqual(['my-cluster_old']);
    expect(aws.iam).not.toHaveReceivedCommand(DeleteInstanceProfileCommand);
    inUse.clear();
    await adapter.resolve(nc);
    expect(aws.iam).toHaveReceivedCommandWith(RemoveRoleFromInstanceProfileCommand, {
      InstanceProfileName: 'my-cluster_old',
      RoleName: 'OldRole',
    });
    expect(aws.iam).toHaveReceivedCommandWith(DeleteInstanceProfileCommand, { InstanceProfileName: 'my-cluster_old' });
    expect(adapter.stale('default')).toEqual([]);
  });

  it('reports a failed clean-up as an error of the resolution and tries again sooner', async () => {
    const { aws, adapter, nc } = setup([{ staleInstanceProfile: 'my-cluster_old' }]);
    aws.iam.on(GetInstanceProfileCommand).rejects(Object.assign(new Error('throttled'), { name: 'Throttling' }));
    const r = await adapter.resolve(nc);
    expect(r.errors.map((e) => e.message)).toEqual([
      'deleting stale instance profile my-cluster_old of EC2NodeClass default',
    ]);
    expect(r.requeueAfterMs).toBe(60_000);
    expect(adapter.stale('default')).toEqual(['my-cluster_old']);
  });

  it('on deletion cleans up through the provider and removes every other profile under the class path', async () => {
    const { aws, adapter, nc, finalized } = setup([{}]);
    aws.iam.on(ListInstanceProfilesCommand).resolves({
      InstanceProfiles: [
        profile('my-cluster_123', 'KarpenterNodeRole-my-cluster'),
        profile('my-cluster_lost', 'OldRole'),
      ],
    });
    aws.iam
      .on(GetInstanceProfileCommand, { InstanceProfileName: 'my-cluster_lost' })
      .resolves({ InstanceProfile: profile('my-cluster_lost', 'OldRole') });
    await adapter.finalize(nc);
    expect(finalized).toEqual(['default']);
    expect(aws.iam).toHaveReceivedCommandWith(ListInstanceProfilesCommand, {
      PathPrefix: '/karpenter/us-west-2/my-cluster/0f6c4f1a-1111-2222-3333-444455556666/',
    });
    expect(aws.iam).toHaveReceivedCommandTimes(DeleteInstanceProfileCommand, 1);
    expect(aws.iam).toHaveReceivedCommandWith(DeleteInstanceProfileCommand, { InstanceProfileName: 'my-cluster_lost' });
  });

  const OWN_PATH = '/karpenter/us-west-2/my-cluster/0f6c4f1a-1111-2222-3333-444455556666/';

  it('in an isolated VPC leaves every instance profile and makes no IAM call', async () => {
    const inUse = new Set(['my-cluster_old']);
    const { aws, adapter, nc, finalized } = setup([{ staleInstanceProfile: 'my-cluster_old' }], inUse, true);
    await adapter.resolve(nc);
    expect(adapter.stale('default')).toEqual(['my-cluster_old']);
    await adapter.finalize(nc);
    expect(finalized).toEqual(['default']);
    expect(aws.iam.calls()).toHaveLength(0);
    expect(adapter.stale('default')).toEqual([]);
  });

  it('removes the profiles under the class path after the class moved to spec.instanceProfile', async () => {
    const { aws, adapter } = setup([{}]);
    const nc = readyNodeClass({ role: undefined, instanceProfile: 'team-profile' });
    const iam = iamProfiles(aws, [
      { name: 'my-cluster_from-role', path: OWN_PATH, role: 'KarpenterNodeRole-my-cluster' },
      { name: 'team-profile', path: '/', role: 'TeamRole' },
    ]);
    await adapter.finalize({ ...nc, status: { ...nc.status, instanceProfile: 'team-profile' } });
    expect(iam.has('my-cluster_from-role')).toBe(false);
    expect(iam.get('team-profile')).toEqual(['TeamRole']);
  });

  it('removes the profile an earlier Karpenter named after the class alone', async () => {
    const { aws, adapter, nc } = setup([{}]);
    const legacy = legacyProfileName('my-cluster', 'us-west-2', 'default');
    const iam = iamProfiles(aws, [{ name: legacy, path: '/', role: 'KarpenterNodeRole-my-cluster' }]);
    await adapter.finalize(nc);
    expect(aws.iam).toHaveReceivedCommandWith(RemoveRoleFromInstanceProfileCommand, { InstanceProfileName: legacy });
    expect(iam.has(legacy)).toBe(false);
  });
});

describe('legacyProfileName', () => {
  // FNV-1 64-bit test vectors (Fowler, Noll, Vo; the reference test suite): "a" and "foobar".
  it('is the cluster and the FNV-1 64 hash of region + name, in decimal', () => {
    expect(legacyProfileName('c', '', 'a')).toBe(`c_${BigInt('0xaf63bd4c8601b7be')}`);
    expect(legacyProfileName('my-cluster', 'foo', 'bar')).toBe(`my-cluster_${BigInt('0x340d8765a4dda9c2')}`);
  });
});
