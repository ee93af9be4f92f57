// The disruption loop over the engine against the simulator: emptiness, validation, budgets.
import { afterEach, describe, expect, it } from 'vitest';
import type { ClusterEngine, Engine } from '../../../engine/index.ts';
import { simulationEngine } from '../../../sim/engine.ts';
import {
  deployment,
  events,
  guide,
  nodes,
  pods,
  running,
  scale,
  simulation,
  type Simulation,
} from '../../../test/support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('disruption loop (emptiness)', () => {
  it('removes an empty node after consolidateAfter, the 10 s poll and the 15 s validation', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-07.yaml'));
    await sim.apply(deployment('web', 2));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 2, 180_000, 'running');
    await scale(sim, 'web', 0);
    await sim.clock.advanceUntil(
      () => sim!.operator.controllers.disruption!.pending() !== undefined,
      5 * 60_000,
      'a command',
    );
    const cmd = sim.operator.controllers.disruption!.pending()!;
    expect(cmd).toMatchObject({ kind: 'delete', reason: 'Empty', method: 'emptiness' });
    expect(nodes(sim).every((n) => !n.metadata.deletionTimestamp)).toBe(true);
    await sim.clock.advanceUntil(() => nodes(sim!).length === 0, 5 * 60_000, 'nodes gone');
    expect(events(sim, 'DisruptionTerminating').map((e) => e['message'])).toEqual(
      expect.arrayContaining(['Disrupting Node: Empty', 'Disrupting NodeClaim: Empty']),
    );
    expect(
      await sim.operator.metrics.value('karpenter_voluntary_disruption_decisions_total', {
        decision: 'delete',
        reason: 'empty',
      }),
    ).toBe(1);
    expect(
      await sim.operator.metrics.value('karpenter_nodeclaims_disrupted_total', {
        reason: 'empty',
        nodepool: 'production',
      }),
    ).toBe(1);
  });

  it('drops the command when a pod lands on the node during validation', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-07.yaml'));
    await sim.apply(deployment('web', 1, { cpu: '100m', memory: '128Mi' }));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 1, 180_000, 'running');
    await scale(sim, 'web', 0);
    await sim.clock.advanceUntil(
      () => sim!.operator.controllers.disruption!.pending() !== undefined,
      5 * 60_000,
      'a command',
    );
    await scale(sim, 'web', 1);
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 1, 60_000, 'running again');
    await sim.clock.advance(60_000);
    expect(nodes(sim)).toHaveLength(1);
    expect(nodes(sim)[0]!.metadata.deletionTimestamp).toBeUndefined();
  });

  it('does not remove an empty node while a budget allows no disruption', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-07.yaml').replace("- nodes: '10%'", "- nodes: '0'"));
    await sim.apply(deployment('web', 1));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 1, 180_000, 'running');
    await scale(sim, 'web', 0);
    await sim.clock.advance(10 * 60_000);
    expect(nodes(sim)).toHaveLength(1);
    expect(events(sim, 'DisruptionBlocked').map((e) => e['message'])).toContain(
      'No allowed disruptions for disruption reason Empty due to blocking budget',
    );
  });

  it("publishes why a node stays: Unconsolidatable with the engine's reason, do-not-disrupt on a pod, then on the node", async () => {
    sim = await simulation();
    await sim.apply(guide('guide-07.yaml').replace('consolidateAfter: 2m', 'consolidateAfter: 30s'));
    await sim.apply(deployment('web', 3));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 3, 180_000, 'running');
    const node = nodes(sim)[0]!.metadata.name!;
    const messages = (reason: string, kind: string) =>
      events(sim!, reason)
        .filter((e) => (e['involvedObject'] as { kind: string }).kind === kind)
        .map((e) => String(e['message']));

    // Three 1-CPU pods on a c6a.xlarge: no cheaper node holds them.
    await sim.clock.advanceUntil(() => messages('Unconsolidatable', 'Node').length > 0, 5 * 60_000, 'Unconsolidatable');
    expect(messages('Unconsolidatable', 'Node')).toEqual(["Can't replace with a cheaper node"]);
    expect(messages('Unconsolidatable', 'NodeClaim')).toEqual(["Can't replace with a cheaper node"]);

    const pod = pods(sim, 'web')[0]!;
    sim.cluster.api.patch('pods', 'default', pod.metadata.name!, 'merge', {
      metadata: { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } },
    });
    // DisruptionBlocked is deduped on the Node alone for 2 min (Karpenter's events.Blocked): the node's earlier
    // "isn't initialized" holds the new reason back until then; the loop keeps looking meanwhile.
    await sim.clock.advance(2 * 60_000);
    expect(messages('DisruptionBlocked', 'Node')).toContain(
      `Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/${pod.metadata.name})`,
    );

    sim.cluster.api.patch('nodes', undefined, node, 'merge', {
      metadata: { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } },
    });
    await scale(sim, 'web', 0);
    await sim.clock.advance(5 * 60_000);
    expect(messages('DisruptionBlocked', 'Node')).toContain(
      'Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation',
    );
    // Even empty, the annotated node stays.
    expect(nodes(sim)).toHaveLength(1);
    expect(await sim.operator.metrics.value('karpenter_voluntary_disruption_decisions_total')).toBeUndefined();
  });
});

describe('disruption loop: a decision cut short by the clock', () => {
  /** The simulation's engine, with every disruption decision marked as the engine marks one a safety net cut short. */
  function truncatingEngine(): Engine {
    const base = simulationEngine();
    const truncate = (c: ClusterEngine): ClusterEngine => ({
      ...c,
      name: c.name,
      lastShipped: () => c.lastShipped(),
      close: () => c.close(),
      provision: (s, pending, o) => c.provision(s, pending, o),
      disrupt: async (s, o) => {
        const r = await c.disrupt(s, o);
        return { ...r, decision: { ...r.decision, truncated: true as const } };
      },
      validate: (s, d, o) => c.validate(s, d, o),
      explainNode: (s, n, o) => c.explainNode(s, n, o),
      lowerBound: (s, p, o) => c.lowerBound(s, p, o),
    });
    return {
      ...base,
      cluster: (name: string) => truncate(base.cluster(name)),
      close: () => Promise.resolve(),
    } as Engine;
  }

  const truncatedTotal = (s: Simulation) =>
    s.operator.metrics.value('karpenter_ts_solver_truncated_total', { controller: 'disruption' });

  it('counts it in karpenter_ts_solver_truncated_total and still carries the command out', async () => {
    sim = await simulation({ engine: truncatingEngine() });
    await sim.apply(guide('guide-07.yaml'));
    await sim.apply(deployment('web', 2));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 2, 180_000, 'running');
    await scale(sim, 'web', 0);
    await sim.clock.advanceUntil(() => nodes(sim!).length === 0, 5 * 60_000, 'nodes gone');
    // Every pass counts one: the noop passes before consolidateAfter, and the one that decided.
    expect(await truncatedTotal(sim)).toBeGreaterThanOrEqual(1);
    expect(sim.operator.controllers.disruption!.lastDecision()).toMatchObject({ truncated: true });
  });

  it('counts nothing for decisions the work budgets finished', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-07.yaml'));
    await sim.apply(deployment('web', 2));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 2, 180_000, 'running');
    await scale(sim, 'web', 0);
    await sim.clock.advanceUntil(() => nodes(sim!).length === 0, 5 * 60_000, 'nodes gone');
    expect(await truncatedTotal(sim)).toBeFalsy();
  });
});
