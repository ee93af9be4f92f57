// Failure drill: interruptions from the cloud, end to end on the simulator. A spot interruption warning
// deletes the NodeClaim (the node is cordoned and drained through the Eviction API, so the pods'
// PodDisruptionBudget holds) and the provisioner launches the replacement for the pods at once, on
// another offering than the interrupted one, well inside EC2's 2-minute warning. An instance that
// terminates under us is cleaned up at once and its pods replaced.
import { afterEach, describe, expect, it } from 'vitest';
import { leaks, liveInstances, watchDrill } from '../support/drills.ts';
import {
  deployment,
  events,
  guide,
  label,
  nodeClaims,
  nodes,
  running,
  simulation,
  type Simulation,
} from '../support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const pdb = (minAvailable: number): string =>
  JSON.stringify({
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'web', namespace: 'default' },
    spec: { minAvailable, selector: { matchLabels: { app: 'web' } } },
  });

/** Boot to ready for a replacement in the simulator: launch 2 s + registration 30 s + Ready 10 s, plus batching and pod start. */
const REPLACEMENT_MS = 60_000;

async function spotCluster(): Promise<Simulation> {
  const s = await simulation();
  await s.apply(guide('guide-03.yaml'));
  await s.apply(guide('guide-05.yaml'));
  await s.apply(deployment('web', 3));
  await s.apply(pdb(2));
  await s.clock.advanceUntil(() => running(s, 'web') === 3, 180_000, 'web running');
  return s;
}

describe('interruption drills', () => {
  it('replaces a spot node on an interruption warning: replacement ready before the old node goes, the PDB held, a different offering', async () => {
    sim = await spotCluster();
    const [old] = nodeClaims(sim);
    const oldType = label(old!, 'node.kubernetes.io/instance-type')!;
    const oldZone = label(old!, 'topology.kubernetes.io/zone')!;
    const oldNode = (old!.status as { nodeName: string }).nodeName;
    const drill = watchDrill(sim, { maxUnboundMs: REPLACEMENT_MS });
    const times: Record<string, number> = {};
    const stop = sim.cluster.store.subscribe((e) => {
      const now = sim!.clock.now();
      if (e.resource === 'nodeclaims.karpenter.sh' && e.type === 'ADDED') times['replacementCreated'] ??= now;
      if (
        e.resource === 'nodes' &&
        e.object.metadata.name !== oldNode &&
        (e.object.status as { conditions?: Array<{ type: string; status: string }> }).conditions?.some(
          (c) => c.type === 'Ready' && c.status === 'True',
        )
      )
        times['replacementReady'] ??= now;
      if (e.resource === 'nodes' && e.type === 'DELETED' && e.object.metadata.name === oldNode)
        times['oldNodeGone'] = now;
    });
    const t0 = sim.clock.now();
    sim.provider.interrupt((old!.status as { providerID: string }).providerID, 'spotInterruption');
    await sim.clock.advanceUntil(
      () => times['oldNodeGone'] !== undefined && running(sim!, 'web') === 3,
      180_000,
      'old node gone, web running',
    );
    stop();

    // The replacement was asked for in the next batch window, and came up before the old node went,
    // which was before EC2 would have reclaimed it (2 minutes).
    expect(times['replacementCreated']! - t0).toBeLessThanOrEqual(11_000);
    expect(times['replacementReady']!).toBeLessThan(times['oldNodeGone']!);
    expect(times['oldNodeGone']! - t0).toBeLessThan(120_000);
    const [replacement, ...rest] = nodeClaims(sim);
    expect(rest).toEqual([]);
    expect(replacement!.metadata.name).not.toBe(old!.metadata.name);
    expect(label(replacement!, 'karpenter.sh/capacity-type')).toBe('spot');
    expect(
      `${label(replacement!, 'node.kubernetes.io/instance-type')}/${label(replacement!, 'topology.kubernetes.io/zone')}`,
    ).not.toBe(`${oldType}/${oldZone}`);
    expect(events(sim, 'SpotInterrupted').length).toBeGreaterThanOrEqual(2 + 3);
    expect(events(sim, 'TerminatingOnInterruption')).toHaveLength(2);
    // Each pod was evicted once, through the Eviction API (the PDB was asked each time).
    const evictions = sim.cluster.server.requests
      .find({ subresource: 'eviction', method: 'POST' })
      .filter((r) => r.status < 300);
    expect(new Set(evictions.map((r) => r.name)).size).toBe(evictions.length);
    expect(evictions).toHaveLength(3);

    expect(drill.violations()).toEqual([]);
    expect(drill.longestUnboundMs()).toBeLessThanOrEqual(REPLACEMENT_MS);
    await sim.clock.advance(10_000);
    expect(leaks(sim)).toEqual([]);
    drill.stop();
  });

  it('cleans up after an instance that terminated under it and replaces its pods', async () => {
    sim = await spotCluster();
    const [old] = nodeClaims(sim);
    const drill = watchDrill(sim, { maxUnboundMs: REPLACEMENT_MS + 30_000, pdb: false });
    sim.provider.interrupt((old!.status as { providerID: string }).providerID, 'stateChange', { state: 'terminated' });
    await sim.settle();
    // The node is NotReady and its instance gone: released without a drain.
    expect(sim.cluster.store.get('nodeclaims.karpenter.sh', '', old!.metadata.name!)).toBeUndefined();
    expect(events(sim, 'InstanceTerminating')).toHaveLength(2);
    await sim.clock.advanceUntil(
      () => running(sim!, 'web') === 3 && nodes(sim!).length === 1,
      180_000,
      'web running again',
    );
    expect(nodeClaims(sim)).toHaveLength(1);
    expect([...liveInstances(sim).values()].flat()).toHaveLength(1);
    expect(drill.violations()).toEqual([]);
    expect(leaks(sim)).toEqual([]);
    drill.stop();
  });
});
