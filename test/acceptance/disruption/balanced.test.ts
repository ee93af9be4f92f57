// spec/test-catalog.md §9.4 (balanced_integration_test.go): a Balanced NodePool, consolidateAfter 0s. The
// scoring numbers of §9.1-§9.3 are unit-tested beside the code (engine/disruption/balanced.test.ts).
import { beforeEach, describe, expect, it } from 'vitest';
import type { Command, Decision } from '../../../engine/disruption/types.ts';
import { pod, pods, resetIds } from '../../fixtures/builders.ts';
import { leastExpensiveInstance, mostExpensiveInstance } from '../../fixtures/instancetypes.ts';
import { bigNode, env, execute, managedNodes, pool, reconcile, types } from './harness.ts';

beforeEach(() => resetIds());

const balanced = (o: Parameters<typeof pool>[0] = {}) => pool({ consolidationPolicy: 'Balanced', ...o });
const cmd = (d: Decision): Command & { approvals?: Readonly<Record<string, string>> } => {
  if (d.kind === 'noop') throw new Error(`expected a command: ${d.explanations.map((e) => `${e.node}: ${e.message}`).join('; ')}`);
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
  });
  it('Single-Node: should reject replacing a well-packed node', async () => {
    const s = env({ nodePools: [balanced()], nodes: [bigNode({ it: cheap(), name: 'packed', pods: pods(8, { cpu: '3.5' }) })] });
    const r = await reconcile(s);
    expect(r.decision.kind).toBe('noop');
  });
  it('Multi-Node: should approve consolidating 3 underutilized nodes', async () => {
    const s = env({ nodePools: [balanced()], nodes: [0, 1, 2].map((i) => bigNode({ name: `n${i}`, pods: [pod({ cpu: '500m' })] })) });
    const r = await reconcile(s);
    const c = cmd(r.decision);
    expect(c.method).toBe('multi');
    expect(c.candidates.length).toBeGreaterThanOrEqual(2);
    expect(c.approvals?.['default']).toContain('k: 2');
    expect(managedNodes(execute(s, r.decision)).length).toBeLessThan(3);
  });
  it('Budgets: should produce no commands with a 0% budget', async () => {
    const s = env({ nodePools: [balanced({ budgets: [{ nodes: '0%' }] })], nodes: [0, 1, 2].map((i) => bigNode({ name: `n${i}`, pods: [pod({ cpu: '500m' })] })) });
    const r = await reconcile(s);
    expect(r.decision.kind).toBe('noop');
    expect(r.decision.explanations.every((e) => e.code === 'budget')).toBe(true);
  });
  it('Priority Ordering: an empty node goes before an underutilized one under budget 1', async () => {
    const s = env({ nodePools: [balanced({ budgets: [{ nodes: '1' }] })], nodes: [bigNode({ name: 'busy', pods: [pod({ cpu: '500m' })] }), bigNode({ name: 'empty' })] });
    const c = cmd((await reconcile(s)).decision);
    expect(c.candidates.map((x) => x.name)).toEqual(['empty']);
  });
  it('Decision and Savings: delete when pods fit on existing nodes', async () => {
    const s = env({ nodePools: [balanced()], nodes: [bigNode({ it: cheap(), name: 'a', pods: pods(2) }), bigNode({ it: cheap(), name: 'b', pods: pods(1) })] });
    const c = cmd((await reconcile(s)).decision);
    expect(c.kind).toBe('delete');
    expect(c.savingsPerHour).toBeCloseTo(cheap().offerings[0]!.price, 9);
  });
  it('Decision and Savings: replace when a new cheaper node is needed', async () => {
    const c = cmd((await reconcile(env({ nodePools: [balanced()], nodes: [bigNode({ pods: [pod({ cpu: '500m' })] })] }))).decision);
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
      instanceTypes: new Map([['balanced', types()], ['default', types()]]),
      nodes: [bigNode({ name: 'b1', nodePool: 'balanced', pods: [pod({ cpu: '500m' })] }), bigNode({ name: 'd1', nodePool: 'default', pods: [pod({ cpu: '500m' })] })],
    });
    const c = cmd((await reconcile(s)).decision);
    expect(c.candidates.map((x) => x.nodePool).sort()).toEqual(['balanced', 'default']);
    expect(c.approvals?.['balanced']).toContain('k: 2');
    expect(c.approvals?.['default']).toBeUndefined();
  });
});
