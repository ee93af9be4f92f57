import { describe, expect, it } from 'vitest';
import type { NodePool, StateNode } from '../../../engine/index.ts';
import { nodePool, pod, stateNode } from '../../../test/fixtures/builders.ts';
import { buildCandidates } from './candidates.ts';
import { emptiness, isEmpty } from './emptiness.ts';
import type { MethodInput } from './types.ts';

const now = Date.UTC(2025, 0, 1, 12);
const pool: NodePool = { ...nodePool({ name: 'default' }), disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: 0, budgets: [{ nodes: '1' }] } };

function input(nodes: StateNode[], budget = 1, p: NodePool = pool): MethodInput {
  const pools = new Map([[p.name, p]]);
  return {
    now,
    candidates: buildCandidates({ now, nodes, pools, instanceTypes: new Map(), pdbs: [], inFlight: new Set() }),
    budgets: () => new Map([[p.name, budget]]),
  };
}

describe('emptiness', () => {
  it('counts only reschedulable pods: DaemonSet, mirror and finished pods leave a node empty', () => {
    expect(isEmpty(stateNode({ pods: [pod({ owner: { kind: 'DaemonSet', name: 'd' } }), pod({ owner: { kind: 'Node', name: 'n' } }), pod({ phase: 'Succeeded' })] }))).toBe(true);
    expect(isEmpty(stateNode({ pods: [pod()] }))).toBe(false);
  });

  it('deletes consolidatable empty nodes within the budget, and says when the budget held some back', async () => {
    const nodes = [stateNode({ name: 'a' }), stateNode({ name: 'b' }), stateNode({ name: 'busy', pods: [pod()] })];
    const r = await emptiness.compute(input(nodes));
    expect(r.command?.candidates.map((c) => c.node.name)).toHaveLength(1);
    expect(r.constrained).toBe(true);
    const all = await emptiness.compute(input(nodes, 5));
    expect(all.command?.candidates.map((c) => c.node.name).sort()).toEqual(['a', 'b']);
    expect(all.constrained).toBe(false);
  });

  it('leaves nodes that are not consolidatable yet, nominated, annotated do-not-disrupt, or hold a do-not-disrupt pod', async () => {
    const nodes = [
      stateNode({ name: 'young', conditions: { consolidatable: false } }),
      stateNode({ name: 'nominated', nominatedUntil: now + 5_000 }),
      stateNode({ name: 'protected', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }),
      stateNode({ name: 'daemon-dnd', pods: [pod({ owner: { kind: 'DaemonSet', name: 'd' }, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })] }),
      stateNode({ name: 'uninitialized', initialized: false }),
    ];
    expect((await emptiness.compute(input(nodes, 10))).command).toBeUndefined();
  });

  it('does nothing when consolidateAfter is Never', async () => {
    const never = { ...pool, disruption: { ...pool.disruption, consolidateAfter: null } };
    expect((await emptiness.compute(input([stateNode({ name: 'a' })], 10, never))).command).toBeUndefined();
  });

  it('keeps, on validation, only the candidates that are still empty', async () => {
    const before = await emptiness.compute(input([stateNode({ name: 'a' }), stateNode({ name: 'b' })], 5));
    const later = input([stateNode({ name: 'a', pods: [pod()] }), stateNode({ name: 'b' })], 5);
    const valid = await emptiness.validate(later, before.command!);
    expect(valid?.candidates.map((c) => c.node.name)).toEqual(['b']);
  });
});
