// nodeclass.status with the simulator's provider: the controller shape the AWS provider shares (finalizer,
// status through the subresource with conflict retries, events, the wait for NodeClaims on deletion).
import { afterEach, describe, expect, it } from 'vitest';
import { condition, deployment, events, guide, nodeClaims, running, simulation, type Simulation } from '../../../../test/support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const get = (s: Simulation, name: string) => s.cluster.api.find('ec2nodeclasses.karpenter.k8s.aws', undefined, name);

describe('nodeclass.status', () => {
  it('resolves the guide\'s EC2NodeClass against the simulated subnets, security groups and AMIs', async () => {
    sim = await simulation({ only: ['nodeclass.status'] });
    await sim.apply(guide('guide-07.yaml'));
    const nc = get(sim, 'production')!;
    const status = nc.status as { subnets: Array<{ zone: string }>; securityGroups: unknown[]; amis: Array<{ id: string }>; instanceProfile: string };
    expect(status.subnets.map((s) => s.zone)).toEqual(['ap-northeast-2a', 'ap-northeast-2b', 'ap-northeast-2c', 'ap-northeast-2d']);
    expect(status.securityGroups).toHaveLength(1);
    expect(status.amis.map((a) => a.id)).toEqual(['ami-0simal2023amd64', 'ami-0simal2023arm64']);
    expect(status.instanceProfile).toMatch(/^my-cluster_\d+$/);
    for (const t of ['SubnetsReady', 'SecurityGroupsReady', 'AMIsReady', 'InstanceProfileReady', 'ValidationSucceeded', 'Ready']) expect(condition(nc, t)?.status).toBe('True');
    expect(nc.metadata.finalizers).toEqual(['karpenter.k8s.aws/termination']);
  });

  it('is not Ready when no subnet carries the selected tags (the guide\'s troubleshooting case), and says so in an event', async () => {
    sim = await simulation({ only: ['nodeclass.status'] });
    await sim.apply(guide('guide-07.yaml').replace('network-type: private', 'network-type: public'));
    const nc = get(sim, 'production')!;
    expect(condition(nc, 'SubnetsReady')).toMatchObject({ status: 'False', reason: 'SubnetsNotFound' });
    expect(condition(nc, 'Ready')).toMatchObject({ status: 'False', message: 'SubnetsReady not True' });
    const ev = events(sim, 'SubnetsNotFound');
    expect(ev).toHaveLength(1);
    expect(ev[0]).toMatchObject({ type: 'Warning', involvedObject: { kind: 'EC2NodeClass', name: 'production' } });
  });

  it('retries the status write with a fresh resourceVersion after a conflict', async () => {
    sim = await simulation({ only: ['nodeclass.status'] });
    sim.cluster.faults.failNext({ resource: 'ec2nodeclasses.karpenter.k8s.aws', subresource: 'status', verbs: ['patch'], code: 409, message: 'the object has been modified' });
    await sim.apply(guide('guide-07.yaml'));
    expect(sim.cluster.faults.pending()).toBe(0);
    expect(condition(get(sim, 'production')!, 'Ready')?.status).toBe('True');
    expect(sim.cluster.requests.find({ verb: 'get', resource: 'ec2nodeclasses.karpenter.k8s.aws', name: 'production', status: 200 })).toHaveLength(1);
  });

  it('does not resolve again on its own status and annotation writes', async () => {
    sim = await simulation({ only: ['nodeclass.status'] });
    await sim.apply(guide('guide-07.yaml'));
    await sim.clock.advance(60_000);
    // One finalizer patch and one status patch, then nothing until the 5-minute requeue.
    expect(sim.cluster.requests.find({ verb: 'patch', resource: 'ec2nodeclasses.karpenter.k8s.aws' })).toHaveLength(2);
  });

  it('keeps a deleted class while NodeClaims use it, then lets it go', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('web', 1));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 1, 180_000, 'web running');
    await sim.operator.kube.delete('EC2NodeClass', 'default');
    await sim.settle();
    expect(get(sim, 'default')?.metadata.deletionTimestamp).toBeDefined();
    const claim = nodeClaims(sim)[0]!.metadata.name!;
    expect(events(sim, 'WaitingOnNodeClaimTermination').map((e) => e['message'])).toEqual([`Waiting on NodeClaim termination for ${claim}`]);
    await sim.operator.kube.delete('NodePool', 'spot-diverse');
    await sim.operator.kube.delete('NodeClaim', claim);
    await sim.clock.advanceUntil(() => get(sim!, 'default') === undefined, 300_000, 'the class released');
    expect(nodeClaims(sim)).toEqual([]);
  });
});
