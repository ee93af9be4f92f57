// The orchestration queue's failure paths against the simulator: a replacement that is deleted before it
// initializes, and one that never initializes (the command times out). Either way the candidate keeps
// running untouched: no taint, no DisruptionReason, no mark, and the replacement is gone.
import { afterEach, describe, expect, it } from 'vitest';
import {
  condition,
  deployment,
  events,
  guide,
  nodeClaims,
  nodes,
  running,
  scale,
  simulation,
  taints,
  type Simulation,
} from '../../../test/support/environment.ts';
import { watchInvariants } from '../../../test/support/invariants.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const disrupted = (s: Simulation) => nodes(s).filter((n) => taints(n).some((t) => t.key === 'karpenter.sh/disrupted'));
const withReason = (s: Simulation) => nodeClaims(s).filter((c) => condition(c, 'DisruptionReason')?.status === 'True');

describe('disruption.queue', () => {
  it('fails a command whose replacement is deleted before it initializes, and undoes every mark', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-07.yaml').replace('consolidateAfter: 2m', 'consolidateAfter: 30s'));
    // Fifteen 1-CPU pods: one c6a.4xlarge, which three pods later leave underused.
    await sim.apply(deployment('web', 15, { cpu: '1', memory: '1Gi' }));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 15, 180_000, 'web running');
    const inv = watchInvariants(sim, { maxUnboundMs: 30_000 });
    const [original] = nodeClaims(sim);
    await scale(sim, 'web', 3);
    const loop = sim.operator.controllers.disruption!;
    await sim.clock.advanceUntil(() => loop.pending()?.kind === 'replace', 5 * 60_000, 'a replace decision');
    // No capacity anywhere from now on: the replacement's launch fails and the lifecycle deletes it.
    sim.provider.blockCapacity({});
    await sim.clock.advanceUntil(() => events(sim!, 'DisruptionFailed').length > 0, 5 * 60_000, 'the command failed');

    expect(events(sim, 'InsufficientCapacityError').length).toBeGreaterThan(0);
    expect(String(events(sim, 'DisruptionFailed')[0]!['message'])).toMatch(
      /replacement .* (was deleted|is being deleted)/,
    );
    expect(loop.queue.commands()).toEqual([]);
    expect(disrupted(sim)).toEqual([]);
    expect(withReason(sim)).toEqual([]);
    expect(nodeClaims(sim).map((c) => c.metadata.name)).toEqual([original!.metadata.name]);
    expect(sim.operator.cluster.isMarkedForDeletion((original!.status as { providerID: string }).providerID)).toBe(
      false,
    );
    expect(
      await sim.operator.metrics.value('karpenter_voluntary_disruption_queue_failures_total', {
        decision: 'replace',
        reason: 'underutilized',
      }),
    ).toBe(1);
    expect(running(sim, 'web')).toBe(3);
    expect(inv.violations()).toEqual([]);
    inv.stop();
  });

  it('fails a command whose replacement never initializes once it times out, and deletes the replacement', async () => {
    // Startup taints stay on for a day: whatever daemon owns them never gets round to it.
    sim = await simulation({ kubeletDelays: { startupTaintMs: 24 * 3_600_000 } });
    await sim.apply(guide('guide-07.yaml'));
    await sim.apply(deployment('web', 2, { cpu: '1', memory: '1Gi' }));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 2, 180_000, 'web running');
    const inv = watchInvariants(sim, { maxUnboundMs: 30_000 });
    const [original] = nodeClaims(sim);
    // A startup taint nothing removes: the template changes (drift), and no new node ever initializes.
    await sim.apply(
      guide('guide-07.yaml').replace(
        '    spec:\n      requirements:',
        '    spec:\n      startupTaints:\n        - key: example.com/never-ready\n          effect: NoSchedule\n      requirements:',
      ),
    );
    const loop = sim.operator.controllers.disruption!;
    await sim.clock.advanceUntil(() => loop.queue.commands().length === 1, 5 * 60_000, 'a drift command');
    const replacement = loop.queue.commands()[0]!.replacements[0]!.name;
    expect(disrupted(sim)).toHaveLength(1);
    expect(withReason(sim).map((c) => condition(c, 'DisruptionReason')?.reason)).toEqual(['Drifted']);
    await sim.clock.advanceUntil(
      () => events(sim!, 'DisruptionFailed').length > 0,
      15 * 60_000,
      'the command timed out',
    );

    expect(String(events(sim, 'DisruptionFailed')[0]!['message'])).toMatch(/timed out after 600 s/);
    await sim.settle();
    const left = sim.cluster.api.find('nodeclaims.karpenter.sh', undefined, replacement);
    expect(left === undefined || left.metadata.deletionTimestamp !== undefined).toBe(true);
    expect(disrupted(sim).filter((n) => !n.metadata.deletionTimestamp)).toEqual([]);
    expect(
      condition(
        sim.cluster.api.get('nodeclaims.karpenter.sh', undefined, original!.metadata.name!),
        'DisruptionReason',
      ),
    ).toBeUndefined();
    expect(
      await sim.operator.metrics.value('karpenter_voluntary_disruption_queue_failures_total', {
        decision: 'replace',
        reason: 'drifted',
      }),
    ).toBe(1);
    expect(running(sim, 'web')).toBe(2);
    expect(inv.violations()).toEqual([]);
    inv.stop();
  });
});
