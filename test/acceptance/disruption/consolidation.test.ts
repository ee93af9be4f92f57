// docs/karpenter/test-cases.md §5.1-§5.4 (consolidation_test.go): WhenEmptyOrUnderutilized, consolidateAfter 0s,
// budget 100%; nodes of the most expensive on-demand (or spot) type with 32 CPU; SpotToSpot on.
import { beforeEach, describe, expect, it } from 'vitest';
import type { InstanceType, NodePool, Snapshot, StateNode } from '../../../engine/domain/types.ts';
import { DEFAULT_ENGINE_OPTIONS } from '../../../engine/domain/types.ts';
import type { Decision, Explanation } from '../../../engine/disruption/types.ts';
import { validate } from '../../../engine/disruption/validate.ts';
import { pdb, pod, pods, resetIds } from '../../fixtures/builders.ts';
import {
  fakeInstanceType,
  fakeOffering,
  mostExpensiveInstance,
  mostExpensiveSpotInstance,
} from '../../fixtures/instancetypes.ts';
import {
  bigNode,
  env,
  execute,
  GiB,
  managedNodes,
  node,
  OPTIONS,
  pool,
  reconcile,
  reference,
  start,
  types,
  wellKnown,
} from './harness.ts';

beforeEach(() => resetIds());

const onDemand = (o: Parameters<typeof bigNode>[0] = {}) => bigNode(o);
const spot = (o: Parameters<typeof bigNode>[0] = {}) => bigNode({ it: mostExpensiveSpotInstance(types()), ...o });
const explanationOf = (d: Decision, name: string): Explanation | undefined =>
  d.explanations.find((e) => e.node === name);
const itReq = (d: Decision) =>
  d.kind === 'noop'
    ? []
    : d.replacements[0]!.requirements.find((r) => r.key === 'node.kubernetes.io/instance-type')!.values;

describe('§5.1 Events (the Unconsolidatable event each node would get)', () => {
  const eventOf = async (n: StateNode, p: NodePool = pool()) =>
    explanationOf((await reconcile(env({ nodePools: [p], nodes: [n] }))).decision, n.name)?.event;

  it('should not fire an event for ConsolidationDisabled when the NodePool has consolidation set to WhenEmptyOrUnderutilized', async () => {
    const s = env({ nodes: [bigNode({ name: 'empty' })] });
    const r = await reconcile(s);
    expect(r.decision.kind).toBe('delete'); // emptiness takes it: nothing unconsolidatable
  });
  it('should fire an event for ConsolidationDisabled when the NodePool has consolidation set to WhenEmpty', async () => {
    expect(
      await eventOf(
        bigNode({ name: 'n', pods: [pod()] }),
        pool({ consolidationPolicy: 'WhenEmpty', consolidateAfter: 60_000 }),
      ),
    ).toEqual({
      reason: 'Unconsolidatable',
      message: 'NodePool "default" has consolidation policy WhenEmpty, but node is not empty',
    });
  });
  it('should fire an event for ConsolidationDisabled when the NodePool has consolidateAfter set to Never', async () => {
    expect(await eventOf(bigNode({ name: 'n', pods: [pod()] }), pool({ consolidateAfter: null }))).toEqual({
      reason: 'Unconsolidatable',
      message: 'NodePool "default" has consolidation disabled',
    });
  });
  it('should fire an event when a candidate does not have a resolvable instance type', async () => {
    expect(
      await eventOf(bigNode({ name: 'n', pods: [pod()], labels: { 'node.kubernetes.io/instance-type': 'gone' } })),
    ).toEqual({ reason: 'Unconsolidatable', message: 'Instance Type "gone" not found' });
  });
  it('should fire an event when a candidate does not have the capacity type label', async () => {
    const n = bigNode({ name: 'n', pods: [pod()] });
    const { ['karpenter.sh/capacity-type']: _, ...labels } = n.labels;
    expect(await eventOf({ ...n, labels })).toEqual({
      reason: 'Unconsolidatable',
      message: 'Node does not have label "karpenter.sh/capacity-type"',
    });
  });
  it('should fire an event when a candidate does not have the zone label', async () => {
    const n = bigNode({ name: 'n', pods: [pod()] });
    const { ['topology.kubernetes.io/zone']: _, ...labels } = n.labels;
    expect(await eventOf({ ...n, labels })).toEqual({
      reason: 'Unconsolidatable',
      message: 'Node does not have label "topology.kubernetes.io/zone"',
    });
  });
});

