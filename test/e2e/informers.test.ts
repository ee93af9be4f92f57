// The informers behind cluster state recover from what the network and the API server do to watches
// (stack-notes §6): a watch the server ends, an in-stream or HTTP 410 Gone (relist, noticing what was
// deleted meanwhile), and a watch refused with a 500, after which client-node's informer stops for good
// unless we restart it (1 s backoff on the controller's clock).
import { afterEach, describe, expect, it } from 'vitest';
import { deployment, guide, nodeClaims, simulation, type Simulation } from '../support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const informer = (s: Simulation, kind: string) => s.operator.informers.status().find((i) => i.kind === kind)!;

async function provisioned(s: Simulation, name: string): Promise<void> {
  await s.apply(deployment(name, 1));
  await s.clock.advanceUntil(() => nodeClaims(s).length > 0, 60_000, `a nodeclaim for ${name}`);
}

describe('informers', () => {
  it('resume after the server ends every watch', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    const watches = sim.cluster.requests.find({ verb: 'watch', resource: 'pods' }).length;
    expect(sim.cluster.faults.dropWatches()).toBeGreaterThanOrEqual(7);
    // client-node reconnects after 1 s (its delay runs on our clock) when no event came since the last connect.
    await sim.clock.advanceUntil(() => sim!.cluster.requests.find({ verb: 'watch', resource: 'pods' }).length > watches && informer(sim!, 'Pod').state === 'watching', 10_000, 'pods watch back');
    expect(sim.cluster.requests.find({ verb: 'watch', resource: 'pods' }).length).toBe(watches + 1);
    expect(informer(sim, 'Pod').restarts).toBe(0);
    await provisioned(sim, 'after-drop');
  });

  it('relist after a 410 Gone and see what was deleted while they were away', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(guide('guide-01.yaml'));
    expect(sim.operator.cluster.nodePool('default')).toBeDefined();
    const lists = sim.cluster.requests.find({ verb: 'list', resource: 'nodepools.karpenter.sh' }).length;
    sim.cluster.faults.nextWatchGone(1);
    sim.cluster.faults.dropWatches({ gone: true });
    sim.cluster.api.delete('nodepools.karpenter.sh', undefined, 'default');
    await sim.settle();
    // The relist noticed the deletion the closed watch never delivered.
    expect(sim.operator.cluster.nodePool('default')).toBeUndefined();
    expect(sim.cluster.requests.find({ verb: 'list', resource: 'nodepools.karpenter.sh' }).length).toBeGreaterThan(lists);
    expect(sim.cluster.requests.find({ verb: 'watch', status: 410 }).length).toBe(1);
    await provisioned(sim, 'after-gone');
  });

  it('restart with backoff after a watch fails with 500', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    sim.cluster.faults.failNext({ resource: 'pods', verbs: ['watch'], code: 500 });
    sim.cluster.faults.dropWatches();
    await sim.clock.advanceUntil(() => informer(sim!, 'Pod').state === 'backoff', 10_000, 'pods informer stopped');
    expect(informer(sim, 'Pod').restarts).toBe(1);
    expect(sim.cluster.requests.find({ verb: 'watch', resource: 'pods', status: 500 })).toHaveLength(1);
    // Pods created while the informer is down are picked up once it is back.
    sim.cluster.api.create('deployments.apps', 'default', JSON.parse(deployment('while-down', 1)));
    await sim.clock.advanceUntil(() => nodeClaims(sim!).length > 0, 60_000, 'a nodeclaim for the pods created while down');
    expect(informer(sim, 'Pod')).toMatchObject({ state: 'watching', restarts: 1 });
  });
});
