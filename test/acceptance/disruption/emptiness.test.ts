// docs/karpenter/test-cases.md §2 (emptiness_test.go): NodePool WhenEmpty, consolidateAfter 0s, budget 100%.
import { beforeEach, describe, expect, it } from 'vitest';
import type { StateNode } from '../../../engine/domain/types.ts';
import { HARNESS_ORDER } from '../../../engine/disruption/types.ts';
import { validate } from '../../../engine/disruption/validate.ts';
import { pod, pods, resetIds } from '../../fixtures/builders.ts';

import { bigNode, env, execute, managedNodes, pool, reconcile, reference, types, wellKnown } from './harness.ts';

beforeEach(() => resetIds());

const whenEmpty = (o: Parameters<typeof pool>[0] = {}) => pool({ consolidationPolicy: 'WhenEmpty', ...o });
const empties = (n: number, o: Parameters<typeof bigNode>[0] = {}) => Array.from({ length: n }, () => bigNode(o));

describe('§2.1 Metrics', () => {
  it('should correctly report eligible nodes', async () => {
    const n = bigNode({ pods: [pod()] });
    const before = await reconcile(env({ nodePools: [whenEmpty()], nodes: [n] }));
    expect(before.metrics.eligibleNodes.Empty).toBe(0);
    const after = await reconcile(env({ nodePools: [whenEmpty()], nodes: [{ ...n, pods: [] }] }));
    expect(after.metrics.eligibleNodes.Empty).toBe(1);
  });
});

describe('§2.2 Budgets (10 empty nodes)', () => {
  const run = async (budget: string, poolCount = 1, perPool = 10) => {
    const pools = Array.from({ length: poolCount }, (_, i) =>
      whenEmpty({ name: poolCount === 1 ? 'default' : `pool-${i}`, budgets: [{ nodes: budget }] }),
    );
    const nodes = pools.flatMap((p) => empties(perPool, { nodePool: p.name }));
    const s = env({ nodePools: pools, nodes });
    const r = await reconcile(s);
    const gauges = r.metrics.allowedDisruptions.filter((g) => g.reason === 'Empty').map((g) => g.allowed);
    return { r, gauges, remaining: managedNodes(execute(s, r.decision)).length };
  };

  it('should allow all empty nodes to be disrupted', async () => {
    const { r, gauges, remaining } = await run('100%');
    expect(gauges).toEqual([10]);
    expect(r.decision.kind).toBe('delete');
    expect(remaining).toBe(0);
  });
  it('should allow no empty nodes to be disrupted', async () => {
    const { r, gauges, remaining } = await run('0%');
    expect(gauges).toEqual([0]);
    expect(r.decision.kind).toBe('noop');
    expect(remaining).toBe(10);
    // not marked consolidated: a budget held nodes back
    expect(r.state.consolidated.emptiness).toBeUndefined();
  });
  it('should only allow 3 empty nodes to be disrupted', async () => {
    const { r, gauges, remaining } = await run('30%');
    expect(gauges).toEqual([3]);
    expect(r.decision.kind !== 'noop' && r.decision.candidates).toHaveLength(3);
    expect(remaining).toBe(7);
  });
  it('should allow 2 nodes from each nodePool to be deleted', async () => {
    const { r, gauges, remaining } = await run('50%', 10, 3);
    expect(gauges).toEqual(Array(10).fill(2));
    expect(r.decision.kind !== 'noop' && r.decision.candidates).toHaveLength(20);
    expect(remaining).toBe(10);
  });
  it('should allow all nodes from each nodePool to be deleted', async () => {
    const { gauges, remaining } = await run('100%', 10, 3);
    expect(gauges).toEqual(Array(10).fill(3));
    expect(remaining).toBe(0);
  });
});