describe('§5.2 Metrics', () => {
  it('should correctly report eligible nodes', async () => {
    const n = bigNode({ pods: [pod({ annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })] });
    expect((await reconcile(env({ nodes: [n] }))).metrics.eligibleNodes.Underutilized).toBe(0);
    expect((await reconcile(env({ nodes: [{ ...n, pods: [pod()] }] }))).metrics.eligibleNodes.Underutilized).toBe(1);
  });

  // Each entry changes the cluster during the validation delay: budget closed, pod churn, nomination.
  const changes: Array<[string, (s: Snapshot, nodes: string[]) => Snapshot]> = [
    [
      'blocked by budgets',
      (s) => ({
        ...s,
        nodePools: s.nodePools.map((p) => ({ ...p, disruption: { ...p.disruption, budgets: [{ nodes: '0%' }] } })),
      }),
    ],
    [
      'pod churn',
      (s, nodes) => ({
        ...s,
        nodes: s.nodes.map((n) =>
          nodes.includes(n.name)
            ? {
                ...n,
                pods: [
                  ...n.pods,
                  { ...pod({ cpu: '1' }), nodeName: n.name, phase: 'Running' as const, unschedulable: false },
                ],
              }
            : n,
        ),
      }),
    ],
    [
      'nomination',
      (s, nodes) => ({
        ...s,
        nodes: s.nodes.map((n) => (nodes.includes(n.name) ? { ...n, nominatedUntil: s.now + 20_000 } : n)),
      }),
    ],
  ];
  for (const [what, change] of changes) {
    it(`should correctly report invalidated commands for emptiness (${what})`, async () => {
      const s = env({ nodes: [bigNode({ name: 'a' })] });
      const r = await reconcile(s, { consolidationState: 1 });
      expect(r.decision.kind !== 'noop' && r.decision.method).toBe('emptiness');
      expect(r.state.consolidated.emptiness).toBeUndefined();
      const v = await validate(change(s, ['a']), r.decision as Exclude<Decision, { kind: 'noop' }>, {
        solver: reference,
        wellKnownLabels: wellKnown,
      });
      expect(v.ok).toBe(false);
      if (!v.ok) expect(v.failedValidations).toBe(1);
    });
    it(`should correctly report invalidated commands for multi node (${what})`, async () => {
      const s = env({ nodes: [pods(1), pods(1), pods(2)].map((ps, i) => bigNode({ name: `n${i}`, pods: ps })) });
      const r = await reconcile(s);
      expect(r.decision.kind !== 'noop' && r.decision.method).toBe('multi');
      if (r.decision.kind === 'noop') return;
      const v = await validate(
        change(
          s,
          r.decision.candidates.map((c) => c.name),
        ),
        r.decision,
        { solver: reference, wellKnownLabels: wellKnown },
      );
      expect(v.ok).toBe(false);
      if (!v.ok) expect(v.failedValidations).toBe(r.decision.candidates.length);
      expect(r.decision.candidates.length).toBeGreaterThanOrEqual(2);
    });
    it(`should correctly report invalidated commands for single node (${what})`, async () => {
      const s = env({ nodes: [bigNode({ name: 'a', pods: [pod({ cpu: '1' })] })] });
      const r = await reconcile(s);
      expect(r.decision.kind !== 'noop' && r.decision.method).toBe('single');
      if (r.decision.kind === 'noop') return;
      const v = await validate(change(s, ['a']), r.decision, { solver: reference, wellKnownLabels: wellKnown });
      expect(v.ok).toBe(false);
      if (!v.ok) expect(v.failedValidations).toBe(1);
    });
  }
});

