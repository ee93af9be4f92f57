// docs/karpenter/test-cases.md §9.4 (balanced_integration_test.go): a Balanced NodePool, consolidateAfter 0s. The
// scoring numbers of §9.1-§9.3 are unit-tested beside the code (engine/disruption/balanced.test.ts).
import { beforeEach, describe, expect, it } from 'vitest';
import type { Command, Decision } from '../../../engine/disruption/types.ts';
import { pod, pods, resetIds } from '../../fixtures/builders.ts';
import { leastExpensiveInstance, mostExpensiveInstance } from '../../fixtures/instancetypes.ts';
import { bigNode, env, execute, managedNodes, pool, reconcile, types } from './harness.ts';

beforeEach(() => resetIds());

const balanced = (o: Parameters<typeof pool>[0] = {}) => pool({ consolidationPolicy: 'Balanced', ...o });
const cmd = (d: Decision): Command & { approvals?: Readonly<Record<string, string>> } => {
  if (d.kind === 'noop')
    throw new Error(`expected a command: ${d.explanations.map((e) => `${e.node}: ${e.message}`).join('; ')}`);
  return d;
};
const cheap = () => leastExpensiveInstance(types());

describe('§9.4 Balanced integration', () => {
  it('Single-Node: should approve replacing an oversized node', async () => {
    const s = env({ nodePools: [balanced()], nodes: [bigNode({ name: 'big', pods: [pod({ cpu: '500m' })] })] });
    const r = await reconcile(s);
    const c = cmd(r.decision);
    expect(c).toMatchObject({ kind: 'replace', method: 'single' });
    expect(c.approvals?.['default']).toMatch(/>= threshold 0\.50 \(k: 2,/);
    expect(c.replacements[0]!.instanceTypes.map((o) => o.name)).not.toContain(mostExpensiveInstance(types()).name);
    // consolidation_moves_total / consolidation_score: the scored single-node move, approved with its score.
    expect(r.metrics.consolidationMoves).toEqual([
      {
        decision: 'approved',
        nodePool: 'default',
        policy: 'Balanced',
        score: { value: expect.any(Number), decision: 'approved' },
      },
    ]);
    expect(r.metrics.consolidationMoves![0]!.score!.value).toBeGreaterThanOrEqual(0.5);
  });
  it('Single-Node: should reject replacing a well-packed node', async () => {
    const s = env({
      nodePools: [balanced()],
      nodes: [bigNode({ it: cheap(), name: 'packed', pods: pods(8, { cpu: '3.5' }) })],
    });
    const r = await reconcile(s);
    expect(r.decision.kind).toBe('noop');
    // Never scored: moving its pods would take two nodes, which consolidation does not do.
    expect(r.metrics.consolidationMoves).toBeUndefined();
  });
  it('Multi-Node: a move Balanced scoring turns down is counted once as rejected, with its score; single-node still finds one', async () => {
    // Replacing both nodes by one saves little of the pool's cost for all of its disruption (score < 0.5); the
    // binary search's rejection is counted once, not per step. Deleting the big node alone then scores well.
    const big = bigNode({ name: 'big', pods: pods(4, { cpu: '7', memory: '20Gi' }) });
    const small = bigNode({ it: cheap(), name: 'small', pods: pods(1, { cpu: '100m' }) });
    const r = await reconcile(env({ nodePools: [balanced()], nodes: [big, small] }));
    const c = cmd(r.decision);
    expect(c).toMatchObject({ method: 'single', kind: 'delete' });
    const [multi, single] = r.metrics.consolidationMoves!;
    expect(multi).toMatchObject({
      decision: 'rejected',
      nodePool: 'default',
      policy: 'Balanced',
      score: { decision: 'rejected' },
    });
    expect(multi!.score!.value).toBeLessThan(0.5);
    expect(single).toMatchObject({ decision: 'approved', score: { decision: 'approved' } });
    expect(r.metrics.consolidationMoves).toHaveLength(2);
  });
  it('Multi-Node: should approve consolidating 3 underutilized nodes', async () => {
    const s = env({
      nodePools: [balanced()],
      nodes: [0, 1, 2].map((i) => bigNode({ name: `n${i}`, pods: [pod({ cpu: '500m' })] })),
    });
    const r = await reconcile(s);
    const c = cmd(r.decision);
    expect(c.method).toBe('multi');
    expect(c.candidates.length).toBeGreaterThanOrEqual(2);
    expect(c.approvals?.['default']).toContain('k: 2');
    expect(managedNodes(execute(s, r.decision)).length).toBeLessThan(3);
    // Multi-node counts the chosen move once per pool, not every step of its binary search.
    expect(r.metrics.consolidationMoves).toEqual([
      {
        decision: 'approved',
        nodePool: 'default',
        policy: 'Balanced',
        score: { value: expect.any(Number), decision: 'approved' },
      },
    ]);
  });
  it('Budgets: should produce no commands with a 0% budget', async () => {
    const s = env({
      nodePools: [balanced({ budgets: [{ nodes: '0%' }] })],
      nodes: [0, 1, 2].map((i) => bigNode({ name: `n${i}`, pods: [pod({ cpu: '500m' })] })),
    });
    const r = await reconcile(s);
    expect(r.decision.kind).toBe('noop');
    expect(r.decision.explanations.every((e) => e.code === 'budget')).toBe(true);
  });
  it('Priority Ordering: an empty node goes before an underutilized one under budget 1', async () => {
    const s = env({
      nodePools: [balanced({ budgets: [{ nodes: '1' }] })],
      nodes: [bigNode({ name: 'busy', pods: [pod({ cpu: '500m' })] }), bigNode({ name: 'empty' })],
    });
    const c = cmd((await reconcile(s)).decision);
    expect(c.candidates.map((x) => x.name)).toEqual(['empty']);
  });
  it('Decision and Savings: delete when pods fit on existing nodes', async () => {
    const s = env({
      nodePools: [balanced()],
      nodes: [bigNode({ it: cheap(), name: 'a', pods: pods(2) }), bigNode({ it: cheap(), name: 'b', pods: pods(1) })],
    });
    const c = cmd((await reconcile(s)).decision);
    expect(c.kind).toBe('delete');
    expect(c.savingsPerHour).toBeCloseTo(cheap().offerings[0]!.price, 9);
  });
  it('Decision and Savings: replace when a new cheaper node is needed', async () => {
    const c = cmd(
      (await reconcile(env({ nodePools: [balanced()], nodes: [bigNode({ pods: [pod({ cpu: '500m' })] })] }))).decision,
    );
    expect(c.kind).toBe('replace');
    expect(c.savingsPerHour).toBeGreaterThan(0);
    expect(c.savingsPerHour).toBeLessThan(mostExpensiveInstance(types()).offerings[0]!.price);
  });
  it('Ratio Sort in Multi-Node: the highest-ratio node leads the command', async () => {
    const a = bigNode({ it: cheap(), name: 'A', pods: pods(3) });
    const b = bigNode({ name: 'B', pods: pods(1) });
    const c = bigNode({ name: 'C', pods: pods(4) });
    const d = cmd((await reconcile(env({ nodePools: [balanced()], nodes: [a, b, c] }))).decision);
    // ratios: B 20.14/2 > C 20.14/5 > A 0.21/4. B and C move onto A; all three would need two new nodes
    // (the fake types hold 5 pods), which consolidation does not do.
    expect(d.candidates.map((x) => x.name)).toEqual(['B', 'C']);
    expect(d.kind).toBe('delete');
  });
  it('Mixed-Policy NodePools: both pools are consolidated, the Balanced one approves with k: 2', async () => {
    const s = env({
      nodePools: [balanced({ name: 'balanced' }), pool({ name: 'default' })],
      instanceTypes: new Map([
        ['balanced', types()],
        ['default', types()],
      ]),
      nodes: [
        bigNode({ name: 'b1', nodePool: 'balanced', pods: [pod({ cpu: '500m' })] }),
        bigNode({ name: 'd1', nodePool: 'default', pods: [pod({ cpu: '500m' })] }),
      ],
    });
    const r = await reconcile(s);
    const c = cmd(r.decision);
    expect(c.candidates.map((x) => x.nodePool).sort()).toEqual(['balanced', 'default']);
    expect(c.approvals?.['balanced']).toContain('k: 2');
    expect(c.approvals?.['default']).toBeUndefined();
    // Every pool of the move is counted; only the Balanced one has a score.
    const moves = [...(r.metrics.consolidationMoves ?? [])].sort((a, b) => a.nodePool.localeCompare(b.nodePool));
    expect(moves).toEqual([
      {
        decision: 'approved',
        nodePool: 'balanced',
        policy: 'Balanced',
        score: { value: expect.any(Number), decision: 'approved' },
      },
      { decision: 'approved', nodePool: 'default', policy: 'WhenEmptyOrUnderutilized' },
    ]);
  });
});
