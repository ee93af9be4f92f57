// Failure drill: the controller killed in the middle of a launch, and started again. Whatever was in
// flight, the restarted controller finishes the work without doubling it, and garbage collection leaves
// nothing behind: an instance launched but never recorded on its NodeClaim is terminated once it is 30 s
// old (at the next 2-minute pass), as Karpenter's garbage collection does; a NodeClaim written but never
// launched is launched exactly once; a NodeClaim whose instance vanished meanwhile is deleted with its Node.
import { afterEach, describe, expect, it } from 'vitest';
import type { CloudProvider, Instance } from '../../controller/cloudprovider/types.ts';
import { GC_PERIOD_MS, ORPHAN_GRACE_MS } from '../../controller/controllers/nodeclaim/garbagecollection/reconcile.ts';
import { leaks, liveInstances, watchDrill, wrapCloud } from '../support/drills.ts';
import { deployment, guide, nodeClaims, nodes, running, simulation, type Simulation } from '../support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/**
 * A cloud view in which the controller dies inside its first create call: after the cloud launched the
 * instance (`launch`), or before the request left. The call never returns to the dead controller.
 */
function dyingOnCreate(launch: boolean, seen: Instance[], called: string[]): (cp: CloudProvider) => CloudProvider {
  return (cp) =>
    wrapCloud(cp, {
      create: async (req) => {
        called.push(req.nodeClaimName);
        if (launch) seen.push(await cp.create(req));
        sim!.operator.kill();
        return new Promise<Instance>(() => {});
      },
    });
}

async function startWith(cloud: (cp: CloudProvider) => CloudProvider): Promise<Simulation> {
  const s = await simulation({ cloud });
  await s.apply(guide('guide-03.yaml'));
  await s.apply(guide('guide-05.yaml'));
  await s.apply(deployment('web', 3));
  return s;
}

describe('restart drills', () => {
  it('instance launched, NodeClaim status not written: the restarted controller launches once more, and the orphan is garbage-collected', async () => {
    const orphans: Instance[] = [];
    const called: string[] = [];
    sim = await startWith(dyingOnCreate(true, orphans, called));
    await sim.clock.advanceUntil(() => orphans.length === 1, 60_000, 'the first launch');
    const claim = called[0]!;
    // Two instances may live for one NodeClaim until garbage collection (as in Karpenter); never three.
    const drill = watchDrill(sim, { maxUnboundMs: 120_000, maxInstancesPerNodeClaim: 2 });
    expect(sim.operator.alive()).toBe(false);
    const restartedAt = sim.clock.now();
    const b = await sim.startReplica({ name: 'restarted' });

    await sim.clock.advanceUntil(() => running(sim!, 'web') === 3, 120_000, 'web running');
    expect(nodeClaims(sim).map((c) => c.metadata.name)).toEqual([claim]);
    const recorded = (nodeClaims(sim)[0]!.status as { providerID: string }).providerID;
    expect(recorded).not.toBe(orphans[0]!.providerID);
    expect(await b.metrics.value('karpenter_nodeclaims_created_total')).toBeUndefined();

    await sim.clock.advanceUntil(
      () => !liveInstances(sim!).get(claim)?.includes(orphans[0]!.providerID),
      GC_PERIOD_MS + ORPHAN_GRACE_MS,
      'the orphan terminated',
    );
    expect(sim.clock.now() - restartedAt).toBeLessThanOrEqual(10_000 + GC_PERIOD_MS);
    expect(liveInstances(sim).get(claim)).toEqual([recorded]);
    // The orphan's node (it had registered itself) goes with its instance.
    await sim.clock.advanceUntil(() => nodes(sim!).length === 1, 60_000, 'the orphan node removed');
    expect(leaks(sim)).toEqual([]);
    expect(drill.violations()).toEqual([]);
    drill.stop();
  });

  it('NodeClaim written, never launched: the restarted controller launches it exactly once', async () => {
    const called: string[] = [];
    sim = await startWith(dyingOnCreate(false, [], called));
    await sim.clock.advanceUntil(() => called.length === 1, 60_000, 'the launch attempt');
    const drill = watchDrill(sim, { maxUnboundMs: 120_000 });
    expect(sim.operator.alive()).toBe(false);
    await sim.startReplica({ name: 'restarted' });
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 3, 120_000, 'web running');
    expect(nodeClaims(sim).map((c) => c.metadata.name)).toEqual([called[0]]);
    expect(sim.provider.all()).toHaveLength(1);
    await sim.clock.advance(GC_PERIOD_MS);
    expect(leaks(sim)).toEqual([]);
    expect(drill.violations()).toEqual([]);
    drill.stop();
  });

  it('an instance that vanished while the controller was down: its Node and NodeClaim are cleaned up and the pods replaced', async () => {
    sim = await startWith((cp) => cp);
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 3, 180_000, 'web running');
    const [old] = nodeClaims(sim);
    sim.operator.kill();
    await sim.provider.delete((old!.status as { providerID: string }).providerID);
    await sim.clock.advance(60_000);
    const drill = watchDrill(sim, { maxUnboundMs: 150_000 });
    await sim.startReplica({ name: 'restarted' });
    await sim.clock.advanceUntil(
      () =>
        running(sim!, 'web') === 3 &&
        nodeClaims(sim!).length === 1 &&
        nodeClaims(sim!)[0]!.metadata.name !== old!.metadata.name,
      180_000,
      'web running on a new node',
    );
    await sim.clock.advance(30_000);
    expect(leaks(sim)).toEqual([]);
    expect(drill.violations()).toEqual([]);
    drill.stop();
  });
});
