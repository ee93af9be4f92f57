// Drift and budget drills against the simulator (docs/karpenter/disruption.md §3, §4), watched by the invariant
// checker: a template change rolls the NodePool one node at a time under a budget of 1, and a scheduled
// budget of 0 keeps an empty node until its window closes.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../sim/clock.ts';
import { watchInvariants, type InvariantChecker } from '../support/invariants.ts';
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
  type Simulation,
} from '../support/environment.ts';

let sim: Simulation | undefined;
let inv: InvariantChecker | undefined;
afterEach(async () => {
  inv?.stop();
  inv = undefined;
  await sim?.close();
  sim = undefined;
});

const story = (file: string): string => readFileSync(new URL(`../../scenarios/story/${file}`, import.meta.url), 'utf8');
const metric = (s: Simulation, name: string, labels: Record<string, string>) => s.operator.metrics.value(name, labels);

describe('drift and budget drills', () => {
  it('replaces every drifted node of a NodePool one at a time with a budget of 1, honouring the PDB', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-07.yaml'));
    await sim.apply(story('web.yaml'));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 3, 180_000, 'web running');
    const before = new Set(nodeClaims(sim).map((c) => c.metadata.name));
    expect(before.size).toBe(3);
    inv = watchInvariants(sim, { maxUnboundMs: 30_000 });

    // production-v2: the template gains a label (release=v2) and the budget is 1 node.
    await sim.apply(story('production-v2.yaml'));
    expect(nodeClaims(sim).filter((c) => condition(c, 'Drifted')?.reason === 'NodePoolDrifted')).toHaveLength(3);
    await sim.clock.advanceUntil(
      () => nodeClaims(sim!).every((c) => !before.has(c.metadata.name)) && running(sim!, 'web') === 3,
      20 * 60_000,
      'every node replaced',
    );

    expect(nodes(sim)).toHaveLength(3);
    expect(nodes(sim).every((n) => n.metadata.labels?.['release'] === 'v2')).toBe(true);
    expect(nodeClaims(sim).some((c) => condition(c, 'Drifted'))).toBe(false);
    // Three drift commands, each started while no other node of the pool was disrupting.
    expect(inv.disruptions().map((d) => [d.reason, d.disrupting, d.allowed])).toEqual([
      ['Drifted', 1, 1],
      ['Drifted', 1, 1],
      ['Drifted', 1, 1],
    ]);
    expect(
      await metric(sim, 'karpenter_voluntary_disruption_decisions_total', { decision: 'replace', reason: 'drifted' }),
    ).toBe(3);
    expect(await metric(sim, 'karpenter_nodeclaims_created_total', { reason: 'drifted' })).toBe(3);
    expect(await metric(sim, 'karpenter_nodeclaims_created_total', { reason: 'provisioned' })).toBe(3);
    expect(
      await metric(sim, 'karpenter_nodeclaims_disrupted_total', { reason: 'drifted', nodepool: 'production' }),
    ).toBe(3);
    expect(
      await metric(sim, 'karpenter_nodepools_allowed_disruptions', { nodepool: 'production', reason: 'drifted' }),
    ).toBe(1);
    expect(inv.violations()).toEqual([]);
  });

  it('keeps an empty node while a scheduled budget of 0 is active, and removes it when the window closes', async () => {
    // 00:55 UTC; the NodePool allows no disruption from 01:00 for 20 minutes.
    sim = await simulation({ clock: manualClock(Date.UTC(2025, 0, 1, 0, 55)) });
    const frozen = guide('guide-07.yaml')
      .replace('consolidateAfter: 2m', 'consolidateAfter: 30s')
      .replace("schedule: '0 2 * * *'\n        duration: 1h", "schedule: '0 1 * * *'\n        duration: 20m");
    await sim.apply(frozen);
    await sim.apply(deployment('web', 1));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 1, 180_000, 'web running');
    inv = watchInvariants(sim);
    await sim.clock.advanceUntil(() => sim!.clock.now() >= Date.UTC(2025, 0, 1, 1, 0, 30), 10 * 60_000, '01:00:30');
    await scale(sim, 'web', 0);

    await sim.clock.advanceUntil(() => sim!.clock.now() >= Date.UTC(2025, 0, 1, 1, 19, 50), 30 * 60_000, '01:19:50');
    expect(nodes(sim)).toHaveLength(1);
    expect(nodeClaims(sim).every((c) => condition(c, 'Consolidatable')?.status === 'True')).toBe(true);
    expect(events(sim, 'DisruptionBlocked').map((e) => e['message'])).toContain(
      'No allowed disruptions for disruption reason Empty due to blocking budget',
    );
    expect(
      await metric(sim, 'karpenter_nodepools_allowed_disruptions', { nodepool: 'production', reason: 'empty' }),
    ).toBe(0);

    await sim.clock.advanceUntil(() => nodes(sim!).length === 0, 5 * 60_000, 'the node gone');
    expect(sim.clock.now()).toBeGreaterThanOrEqual(Date.UTC(2025, 0, 1, 1, 20));
    expect(sim.clock.now()).toBeLessThan(Date.UTC(2025, 0, 1, 1, 22));
    expect(inv.disruptions()).toMatchObject([{ reason: 'Empty', allowed: 1 }]);
    expect(inv.violations()).toEqual([]);
  });

  it('replaces a drifted node whose pod a PDB pins when the NodePool has a terminationGracePeriod, deleting the pod at the deadline', async () => {
    sim = await simulation();
    const withTgp = (labels: string) =>
      guide('guide-07.yaml')
        .replace('      expireAfter: 168h', '      expireAfter: 168h\n      terminationGracePeriod: 2m')
        .replace('        managed-by: karpenter', `        managed-by: karpenter${labels}`);
    await sim.apply(withTgp(''));
    await sim.apply(deployment('db', 1));
    await sim.apply(
      JSON.stringify({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'db', namespace: 'default' },
        spec: { minAvailable: 1, selector: { matchLabels: { app: 'db' } } },
      }),
    );
    await sim.clock.advanceUntil(() => running(sim!, 'db') === 1, 180_000, 'db running');
    const [old] = nodeClaims(sim);
    // The replacement is up before the drain, the pod waits for the deadline: at most 2 min without a node.
    inv = watchInvariants(sim, { maxUnboundMs: 30_000 });

    await sim.apply(withTgp('\n        release: v2'));
    await sim.clock.advanceUntil(
      () =>
        !sim!.cluster.api.find('nodeclaims.karpenter.sh', undefined, old!.metadata.name!) && running(sim!, 'db') === 1,
      10 * 60_000,
      'the drifted node gone',
    );

    // Eviction was refused (PDB) until the terminationGracePeriod deadline, then the pod was deleted.
    expect(events(sim, 'FailedDraining').some((e) => /violates a PDB/.test(String(e['message'])))).toBe(true);
    expect(events(sim, 'TerminationGracePeriodExpiring').length).toBeGreaterThan(0);
    expect(events(sim, 'Disrupted').map((e) => String(e['message']))).toContainEqual(
      expect.stringMatching(/bypasses the PDB/),
    );
    expect(nodes(sim).every((n) => n.metadata.labels?.['release'] === 'v2')).toBe(true);
    expect(
      await metric(sim, 'karpenter_nodeclaims_disrupted_total', { reason: 'drifted', termination_mode: 'eventual' }),
    ).toBe(1);
    expect(inv.violations()).toEqual([]);
  });
});
