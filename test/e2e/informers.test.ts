// The informers behind cluster state recover from what the network and the API server do to watches: a
// watch the server ends, an in-stream or HTTP 410 Gone (relist, noticing what was deleted meanwhile),
// and a watch refused with a 500, after which client-node's informer stops for good unless we restart it
// (1 s backoff on the controller's clock). A kind is synced once a list of it succeeded, and stays synced.
import type { KubernetesObject, ListWatch } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { readiness } from '../../controller/main.ts';
import { serve } from '../../controller/operator/health.ts';
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
    await sim.clock.advanceUntil(
      () =>
        sim!.cluster.requests.find({ verb: 'watch', resource: 'pods' }).length > watches &&
        informer(sim!, 'Pod').state === 'watching',
      10_000,
      'pods watch back',
    );
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
    expect(sim.cluster.requests.find({ verb: 'list', resource: 'nodepools.karpenter.sh' }).length).toBeGreaterThan(
      lists,
    );
    expect(sim.cluster.requests.find({ verb: 'watch', status: 410 }).length).toBe(1);
    await provisioned(sim, 'after-gone');
  });

  it('relist pods after a 410 Gone: the pods deleted meanwhile leave cluster state, the others stay', async () => {
    // client-node's Pod cache reads cluster state's pod table (keptcache.ts): its relist finds what to remove there.
    sim = await simulation();
    const pod = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default' },
      spec: { containers: [{ name: 'c', image: 'pause' }] },
    });
    for (const name of ['kept', 'gone']) sim.cluster.api.create('pods', 'default', pod(name));
    await sim.settle();
    const w = sim.operator.cluster.workloads;
    expect(w.pod('default', 'gone')).toBeDefined();
    sim.cluster.faults.nextWatchGone(1);
    sim.cluster.faults.dropWatches({ gone: true });
    sim.cluster.api.delete('pods', 'default', 'gone');
    await sim.settle();
    expect(w.pod('default', 'gone')).toBeUndefined();
    expect(w.pod('default', 'kept')).toBeDefined();
    expect(sim.cluster.requests.find({ verb: 'watch', status: 410 }).length).toBe(1);
    // The informer's cache is cluster state's: a pod it gets is the record cluster state holds.
    const lw = (
      sim.operator.informers as unknown as { informers: Map<string, { lw: ListWatch<KubernetesObject> }> }
    ).informers.get('Pod')!.lw;
    expect(lw.get('kept', 'default')).toBe(w.pod('default', 'kept'));
    expect(lw.list()).toHaveLength(1);
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
    await sim.clock.advanceUntil(
      () => nodeClaims(sim!).length > 0,
      60_000,
      'a nodeclaim for the pods created while down',
    );
    expect(informer(sim, 'Pod')).toMatchObject({ state: 'watching', restarts: 1 });
  });
});

describe('cache sync', () => {
  it('a failed first list keeps the kind unsynced, retried with backoff; /readyz names it until a list succeeds', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    sim.operator.kill();
    sim.cluster.faults.failNext({ resource: 'pods', verbs: ['list'], code: 500, count: 3 });
    const started = sim.clock.now();
    const before = sim.cluster.requests.all().length;
    const b = await sim.startReplica({ name: 'restarted' });
    const probe = await serve(0, { ready: () => readiness(b.informers) }, '127.0.0.1');
    try {
      expect(b.informers.unsynced()).toEqual(['Pod']);
      expect(b.runtime.waitingForSync()).toContain('node.termination');
      expect(b.runtime.waitingForSync()).not.toContain('nodeclaim.termination');
      const notReady = await fetch(`http://127.0.0.1:${probe.port}/readyz`);
      expect(notReady.status).toBe(503);
      expect(await notReady.text()).toMatch(/^Pod: not synced \(informer backoff, 1 restarts\)$/m);
      // 1 s, 2 s, 4 s of backoff: the fourth list succeeds 7 s after the start.
      await sim.clock.advanceUntil(() => b.informers.synced(), 30_000, 'pods listed');
      expect(sim.clock.now() - started).toBe(7_000);
      const lists = sim.cluster.requests
        .all()
        .slice(before)
        .filter((r) => r.verb === 'list' && r.resource === 'pods')
        .map((r) => [r.time - started, r.status]);
      expect(lists).toEqual([
        [0, 500],
        [1_000, 500],
        [3_000, 500],
        [7_000, 200],
      ]);
      expect(b.runtime.waitingForSync()).toEqual([]);
      const ready = await fetch(`http://127.0.0.1:${probe.port}/readyz`);
      expect([ready.status, await ready.text()]).toEqual([200, 'ok']);
    } finally {
      await probe.close();
    }
  });

  it('a relist after a watch failure that itself fails does not make a synced kind unsynced', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await provisioned(sim, 'before');
    const claims = sim.operator.cluster.nodeClaims().length;
    sim.cluster.faults.failNext({ resource: 'nodeclaims', verbs: ['list'], code: 500, count: 2 });
    sim.cluster.faults.nextWatchGone(1);
    sim.cluster.faults.dropWatches({ gone: true });
    await sim.clock.advanceUntil(() => informer(sim!, 'NodeClaim').restarts >= 1, 10_000, 'nodeclaims relist failed');
    expect(informer(sim, 'NodeClaim')).toMatchObject({ listed: true, state: 'backoff' });
    expect(sim.operator.informers.synced()).toBe(true);
    expect(sim.operator.runtime.waitingForSync()).toEqual([]);
    // The cache kept what it had while the relist failed.
    expect(sim.operator.cluster.nodeClaims()).toHaveLength(claims);
    await sim.clock.advanceUntil(
      () => informer(sim!, 'NodeClaim').state === 'watching',
      30_000,
      'nodeclaims watching again',
    );
    expect(sim.cluster.requests.find({ verb: 'list', resource: 'nodeclaims.karpenter.sh', status: 500 })).toHaveLength(
      2,
    );
  });
});
