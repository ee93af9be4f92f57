// Expiration drill against the simulator (docs/karpenter/disruption.md §5.1): a NodeClaim past its expireAfter is
// deleted even though the NodePool's budget allows no voluntary disruption at all; its pods move to a new
// node while the drain honours their PodDisruptionBudget, and none waits long for a node.
import { afterEach, describe, expect, it } from 'vitest';
import { watchInvariants, type InvariantChecker } from '../support/invariants.ts';
import {
  deployment,
  events,
  guide,
  nodeClaims,
  nodes,
  running,
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

describe('expiration drill', () => {
  it('replaces an expired node outside the budgets, one PDB-allowed eviction at a time', async () => {
    sim = await simulation();
    const pool = guide('guide-07.yaml')
      .replace('expireAfter: 168h', 'expireAfter: 10m')
      .replace("- nodes: '10%'", "- nodes: '0'");
    await sim.apply(pool);
    await sim.apply(deployment('web', 2));
    await sim.apply(
      JSON.stringify({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'web', namespace: 'default' },
        spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } },
      }),
    );
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 2, 180_000, 'web running');
    const [first] = nodeClaims(sim);
    const created = Date.parse(first!.metadata.creationTimestamp!);
    // Pods evicted from the expiring node wait for a new one to launch (about 45 s in the simulator).
    inv = watchInvariants(sim, { maxUnboundMs: 90_000 });

    await sim.clock.advanceUntil(
      () =>
        sim!.cluster.api.find('nodeclaims.karpenter.sh', undefined, first!.metadata.name!)?.metadata
          .deletionTimestamp !== undefined,
      15 * 60_000,
      'the first node expiring',
    );
    expect(sim.clock.now() - created).toBeGreaterThanOrEqual(10 * 60_000);
    expect(sim.clock.now() - created).toBeLessThan(10 * 60_000 + 5_000);
    await sim.clock.advanceUntil(
      () =>
        !sim!.cluster.api.find('nodeclaims.karpenter.sh', undefined, first!.metadata.name!) &&
        running(sim!, 'web') === 2,
      5 * 60_000,
      'the pods moved',
    );

    expect(nodes(sim)).toHaveLength(1);
    expect(nodeClaims(sim).map((c) => c.metadata.name)).not.toContain(first!.metadata.name);
    expect(
      await sim.operator.metrics.value('karpenter_nodeclaims_disrupted_total', {
        reason: 'expired',
        nodepool: 'production',
        termination_mode: 'graceful',
      }),
    ).toBe(1);
    expect(await sim.operator.metrics.value('karpenter_pods_disruption_initiated_total', { reason: 'expired' })).toBe(
      2,
    );
    // Expiration is not a voluntary disruption: no budget consulted, no DisruptionReason written.
    expect(inv.disruptions()).toEqual([]);
    expect(events(sim, 'Evicted').length).toBeGreaterThanOrEqual(2);
    expect(inv.violations()).toEqual([]);
  });
});
