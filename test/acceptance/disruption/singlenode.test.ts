// docs/karpenter/test-cases.md §6 (singlenodeconsolidation_test.go, 3 NodePools) and the engine half of §7
// (queue_test.go: the command timeout; the queue itself is the controller's).
import { beforeEach, describe, expect, it } from 'vitest';
import type { InstanceType, StateNode } from '../../../engine/domain/types.ts';
import { bySavingsRatio, candidateSet } from '../../../engine/disruption/candidates.ts';
import { commandTimeoutMs } from '../../../engine/disruption/command.ts';
import { interleave } from '../../../engine/disruption/candidates.ts';
import { pods, resetIds } from '../../fixtures/builders.ts';
import { fakeInstanceType, fakeOffering } from '../../fixtures/instancetypes.ts';
import { env, GiB, node, pool, reconcile } from './harness.ts';

beforeEach(() => resetIds());

const POOLS = ['pool-1', 'pool-2', 'pool-3'];
const priced = (price: number, name = `t-${price}`): InstanceType =>
  fakeInstanceType({
    name,
    resources: { cpu: 1000, memory: GiB, pods: 5 },
    offerings: [fakeOffering({ zone: 'test-zone-1', capacityType: 'on-demand', price })],
  });

/** Nine nodes, three per pool, each alone on its price so nothing can consolidate cheaper. */
function nine(podsOf: (i: number) => number = () => 1, priceOf: (i: number) => number = (i) => 1 + i) {
  const its = Array.from({ length: 9 }, (_, i) => priced(priceOf(i), `t-${i}`));
  const nodes: StateNode[] = its.map((it, i) =>
    node(it, { name: `n${i}`, nodePool: POOLS[i % 3], pods: pods(podsOf(i), { cpu: '600m' }) }),
  );
  return env({
    nodePools: POOLS.map((name) => pool({ name })),
    instanceTypes: new Map(POOLS.map((p) => [p, its])),
    nodes,
  });
}

describe('§6 Single-node consolidation', () => {
  it('should sort candidates by savings ratio descending', () => {
    const s = nine(
      () => 1,
      (i) => [3, 7, 1, 9, 5, 2, 8, 4, 6][i]!,
    );
    const sorted = bySavingsRatio(candidateSet(s, 'graceful').all);
    const ratios = sorted.map((c) => c.price / c.disruptionCost);
    expect(ratios).toEqual([...ratios].sort((a, b) => b - a));
    expect(sorted).toHaveLength(9);
  });
  it('should prioritize nodepools that timed out in previous runs', () => {
    const s = nine();
    const order = interleave(bySavingsRatio(candidateSet(s, 'graceful').all), ['pool-2']);
    expect(order[0]!.nodePool.name).toBe('pool-2');
    // then round-robin: one of each pool per rank
    expect(
      order
        .slice(0, 3)
        .map((c) => c.nodePool.name)
        .sort(),
    ).toEqual(POOLS);
  });
  it('should sort by savings ratio with different disruption costs', () => {
    const s = nine(
      (i) => [0, 4, 19][Math.floor(i / 3)]!,
      () => 2,
    );
    const costs = bySavingsRatio(candidateSet(s, 'graceful').all).map((c) => c.disruptionCost);
    expect(costs).toEqual([1, 1, 1, 5, 5, 5, 20, 20, 20]);
  });
  it('should reset timed-out nodepools when all nodepools are evaluated', async () => {
    // every type costs the same: nothing can be replaced more cheaply, so the pass reaches every pool
    const r = await reconcile(
      nine(
        () => 1,
        () => 1,
      ),
      { methods: ['single'], state: { consolidated: {}, previouslyUnseenPools: ['pool-2'] } },
    );
    expect(r.decision.kind).toBe('noop');
    expect(r.state.previouslyUnseenPools).toEqual([]);
  });
  it('should mark nodepools as timed out when timeout occurs', async () => {
    let t = 0;
    const r = await reconcile(nine(), { methods: ['single'], elapsedMs: () => (t += 200_000) });
    expect(r.decision.kind).toBe('noop');
    expect([...r.state.previouslyUnseenPools].sort()).toEqual(POOLS);
    expect(r.metrics.timeouts.single).toBe(1);
    expect(r.decision.explanations.every((e) => e.code === 'timeout')).toBe(true);
  });
  it('remembers only the pools it did not reach before the deadline', async () => {
    let t = 0;
    // each clock read advances 100 s: the first candidate is evaluated, the 3-minute deadline stops the second
    const r = await reconcile(
      nine(
        () => 1,
        () => 1,
      ),
      { methods: ['single'], elapsedMs: () => (t += 100_000) },
    );
    expect(r.metrics.timeouts.single).toBe(1);
    const first = r.decision.explanations.find((e) => e.code !== 'timeout')!;
    expect(first.code).toBe('no-cheaper-replacement');
    const firstPool = POOLS[Number(first.node.slice(1)) % 3]!;
    expect([...r.state.previouslyUnseenPools].sort()).toEqual(POOLS.filter((p) => p !== firstPool));
  });
});

describe('§7 Orchestration queue (engine half)', () => {
  it('should calculate correct timeout based on queue length', () => {
    const min = (m: number, s = 0) => (m * 60 + s) * 1000;
    expect([100, 4000, 10_000, 40_000, 80_000, 100_000].map(commandTimeoutMs)).toEqual([
      min(10),
      min(10),
      min(13, 20),
      min(53, 20),
      min(60),
      min(60),
    ]);
  });
  it('keeps a node out of new commands while it is in a queued command', async () => {
    const s = env({ nodes: [node(priced(1), { name: 'queued', pods: [] })] });
    const r = await reconcile(s, { queued: new Set([s.nodes[0]!.providerId!]) });
    expect(r.decision.kind).toBe('noop');
    expect(r.decision.explanations[0]!.message).toBe('candidate is already being disrupted');
  });
});
