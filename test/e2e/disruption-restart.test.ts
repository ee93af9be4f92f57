// The controller killed in the middle of a disruption command (docs/karpenter/disruption.md §1.2 step 4, §A.4): the
// candidate is tainted and has DisruptionReason, its replacement is launching, and the process dies with
// the orchestration queue in its memory. The next controller removes the marks on its first pass (the
// taint is the only state that survived), no pod is lost, and the cluster still ends up consolidated.
import { afterEach, describe, expect, it } from 'vitest';
import type { KObject } from '../../sim/apiserver/index.ts';
import { clusterCost } from '../../sim/view.ts';
import { watchInvariants, type InvariantChecker } from '../support/invariants.ts';
import { restartController, type Restarted } from '../support/restart.ts';
import {
  condition,
  deployment,
  guide,
  nodeClaims,
  nodes,
  running,
  scale,
  simulation,
  taints,
  type Simulation,
} from '../support/environment.ts';

let sim: Simulation | undefined;
let second: Restarted | undefined;
let inv: InvariantChecker | undefined;
afterEach(async () => {
  inv?.stop();
  inv = undefined;
  await second?.stop();
  second = undefined;
  await sim?.close();
  sim = undefined;
});

const tainted = (n: KObject | undefined): boolean =>
  taints(n ?? { metadata: {} }).some((t) => t.key === 'karpenter.sh/disrupted');

describe('controller killed during a disruption command', () => {
  it('cleans the taint and the DisruptionReason left behind, loses no pod, and consolidates afterwards', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-07.yaml').replace('consolidateAfter: 2m', 'consolidateAfter: 30s'));
    // Fifteen 1-CPU pods: one c6a.4xlarge (ten would be provisioned as a 2xlarge and an xlarge already).
    await sim.apply(deployment('web', 15));
    await sim.apply(
      JSON.stringify({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'web', namespace: 'default' },
        spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
      }),
    );
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 15, 180_000, 'web running');
    inv = watchInvariants(sim, { maxUnboundMs: 30_000 });
    await scale(sim, 'web', 3);
    const queue = sim.operator.controllers.disruption!.queue;
    await sim.clock.advanceUntil(() => queue.commands().length === 1, 5 * 60_000, 'a command in the queue');
    const cmd = queue.commands()[0]!;
    const candidate = cmd.candidates[0]!;
    const node = () => sim!.cluster.api.find('nodes', undefined, candidate.name);
    const claim = () => sim!.cluster.api.find('nodeclaims.karpenter.sh', undefined, candidate.nodeClaimName!);
    expect(tainted(node())).toBe(true);
    expect(condition(claim()!, 'DisruptionReason')?.reason).toBe('Underutilized');
    const orphan = cmd.replacements[0]!.name;
    expect(
      condition(sim.cluster.api.get('nodeclaims.karpenter.sh', undefined, orphan), 'Initialized')?.status,
    ).not.toBe('True');

    // Killed: the queue and every in-memory mark go with it. A new controller starts.
    second = await restartController(sim);
    // Its first pass once synced (the 1 s requeue while the replacement's launch is recorded).
    await sim.clock.advance(2_000);
    expect(tainted(node())).toBe(false);
    expect(condition(claim()!, 'DisruptionReason')).toBeUndefined();
    expect(second.operator.cluster.isMarkedForDeletion(candidate.providerId!)).toBe(false);
    expect(claim()!.metadata.deletionTimestamp).toBeUndefined();

    // The half-finished replacement comes up; the new controller consolidates from there: one small node.
    await sim.clock.advanceUntil(
      () => nodes(sim!).length === 1 && !node() && running(sim!, 'web') === 3,
      15 * 60_000,
      'consolidated',
    );
    expect(clusterCost(sim)).toBeLessThan(0.2);
    expect(nodeClaims(sim).every((c) => condition(c, 'DisruptionReason') === undefined)).toBe(true);
    expect(nodes(sim).some(tainted)).toBe(false);
    // No duplicate capacity was left behind: what runs is what the pods need.
    expect(sim.provider.all().filter((i) => i.instance.state !== 'terminated')).toHaveLength(1);
    expect(inv.violations()).toEqual([]);
  });
});