describe('§5.3 Budgets (10 most expensive nodes, 32 CPU)', () => {
  const ten = (o: (i: number) => Parameters<typeof bigNode>[0] = () => ({})) =>
    Array.from({ length: 10 }, (_, i) => bigNode({ name: `n${i}`, ...o(i) }));
  const remaining = async (budget: string, nodes: StateNode[], methods?: Parameters<typeof reconcile>[1]) => {
    const s = env({ nodePools: [pool({ budgets: [{ nodes: budget }] })], nodes });
    const r = await reconcile(s, methods);
    return { r, left: managedNodes(execute(s, r.decision)).length, gauge: r.metrics.allowedDisruptions[0]?.allowed };
  };

  it('should only allow 3 empty nodes to be disrupted', async () => {
    const { gauge, left } = await remaining('30%', ten());
    expect([gauge, left]).toEqual([3, 7]);
  });
  it('should allow all empty nodes to be disrupted', async () => {
    const { gauge, left } = await remaining('100%', ten());
    expect([gauge, left]).toEqual([10, 0]);
  });
  it('should allow no empty nodes to be disrupted', async () => {
    const { gauge, left, r } = await remaining('0%', ten());
    expect([gauge, left, r.decision.kind]).toEqual([0, 10, 'noop']);
  });
  it('should only allow 3 nodes to be deleted in multi node consolidation delete', async () => {
    const { r, left } = await remaining(
      '30%',
      ten(() => ({ pods: [pod({ cpu: '100m' })] })),
    );
    expect(r.decision.kind !== 'noop' && r.decision.method).toBe('multi');
    expect(left).toBe(7);
  });
  it('should only allow 3 nodes to be deleted in single node consolidation delete', async () => {
    let s = env({
      nodePools: [pool({ budgets: [{ nodes: '30%' }] })],
      nodes: ten(() => ({ pods: [pod({ cpu: '15' })] })),
    });
    const decisions: Decision[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await reconcile(s, { methods: ['single'] });
      if (r.decision.kind === 'noop') continue;
      decisions.push(r.decision);
      s = start(s, r.decision);
    }
    expect(decisions).toHaveLength(3);
    for (const d of decisions) s = execute(s, d);
    expect(managedNodes(s)).toHaveLength(7);
  });
  const pools = (budget: string) =>
    Array.from({ length: 10 }, (_, i) => pool({ name: `pool-${i}`, budgets: [{ nodes: budget }] }));
  const spread = (ps: NodePool[]) => ps.flatMap((p) => [0, 1, 2].map(() => bigNode({ nodePool: p.name })));
  for (const [title, budget, gauge, left] of [
    ['should allow 2 nodes from each nodePool to be deleted', '50%', 2, 10],
    ['should allow all nodes from each nodePool to be deleted', '100%', 3, 0],
    ['should allow no nodes from each nodePool to be deleted', '0%', 0, 30],
  ] as const) {
    it(title, async () => {
      const ps = pools(budget);
      const s = env({ nodePools: ps, nodes: spread(ps) });
      const r = await reconcile(s);
      expect(r.metrics.allowedDisruptions.filter((g) => g.reason === 'Empty').map((g) => g.allowed)).toEqual(
        Array(10).fill(gauge),
      );
      expect(managedNodes(execute(s, r.decision))).toHaveLength(left);
    });
  }
  for (const many of [false, true]) {
    const setup = (nodes: (p: string) => StateNode[]) => {
      const ps = many ? pools('0%') : [pool({ budgets: [{ nodes: '0%' }] })];
      return env({ nodePools: ps, nodes: ps.flatMap((p) => nodes(p.name)) });
    };
    it(`should not mark empty node consolidated if the candidates can't be disrupted due to budgets with ${many ? 'many nodepools' : 'one nodepool'}`, async () => {
      const r = await reconcile(
        setup((p) => [bigNode({ nodePool: p })]),
        { consolidationState: 7, methods: ['emptiness'] },
      );
      expect(r.decision.kind).toBe('noop');
      expect(r.state.consolidated.emptiness).toBeUndefined();
    });
    for (const m of ['multi', 'single'] as const) {
      it(`should not mark ${m} node consolidated if the candidates can't be disrupted due to budgets with ${many ? 'many nodepools' : 'one nodepool'}`, async () => {
        const r = await reconcile(
          setup((p) => [bigNode({ nodePool: p, pods: [pod()] }), bigNode({ nodePool: p, pods: [pod()] })]),
          { consolidationState: 7, methods: [m] },
        );
        expect(r.decision.kind).toBe('noop');
        expect(r.state.consolidated[m]).toBeUndefined();
      });
    }
  }
  it('marks a method consolidated when it finds nothing and nothing was held back, and skips it until the state changes', async () => {
    const s = env({
      nodes: [
        bigNode({
          it: types().find((t) => t.name === '1-cpu-1-mem-amd64-linux-test-zone-1-on-demand'),
          allocatable: { cpu: '1', pods: '10' },
          pods: [pod({ cpu: '500m' })],
        }),
      ],
    });
    const r = await reconcile(s, { consolidationState: 7, methods: ['single'] });
    expect(r.decision.kind).toBe('noop');
    expect(r.state.consolidated.single).toBe(7);
    const again = await reconcile(s, { consolidationState: 7, methods: ['single'], state: r.state });
    expect(again.decision.explanations[0]!.code).toBe('already-consolidated');
    const changed = await reconcile(s, { consolidationState: 8, methods: ['single'], state: r.state });
    expect(changed.decision.explanations[0]!.code).toBe('no-cheaper-replacement');
  });
});

