// The disruption loop over the engine against the simulator: emptiness, validation, budgets.
import { afterEach, describe, expect, it } from 'vitest';
import { deployment, events, guide, nodes, running, scale, simulation, type Simulation } from '../../../test/support/simulation.ts';

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
    await sim.clock.advanceUntil(() => sim!.operator.controllers.disruption!.pending() !== undefined, 5 * 60_000, 'a command');
    const cmd = sim.operator.controllers.disruption!.pending()!;
    expect(cmd).toMatchObject({ kind: 'delete', reason: 'Empty', method: 'emptiness' });
    expect(nodes(sim).every((n) => !n.metadata.deletionTimestamp)).toBe(true);
    await sim.clock.advanceUntil(() => nodes(sim!).length === 0, 5 * 60_000, 'nodes gone');
    expect(events(sim, 'DisruptionTerminating').map((e) => e['message'])).toEqual(expect.arrayContaining(['Disrupting Node: Empty', 'Disrupting NodeClaim: Empty']));
    expect(await sim.operator.metrics.value('karpenter_voluntary_disruption_decisions_total', { decision: 'delete', reason: 'empty' })).toBe(1);
    expect(await sim.operator.metrics.value('karpenter_nodeclaims_disrupted_total', { reason: 'empty', nodepool: 'production' })).toBe(1);
  });

  it('drops the command when a pod lands on the node during validation', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-07.yaml'));
    await sim.apply(deployment('web', 1, { cpu: '100m', memory: '128Mi' }));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 1, 180_000, 'running');
    await scale(sim, 'web', 0);
    await sim.clock.advanceUntil(() => sim!.operator.controllers.disruption!.pending() !== undefined, 5 * 60_000, 'a command');
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
    expect(events(sim, 'DisruptionBlocked').map((e) => e['message'])).toContain('No allowed disruptions for disruption reason Empty due to blocking budget');
  });
});