describe('§2.3 Emptiness', () => {
  const one = async (n: StateNode, o: Parameters<typeof reconcile>[1] = {}) => {
    const s = env({ nodePools: [whenEmpty()], nodes: [n] });
    const r = await reconcile(s, o);
    return { r, after: execute(s, r.decision) };
  };

  it('can delete empty nodes', async () => {
    const { r, after } = await one(bigNode());
    expect(r.decision.kind !== 'noop' && r.decision.metricLabels).toEqual({
      decision: 'delete',
      reason: 'empty',
      consolidation_type: 'empty',
    });
    expect(managedNodes(after)).toHaveLength(0);
  });
  it('can delete empty and drifted nodes', async () => {
    const drifted = bigNode({
      conditions: { consolidatable: true, initializedAt: 0, drifted: { reason: 'x', since: 0 } },
    });
    // Production order: Emptiness runs first and deletes it as Empty.
    const prod = await one(drifted);
    expect(prod.r.decision.kind !== 'noop' && prod.r.decision.reason).toBe('Empty');
    expect(managedNodes(prod.after)).toHaveLength(0);
    // Karpenter's harness order (Drift before Emptiness) observes Drifted, as the upstream test does.
    const harness = await one(drifted, { methods: HARNESS_ORDER });
    expect(harness.r.decision.kind !== 'noop' && harness.r.decision.reason).toBe('Drifted');
    expect(harness.r.metrics.eligibleNodes.Drifted).toBe(1);
  });
  it('should ignore nodes without the consolidatable status condition', async () => {
    const { r, after } = await one(bigNode({ conditions: { initializedAt: 0 } }));
    expect(r.decision.kind).toBe('noop');
    expect(managedNodes(after)).toHaveLength(1);
  });
  it('should ignore nodes with the karpenter.sh/do-not-disrupt annotation', async () => {
    const { r } = await one(bigNode({ annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }));
    expect(r.decision.kind).toBe('noop');
    expect(r.decision.explanations[0]!.code).toBe('node-do-not-disrupt');
  });
  it('should delete nodes with the karpenter.sh/do-not-disrupt annotation set to false', async () => {
    const { after } = await one(bigNode({ annotations: { 'karpenter.sh/do-not-disrupt': 'false' } }));
    expect(managedNodes(after)).toHaveLength(0);
  });
  it('should ignore nodes that have pods', async () => {
    const { r } = await one(bigNode({ pods: [pod()] }));
    expect(r.decision.kind).toBe('noop');
  });
  it('should ignore nodes with the Consolidatable status condition set to False', async () => {
    const { r } = await one(bigNode({ conditions: { consolidatable: false, initializedAt: 0 } }));
    expect(r.decision.kind).toBe('noop');
  });
  it('can delete multiple empty nodes', async () => {
    const s = env({ nodePools: [whenEmpty()], nodes: empties(2) });
    const r = await reconcile(s);
    expect(r.decision.kind !== 'noop' && r.decision.candidates).toHaveLength(2);
    expect(managedNodes(execute(s, r.decision))).toHaveLength(0);
  });
  it('considers pending pods when consolidating', async () => {
    const cheap64 = types().find((t) => t.name === '64-cpu-64-mem-amd64-linux-test-zone-1-on-demand')!;
    const n = bigNode({
      it: cheap64,
      allocatable: { cpu: '64', memory: '64Gi', pods: '100' },
      pods: [pod({ cpu: '1' })],
    });
    const s = env({ nodePools: [whenEmpty()], nodes: [n], pendingPods: [pod({ cpu: '62' })] });
    const r = await reconcile(s);
    expect(r.decision.kind).toBe('noop');
  });
  it('will consider a node with a DaemonSet pod as empty', async () => {
    const { after } = await one(bigNode({ pods: [pod({ owner: { kind: 'DaemonSet', name: 'ds' } })] }));
    expect(managedNodes(after)).toHaveLength(0);
  });
  it('will consider a node with terminating Deployment pods as empty', async () => {
    const { after } = await one(bigNode({ pods: pods(3, { deletionTimestamp: 1 }) }));
    expect(managedNodes(after)).toHaveLength(0);
  });
  it('will not consider a node with a terminating StatefulSet pod as empty', async () => {
    const { r, after } = await one(
      bigNode({ pods: [pod({ owner: { kind: 'StatefulSet', name: 'ss' }, deletionTimestamp: 1 })] }),
    );
    expect(r.decision.kind).toBe('noop');
    expect(managedNodes(after)).toHaveLength(1);
  });
  it('should wait for the node TTL for empty nodes before consolidating (real validator)', async () => {
    const s = env({ nodePools: [whenEmpty()], nodes: [bigNode()] });
    const r = await reconcile(s);
    expect(r.decision.kind).toBe('delete');
    if (r.decision.kind === 'noop') return;
    // 15 s later nothing changed: the command survives and runs
    const v = await validate({ ...s, now: s.now + 15_000 }, r.decision, {
      solver: reference,
      wellKnownLabels: wellKnown,
    });
    expect(v.ok).toBe(true);
    if (v.ok) expect(managedNodes(execute(s, { ...r.decision, ...v.command }))).toHaveLength(0);
  });
});

describe('§2.4 Static NodePool', () => {
  it('should not consolidate static NodePool nodes', async () => {
    const s = env({ nodePools: [whenEmpty({ replicas: 2 })], nodes: empties(2) });
    const r = await reconcile(s);
    expect(r.decision.kind).toBe('noop');
    expect(r.metrics.eligibleNodes.Empty).toBe(0);
    expect(r.metrics.eligibleNodes.Underutilized).toBe(0);
  });
});

describe('§2.5 Buffer pod protection', () => {
  const withBuffers = (n: number, o: Parameters<typeof bigNode>[0] = {}) => ({ ...bigNode(o), bufferPods: n });
  const run = async (nodes: StateNode[]) => {
    const s = env({ nodePools: [whenEmpty()], nodes });
    const r = await reconcile(s);
    return {
      r,
      left: managedNodes(execute(s, r.decision))
        .map((n) => n.name)
        .sort(),
    };
  };

  it('should not disrupt a node that hosts virtual buffer pods', async () => {
    const { r, left } = await run([withBuffers(3, { name: 'a' })]);
    expect(left).toEqual(['a']);
    expect(r.decision.explanations[0]!.event).toEqual({
      reason: 'Unconsolidatable',
      message: 'Node "a" has buffer pods',
    });
  });
  it('should disrupt a node once buffer pods are cleared', async () => {
    expect((await run([withBuffers(3, { name: 'a' })])).left).toEqual(['a']);
    expect((await run([withBuffers(0, { name: 'a' })])).left).toEqual([]);
  });
  it('should only protect the specific node with buffer pods', async () => {
    expect((await run([withBuffers(1, { name: 'node1' }), bigNode({ name: 'node2' })])).left).toEqual(['node1']);
  });
  it('should not consider a node with real pods AND buffer pods as empty', async () => {
    expect((await run([withBuffers(2, { name: 'a', pods: [pod()] })])).left).toEqual(['a']);
  });
  it('should protect multiple nodes that each host buffer pods', async () => {
    expect((await run([withBuffers(1, { name: 'a' }), withBuffers(2, { name: 'b' })])).left).toEqual(['a', 'b']);
  });
  it('should not protect a node with zero buffer pod count', async () => {
    expect((await run([withBuffers(0, { name: 'a' })])).left).toEqual([]);
  });
});