// Spot types priced as given, each with one spot offering in test-zone-1 and room for small pods.
function spotTypes(prices: number[], prefix = 'spot'): InstanceType[] {
  return prices.map((price, i) =>
    fakeInstanceType({
      name: `${prefix}-${String(i).padStart(2, '0')}`,
      resources: { cpu: 4000, memory: 4 * GiB, pods: 10 },
      offerings: [fakeOffering({ zone: 'test-zone-1', capacityType: 'spot', price })],
    }),
  );
}
function onDemandTypes(prices: number[]): InstanceType[] {
  return prices.map((price, i) =>
    fakeInstanceType({
      name: `od-${String(i).padStart(2, '0')}`,
      resources: { cpu: 4000, memory: 4 * GiB, pods: 10 },
      offerings: [fakeOffering({ zone: 'test-zone-1', capacityType: 'on-demand', price })],
    }),
  );
}

describe('§5.4 Replace', () => {
  for (const [variant, mk] of [
    ['on-demand', onDemand],
    ['spot', spot],
  ] as const) {
    it(`can replace node (${variant})`, async () => {
      const s = env({ nodes: [mk()] });
      const first = s.nodes[0]!;
      const withPod = {
        ...s,
        nodes: [
          { ...first, pods: [{ ...pod(), nodeName: first.name, phase: 'Running' as const, unschedulable: false }] },
        ],
      };
      const r = await reconcile(withPod);
      expect(r.decision.kind).toBe('replace');
      const after = managedNodes(execute(withPod, r.decision));
      expect(after).toHaveLength(1);
      expect(after[0]!.name).not.toBe(first.name);
      const expensive = variant === 'spot' ? mostExpensiveSpotInstance(types()) : mostExpensiveInstance(types());
      expect(itReq(r.decision)).not.toContain(expensive.name);
    });
  }

  const spotEnv = (its: InstanceType[], candidate: InstanceType, o: { gate?: boolean; pool?: NodePool } = {}) =>
    env({
      nodePools: [o.pool ?? pool()],
      instanceTypes: its,
      nodes: [node(candidate, { name: 'spot-node', pods: [pod({ cpu: '100m' })] })],
      options: o.gate === false ? DEFAULT_ENGINE_OPTIONS : OPTIONS,
    });

  it('cannot replace spot with spot if less than minimum InstanceTypes flexibility', async () => {
    const its = spotTypes([1.0, 1.1, 1.2, 1.3, 0.001]);
    const r = await reconcile(spotEnv(its, its[0]!));
    expect(r.decision.kind).toBe('noop');
    expect(explanationOf(r.decision, 'spot-node')?.event?.message).toBe(
      'SpotToSpotConsolidation requires 15 cheaper instance type options than the current candidate to consolidate, got 1',
    );
  });
  it('cannot replace spot with spot if the spotToSpotConsolidation is disabled', async () => {
    const its = spotTypes([2.0, 1.0, 0.5]);
    const r = await reconcile(spotEnv(its, its[0]!, { gate: false }));
    expect(r.decision.kind).toBe('noop');
    expect(explanationOf(r.decision, 'spot-node')?.event?.message).toBe(
      "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node",
    );
  });
  it('cannot replace spot with spot if it is part of the 15 cheapest instance types', async () => {
    const its = spotTypes(Array.from({ length: 20 }, (_, i) => 1 + i / 10));
    const r = await reconcile(spotEnv(its, its[1]!));
    expect(r.decision.kind).toBe('noop');
    expect(explanationOf(r.decision, 'spot-node')?.code).toBe('spot-to-spot-flexibility');
  });
  it('spot to spot consolidation should order the instance types by price before enforcing minimum flexibility', async () => {
    const prices = Array.from({ length: 18 }, (_, i) => 1 + i / 10);
    prices[15] = 0.001;
    const its = spotTypes(prices);
    const r = await reconcile(spotEnv(its, its[17]!));
    const expected = its
      .map((it, i) => ({ n: it.name, p: prices[i]! }))
      .filter((x) => x.n !== its[17]!.name)
      .sort((a, b) => a.p - b.p)
      .slice(0, 15)
      .map((x) => x.n);
    expect(itReq(r.decision)).toEqual([...expected].sort());
    expect(itReq(r.decision)).toContain(its[15]!.name);
  });
  it('spot to spot consolidation should consider the max of default and minimum number of instanceTypeOptions', async () => {
    const its = spotTypes(Array.from({ length: 18 }, (_, i) => 1 + i / 10));
    const p = pool({
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'Exists', values: [], minValues: 16 }],
    });
    const r = await reconcile(spotEnv(its, its[17]!, { pool: p }));
    expect(itReq(r.decision)).toHaveLength(16);
    expect(itReq(r.decision)).toEqual(its.slice(0, 16).map((x) => x.name));
  });
  it('spot to spot consolidation should consider the default for minimum number of instanceTypeOptions if minimum number of instanceTypeOptions from minValues in requirement is less than default', async () => {
    const its = spotTypes(Array.from({ length: 18 }, (_, i) => 1 + i / 10));
    const p = pool({
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'Exists', values: [], minValues: 10 }],
    });
    expect(itReq((await reconcile(spotEnv(its, its[17]!, { pool: p }))).decision)).toEqual(
      its.slice(0, 15).map((x) => x.name),
    );
  });
  for (const variant of ['on-demand', 'spot'] as const) {
    it(`consolidation should fail if filterByPrice breaks the minimum requirement from the NodePools (${variant})`, async () => {
      const prices = Array.from({ length: 16 }, (_, i) => 1 + i / 10);
      const its = variant === 'spot' ? spotTypes(prices) : onDemandTypes(prices);
      const p = pool({
        requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'Exists', values: [], minValues: 16 }],
      });
      const r = await reconcile(spotEnv(its, its[15]!, { pool: p }));
      expect(r.decision.kind).toBe('noop');
      expect(explanationOf(r.decision, 'spot-node')?.code).toBe('min-values');
    });
  }
  it('should handle failing filterOutSameInstanceType without panic when minValues is not satisfied', async () => {
    const mk = (name: string, price: number) =>
      fakeInstanceType({
        name,
        resources: { cpu: 5000, memory: 8 * GiB, pods: 20 },
        offerings: [fakeOffering({ zone: 'test-zone-1', capacityType: 'on-demand', price })],
      });
    const current = mk('current', 0.5);
    const other = mk('other', 0.4);
    const p = pool({
      requirements: [
        { key: 'node.kubernetes.io/instance-type', operator: 'Exists', values: [], minValues: 2 },
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
      ],
    });
    const nodes = [pods(1, { cpu: '2' }), pods(1, { cpu: '2' }), pods(2, { cpu: '2' })].map((ps, i) =>
      node(current, { name: `n${i}`, pods: ps }),
    );
    const s = env({ nodePools: [p], instanceTypes: [current, other], nodes });
    const r = await reconcile(s);
    expect(r.decision.kind).toBe('delete');
    expect(managedNodes(execute(s, r.decision))).toHaveLength(2);
  });
  for (const [variant, mk] of [
    ['on-demand', onDemand],
    ['spot', spot],
  ] as const) {
    it(`can replace nodes if another nodePool returns no instance types (${variant})`, async () => {
      const s = env({
        nodePools: [pool(), pool({ name: 'empty-pool' })],
        instanceTypes: new Map([
          ['default', types()],
          ['empty-pool', []],
        ]),
        nodes: [mk({ pods: [pod()] })],
      });
      const r = await reconcile(s);
      expect(r.decision.kind).toBe('replace');
    });
    it(`can replace nodes, considers PDB (${variant})`, async () => {
      const labels = { app: 'test' };
      const s = env({
        nodes: [mk({ pods: pods(3, { labels }) })],
        pdbs: [pdb('p', { matchLabels: labels, disruptionsAllowed: 0 })],
      });
      const r = await reconcile(s);
      expect(r.decision.kind).toBe('noop');
      expect(r.decision.explanations[0]!.message).toMatch(/^pdb default\/p allows 0 disruptions/);
    });
    it(`can replace nodes, considers PDB policy (${variant})`, async () => {
      const labels = { app: 'test' };
      const s = env({
        nodes: [mk({ pods: pods(3, { labels, ready: false }) })],
        pdbs: [pdb('p', { matchLabels: labels, disruptionsAllowed: 0, unhealthyPodEvictionPolicy: 'AlwaysAllow' })],
      });
      const r = await reconcile(s);
      expect(r.decision.kind).toBe('replace');
      expect(managedNodes(execute(s, r.decision))).toHaveLength(1);
    });
  }
  it('can replace nodes, PDB namespace must match', async () => {
    const labels = { app: 'test' };
    const s = env({
      nodes: [onDemand()],
      pdbs: [pdb('p', { namespace: 'other', matchLabels: labels, disruptionsAllowed: 0 })],
    });
    const withPods = {
      ...s,
      nodes: [
        {
          ...s.nodes[0]!,
          pods: pods(3, { labels }).map((p) => ({ ...p, nodeName: s.nodes[0]!.name, phase: 'Running' as const })),
        },
      ],
    };
    expect((await reconcile(withPods)).decision.kind).toBe('replace');
  });
  it('can replace nodes, considers karpenter.sh/do-not-disrupt on nodes', async () => {
    const annotated = bigNode({
      name: 'annotated',
      allocatable: { cpu: '5', pods: '100' },
      annotations: { 'karpenter.sh/do-not-disrupt': 'true' },
      pods: [pod({ cpu: '1' })],
    });
    const plain = bigNode({ name: 'plain', pods: [pod({ cpu: '6' })] });
    const s = env({ nodes: [annotated, plain] });
    const r = await reconcile(s);
    expect(r.decision.kind !== 'noop' && r.decision.candidates.map((c) => c.name)).toEqual(['plain']);
    expect(r.decision.kind).toBe('replace');
    expect(managedNodes(execute(s, r.decision)).map((n) => n.name)).toContain('annotated');
  });
  it('can replace nodes, considers karpenter.sh/do-not-disrupt on pods', async () => {
    const protectedNode = bigNode({
      name: 'node2',
      allocatable: { cpu: '5', pods: '100' },
      pods: [pod({ cpu: '1', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })],
    });
    const plain = bigNode({ name: 'node', pods: [pod({ cpu: '6' })] });
    const s = env({ nodes: [protectedNode, plain] });
    const r = await reconcile(s);
    expect(r.decision.kind !== 'noop' && r.decision.candidates.map((c) => c.name)).toEqual(['node']);
    expect(managedNodes(execute(s, r.decision))).toHaveLength(2);
  });
  it("won't replace node if any spot replacement is more expensive", async () => {
    const current = fakeInstanceType({
      name: 'current-on-demand',
      offerings: [fakeOffering({ zone: 'test-zone-1a', capacityType: 'on-demand', price: 0.5, available: false })],
    });
    const replacement = fakeInstanceType({
      name: 'potential-spot-replacement',
      offerings: [
        fakeOffering({ zone: 'test-zone-1a', capacityType: 'spot', price: 1.0 }),
        fakeOffering({ zone: 'test-zone-1b', capacityType: 'spot', price: 0.2 }),
        fakeOffering({ zone: 'test-zone-1c', capacityType: 'spot', price: 0.4 }),
      ],
    });
    const s = env({
      instanceTypes: [current, replacement],
      nodes: [node(current, { name: 'n', allocatable: { cpu: '32', pods: '100' }, pods: [pod()] })],
    });
    const r = await reconcile(s);
    expect(r.decision.kind).toBe('noop');
    expect(explanationOf(r.decision, 'n')?.message).toBe(
      'no cheaper replacement: cheapest fitting option potential-spot-replacement $1.0000/h is not below $0.5000/h',
    );
  });
  it("won't replace on-demand node if on-demand replacement is more expensive", async () => {
    const current = fakeInstanceType({
      name: 'current-on-demand',
      offerings: [fakeOffering({ zone: 'test-zone-1a', capacityType: 'on-demand', price: 0.5, available: false })],
    });
    const replacement = fakeInstanceType({
      name: 'on-demand-replacement',
      offerings: [
        fakeOffering({ zone: 'test-zone-1a', capacityType: 'on-demand', price: 0.6 }),
        fakeOffering({ zone: 'test-zone-1b', capacityType: 'spot', price: 0.2 }),
        fakeOffering({ zone: 'test-zone-1c', capacityType: 'spot', price: 0.3 }),
      ],
    });
    const p = pool({ requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }] });
    const s = env({
      nodePools: [p],
      instanceTypes: [current, replacement],
      nodes: [node(current, { name: 'n', allocatable: { cpu: '32', pods: '100' }, pods: [pod()] })],
    });
    expect((await reconcile(s)).decision.kind).toBe('noop');
  });
});
