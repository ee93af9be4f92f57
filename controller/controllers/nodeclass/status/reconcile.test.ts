// nodeclass.status on the in-memory API (test/fakes) with the simulator's node-class resolution (its account's
// subnets, security groups and AMIs): the controller shape the AWS provider shares (finalizer, status through
// the subresource with conflict retries, events, the wait for NodeClaims on deletion).
import { describe, expect, it } from 'vitest';
import { simNetwork } from '../../../../sim/cloud/network.ts';
import { simNodeClasses } from '../../../../sim/cloud/nodeclass-status.ts';
import { fakeControllerEnv, type FakeControllerEnv } from '../../../../test/fakes/controller.ts';
import { launchedNode } from '../../../../test/fakes/objects.ts';
import { condition, guide } from '../../../../test/support/environment.ts';
import { newNodeClassStatus } from './reconcile.ts';

function statusEnv(): FakeControllerEnv {
  const env = fakeControllerEnv();
  env.run(newNodeClassStatus(env.ctx, simNodeClasses(simNetwork('ap-northeast-2', 'my-cluster'), env.clock, true)));
  return env;
}

const get = (env: FakeControllerEnv, name: string) => env.api.find('ec2nodeclasses.karpenter.k8s.aws', undefined, name);
const events = (env: FakeControllerEnv, reason: string) =>
  env.api.store.list('events').filter((e) => e['reason'] === reason);

describe('nodeclass.status', () => {
  it("resolves the guide's EC2NodeClass against the simulated subnets, security groups and AMIs", async () => {
    const env = statusEnv();
    await env.apply(guide('guide-07.yaml'));
    const nc = get(env, 'production')!;
    const status = nc.status as {
      subnets: Array<{ zone: string }>;
      securityGroups: unknown[];
      amis: Array<{ id: string }>;
      instanceProfile: string;
    };
    expect(status.subnets.map((s) => s.zone)).toEqual([
      'ap-northeast-2a',
      'ap-northeast-2b',
      'ap-northeast-2c',
      'ap-northeast-2d',
    ]);
    expect(status.securityGroups).toHaveLength(1);
    expect(status.amis.map((a) => a.id)).toEqual(['ami-0simal2023amd64', 'ami-0simal2023arm64']);
    expect(status.instanceProfile).toMatch(/^my-cluster_\d+$/);
    for (const t of [
      'SubnetsReady',
      'SecurityGroupsReady',
      'AMIsReady',
      'InstanceProfileReady',
      'ValidationSucceeded',
      'Ready',
    ])
      expect(condition(nc, t)?.status).toBe('True');
    expect(nc.metadata.finalizers).toEqual(['karpenter.k8s.aws/termination']);
  });

  it("is not Ready when no subnet carries the selected tags (the guide's troubleshooting case), and says so in an event", async () => {
    const env = statusEnv();
    await env.apply(guide('guide-07.yaml').replace('network-type: private', 'network-type: public'));
    const nc = get(env, 'production')!;
    expect(condition(nc, 'SubnetsReady')).toMatchObject({ status: 'False', reason: 'SubnetsNotFound' });
    expect(condition(nc, 'Ready')).toMatchObject({ status: 'False', message: 'SubnetsReady not True' });
    const ev = events(env, 'SubnetsNotFound');
    expect(ev).toHaveLength(1);
    expect(ev[0]).toMatchObject({ type: 'Warning', involvedObject: { kind: 'EC2NodeClass', name: 'production' } });
  });

  it('retries the status write with a fresh resourceVersion after a conflict', async () => {
    const env = statusEnv();
    env.kube.failNext({
      method: 'PATCH',
      path: '/ec2nodeclasses/production/status',
      code: 409,
      message: 'the object has been modified',
    });
    await env.apply(guide('guide-07.yaml'));
    expect(env.kube.pendingFailures()).toBe(0);
    expect(condition(get(env, 'production')!, 'Ready')?.status).toBe('True');
    expect(
      env.kube.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/ec2nodeclasses/production')),
    ).toHaveLength(1);
  });

  it('does not resolve again on its own status and annotation writes', async () => {
    const env = statusEnv();
    await env.apply(guide('guide-07.yaml'));
    await env.clock.advance(60_000);
    // One finalizer patch and one status patch, then nothing until the 5-minute requeue.
    expect(env.writes().filter((w) => w.startsWith('PATCH') && w.includes('/ec2nodeclasses/'))).toHaveLength(2);
  });

  it('keeps a deleted class while NodeClaims use it, then lets it go', async () => {
    const env = statusEnv();
    await env.apply(guide('guide-03.yaml'));
    launchedNode(env, { name: 'default-a' });
    await env.settle();
    await env.kube.delete('EC2NodeClass', 'default');
    await env.settle();
    expect(get(env, 'default')?.metadata.deletionTimestamp).toBeDefined();
    expect(events(env, 'WaitingOnNodeClaimTermination').map((e) => e['message'])).toEqual([
      'Waiting on NodeClaim termination for default-a',
    ]);
    // The NodeClaim goes (its termination finalizer removed, as nodeclaim.termination does once the instance is gone).
    await env.kube.delete('NodeClaim', 'default-a');
    env.api.patch('nodeclaims.karpenter.sh', undefined, 'default-a', 'merge', { metadata: { finalizers: null } });
    await env.clock.advanceUntil(() => get(env, 'default') === undefined, 300_000, 'the class released');
    expect(env.api.store.list('nodeclaims.karpenter.sh')).toEqual([]);
  });
});
