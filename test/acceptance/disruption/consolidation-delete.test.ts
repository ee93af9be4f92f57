// docs/karpenter/test-cases.md §5.5-§5.7 (consolidation_test.go): deleting, the validation delay (the controller's
// 15 s wait becomes a validate() call on a changed snapshot) and multi-node consolidation.
import { beforeEach, describe, expect, it } from 'vitest';
import type { Pod, Snapshot, StateNode } from '../../../engine/domain/types.ts';
import type { Command, Decision } from '../../../engine/disruption/types.ts';
import { validate } from '../../../engine/disruption/validate.ts';
import { pdb, pod, pods, resetIds, stateNode } from '../../fixtures/builders.ts';
import { leastExpensiveInstance, mostExpensiveSpotInstance } from '../../fixtures/instancetypes.ts';
import { bigNode, env, execute, managedNodes, pool, reconcile, reference, types, wellKnown } from './harness.ts';

beforeEach(() => resetIds());

const cheapNode = (o: Parameters<typeof bigNode>[0] = {}) => bigNode({ it: leastExpensiveInstance(types()), ...o });
const DND = { 'karpenter.sh/do-not-disrupt': 'true' };
const TGP = 300_000;
const cmd = (d: Decision): Command => {
  if (d.kind === 'noop')
    throw new Error(
      `expected a command, got a no-op: ${d.explanations.map((e) => `${e.node}: ${e.message}`).join('; ')}`,
    );
  return d;
};
const bind = (n: StateNode, p: Pod): StateNode => ({
  ...n,
  pods: [...n.pods, { ...p, nodeName: n.name, phase: 'Running', unschedulable: false }],
});
const withNode = (s: Snapshot, name: string, f: (n: StateNode) => StateNode): Snapshot => ({
  ...s,
  nodes: s.nodes.map((n) => (n.name === name ? f(n) : n)),
});

async function run(nodes: StateNode[], o: Partial<Snapshot> = {}) {
  const s = env({ nodes, ...o });
  const r = await reconcile(s);
  return {
    s,
    r,
    left: managedNodes(execute(s, r.decision))
      .map((n) => n.name)
      .sort(),
  };
}

describe('§5.5 Delete (2 nodes of the cheapest type, 32 CPU / 100 pods)', () => {
  const two = (p0: Pod[], p1: Pod[], o1: Parameters<typeof bigNode>[0] = {}) => [
    cheapNode({ name: 'node0', pods: p0 }),
    cheapNode({ name: 'node1', pods: p1, ...o1 }),
  ];

  it('can delete nodes', async () => {
    expect((await run(two(pods(2), pods(1)))).left).toEqual(['node0']);
  });
  it('does not delete nodes with pod churn, deletes nodes without pod churn', async () => {
    const s = env({ nodes: two([], []) });
    const r = await reconcile(s, { consolidationState: 1 });
    expect(cmd(r.decision).candidates).toHaveLength(2);
    // a pod binds to node0 during the validation delay
    const v = await validate(
      withNode(s, 'node0', (n) => bind(n, pod())),
      cmd(r.decision),
      { solver: reference, wellKnownLabels: wellKnown },
    );
    expect(v.ok).toBe(true);
    if (v.ok) expect(v.command.candidates.map((c) => c.name)).toEqual(['node1']);
    expect(r.state.consolidated.emptiness).toBeUndefined();
  });
  it('can delete nodes if another nodePool has no node template', async () => {
    expect(
      (
        await run(two(pods(2), pods(1)), {
          nodePools: [pool(), pool({ name: 'no-template' })],
          instanceTypes: new Map([
            ['default', types()],
            ['no-template', []],
          ]),
        })
      ).left,
    ).toEqual(['node0']);
  });
  it('can delete nodes, when non-Karpenter capacity can fit pods', async () => {
    const unmanaged = stateNode({ name: 'unmanaged', managed: false, allocatable: { cpu: '32', pods: '100' } });
    const { s, r } = await run([cheapNode({ name: 'node0', pods: pods(1) }), unmanaged]);
    const after = execute(s, r.decision);
    expect(managedNodes(after)).toHaveLength(0);
    expect(after.nodes.map((n) => n.name)).toEqual(['unmanaged']);
  });
  it('can delete nodes, considers PDB', async () => {
    const labels = { app: 'test' };
    expect(
      (
        await run(two(pods(2), pods(1, { labels })), {
          pdbs: [pdb('p', { matchLabels: labels, disruptionsAllowed: 0 })],
        })
      ).left,
    ).toEqual(['node1']);
  });
  it('can delete nodes, considers karpenter.sh/do-not-disrupt on nodes', async () => {
    expect((await run(two(pods(2), pods(1), { annotations: DND }))).left).toEqual(['node1']);
  });
  it('can delete nodes, considers karpenter.sh/do-not-disrupt on pods', async () => {
    expect((await run(two(pods(2), [pod({ annotations: DND })]))).left).toEqual(['node1']);
  });
  it("does not consolidate nodes with karpenter.sh/do-not-disrupt on pods when the NodeClaim's TerminationGracePeriod is set", async () => {
    const nodes = [
      cheapNode({ name: 'node0', pods: pods(2, { annotations: DND }), terminationGracePeriod: TGP }),
      cheapNode({ name: 'node1', pods: [pod({ annotations: DND })], terminationGracePeriod: TGP }),
    ];
    const { r, left } = await run(nodes);
    expect(r.decision.kind).toBe('noop');
    expect(left).toEqual(['node0', 'node1']);
  });
  it("does not consolidate nodes with PDB-blocked pods when the NodeClaim's TerminationGracePeriod is set", async () => {
    const labels = { app: 'test' };
    const nodes = [
      cheapNode({ name: 'node0', pods: pods(2, { labels }), terminationGracePeriod: TGP }),
      cheapNode({ name: 'node1', pods: pods(1, { labels }), terminationGracePeriod: TGP }),
    ];
    expect(
      (await run(nodes, { pdbs: [pdb('p', { matchLabels: labels, disruptionsAllowed: 0 })] })).r.decision.kind,
    ).toBe('noop');
  });
  it('does not consolidate nodes while a duration-based karpenter.sh/do-not-disrupt is active', async () => {
    expect(
      (
        await run(two(pods(2), [pod({ annotations: { 'karpenter.sh/do-not-disrupt': '2m' }, startTime: 0 })]), {
          now: 60_000,
        })
      ).left,
    ).toEqual(['node1']);
  });
  it('can consolidate nodes after a duration-based karpenter.sh/do-not-disrupt expires', async () => {
    const dnd = (n: number) => pods(n, { annotations: { 'karpenter.sh/do-not-disrupt': '2m' }, startTime: 0 });
    const nodes = two(dnd(2), dnd(1));
    expect((await run(nodes, { now: 0 })).r.decision.kind).toBe('noop');
    expect((await run(nodes, { now: 3 * 60_000 })).r.decision.kind).toBe('delete');
  });
  it('invalid karpenter.sh/do-not-disrupt format does not block consolidation', async () => {
    expect((await run(two(pods(2), [pod({ annotations: { 'karpenter.sh/do-not-disrupt': 'soon' } })]))).left).toEqual([
      'node0',
    ]);
  });
  it('can delete nodes, evicts pods without an ownerRef', async () => {
    const standalone: Pod = { ...pod(), owner: undefined };
    expect((await run(two(pods(2), [standalone]))).left).toEqual(['node0']);
  });
  it("won't delete node if it would require pods to schedule on an uninitialized node", async () => {
    const { r } = await run(two(pods(2), pods(1)).map((n) => (n.name === 'node0' ? { ...n, initialized: false } : n)));
    expect(r.decision.kind).toBe('noop');
    const e = r.decision.explanations.find((x) => x.node === 'node1')!;
    expect(e.event?.message).toMatch(
      /^Not all pods would schedule, default\/pod-\d+ => would schedule against uninitialized nodeclaim\/nc-node0, node\/node0/,
    );
  });
  it('should not consolidate pods onto a destination node that is still within its consolidateAfter window', async () => {
    const minute = 60_000;
    const nodes = two(pods(2), pods(1)).map((n) => ({
      ...n,
      lastPodEventTime: 0,
      conditions: { consolidatable: true, initializedAt: 0 },
    }));
    const p = pool({ consolidateAfter: minute });
    expect((await run(nodes, { nodePools: [p], now: 30_000 })).r.decision.kind).toBe('noop');
    expect((await run(nodes, { nodePools: [p], now: 2 * minute })).left).toEqual(['node0']);
  });
  it('should consolidate pods onto a destination node with consolidateAfter Never', async () => {
    const dest = cheapNode({ name: 'never', nodePool: 'never', pods: pods(2), lastPodEventTime: 0 });
    const src = cheapNode({ name: 'src', pods: pods(1) });
    const { left } = await run([dest, src], {
      nodePools: [pool(), pool({ name: 'never', consolidateAfter: null })],
      instanceTypes: new Map([
        ['default', types()],
        ['never', types()],
      ]),
    });
    expect(left).toEqual(['never']);
  });
  it('should replace a node with a cheaper one even when consolidateAfter has not expired on the destination', async () => {
    const minute = 60_000;
    const n = bigNode({ name: 'expensive', pods: [pod({ cpu: '1' })], lastPodEventTime: 0 });
    const { r, left } = await run([n], { nodePools: [pool({ consolidateAfter: minute })], now: 2 * minute });
    expect(r.decision.kind).toBe('replace');
    expect(left).toHaveLength(1);
    expect(left[0]).not.toBe('expensive');
  });
  it('should consider initialized nodes before uninitialized nodes', async () => {
    const def = types().find((t) => t.name === '4-cpu-4-mem-amd64-linux-test-zone-1-on-demand')!;
    const lucky = 37;
    const many = Array.from({ length: 100 }, (_, i) =>
      bigNode({
        it: def,
        name: `default-${String(i).padStart(3, '0')}`,
        allocatable: { cpu: '3', pods: '100' },
        initialized: i === lucky,
        conditions: { initializedAt: 0 },
      }),
    );
    const small = cheapNode({ name: 'small', pods: [pod({ cpu: '1' })] });
    const { s, r } = await run([...many, small]);
    const c = cmd(r.decision);
    expect(c.candidates.map((x) => x.name)).toEqual(['small']);
    expect(c.podsMoved.map((m) => m.to)).toEqual([`default-0${lucky}`]);
    expect(managedNodes(execute(s, r.decision))).toHaveLength(100);
  });
  it('can delete nodes with a permanently pending pod', async () => {
    const pending = pod({ nodeSelector: { 'non-existent': 'label' } });
    const { s, r, left } = await run(two(pods(2), pods(1)), { pendingPods: [pending] });
    expect(left).toEqual(['node0']);
    expect(execute(s, r.decision).pendingPods).toEqual([pending]);
  });
  it("won't delete nodes if it would make a non-pending pod go pending", async () => {
    // each pod selects a label only its own node has (and no NodePool can give a new node)
    const pinned = two([], []).map((n, i) =>
      bind({ ...n, labels: { ...n.labels, pin: `p${i}` } }, pod({ nodeSelector: { pin: `p${i}` } })),
    );
    const { r, left } = await run(pinned);
    expect(left).toEqual(['node0', 'node1']);
    expect(r.decision.explanations.map((e) => e.code)).toEqual(['pods-would-not-schedule', 'pods-would-not-schedule']);
  });
  it('can delete nodes while an invalid node pool exists', async () => {
    const { left } = await run(two(pods(2), pods(1)), {
      nodePools: [pool(), pool({ name: 'invalid', ready: false })],
      instanceTypes: new Map([
        ['default', types()],
        ['invalid', []],
      ]),
    });
    expect(left).toEqual(['node0']);
  });
});

describe('§5.6 TTL (validation after the delay)', () => {
  const opts = { solver: reference, wellKnownLabels: wellKnown };

  it('should wait for the node TTL for non-empty nodes before consolidating', async () => {
    const s = env({
      nodes: [cheapNode({ name: 'node0', pods: pods(2) }), cheapNode({ name: 'node1', pods: pods(1) })],
    });
    const r = await reconcile(s);
    const v = await validate({ ...s, now: s.now + 31_000 }, cmd(r.decision), opts);
    expect(v.ok).toBe(true);
    expect(managedNodes(execute(s, r.decision)).map((n) => n.name)).toEqual(['node0']);
  });
  it('should not consolidate if the action picks different instance types after the node TTL wait', async () => {
    const s = env({ nodes: [bigNode({ name: 'node', pods: [pod({ cpu: '1' })] })] });
    const r = await reconcile(s);
    expect(cmd(r.decision).kind).toBe('replace');
    const v = await validate(
      withNode(s, 'node', (n) => bind(n, pod({ cpu: '1' }))),
      cmd(r.decision),
      opts,
    );
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.category).toBe('scheduling');
  });
  it('should not consolidate if the action becomes invalid during the node TTL wait', async () => {
    const s = env({ nodes: [bigNode({ name: 'node', pods: [pod({ cpu: '1' })] })] });
    const r = await reconcile(s);
    const v = await validate(
      withNode(s, 'node', (n) => bind(n, pod({ annotations: DND }))),
      cmd(r.decision),
      opts,
    );
    expect(v.ok).toBe(false);
    if (!v.ok)
      expect([v.category, v.eventMessage]).toEqual([
        'churn',
        expect.stringMatching(
          /^Consolidation rejected: replace: \[node\] -> \[1 replacement\], reason: churn \(savings: \$\d+\.\d\d\)$/,
        ),
      ]);
  });
  for (const [what, change] of [
    ['a pod with karpenter.sh/do-not-disrupt', (n: StateNode) => bind(n, pod({ annotations: DND }))],
    ['a pod with a blocking PDB', (n: StateNode) => bind(n, pod({ labels: { app: 'blocked' } }))],
  ] as const) {
    it(`should not replace node if ${what} schedules during the TTL wait`, async () => {
      const s = env({
        nodes: [bigNode({ name: 'node', pods: [pod({ cpu: '1' })] })],
        pdbs: [pdb('b', { matchLabels: { app: 'blocked' }, disruptionsAllowed: 0 })],
      });
      const r = await reconcile(s);
      expect((await validate(withNode(s, 'node', change), cmd(r.decision), opts)).ok).toBe(false);
    });
    it(`should not delete node if ${what} schedules during the TTL wait`, async () => {
      const s = env({
        nodes: [cheapNode({ name: 'node0', pods: pods(2) }), cheapNode({ name: 'node1', pods: pods(1) })],
        pdbs: [pdb('b', { matchLabels: { app: 'blocked' }, disruptionsAllowed: 0 })],
      });
      const r = await reconcile(s);
      expect(cmd(r.decision).candidates.map((c) => c.name)).toEqual(['node1']);
      expect((await validate(withNode(s, 'node1', change), cmd(r.decision), opts)).ok).toBe(false);
    });
  }
});

describe('§5.7 Multi-NodeClaim (3 most expensive 32-CPU nodes)', () => {
  const spotIt = () => mostExpensiveSpotInstance(types());
  for (const [variant, mk] of [
    ['on-demand', () => ({})],
    ['spot', () => ({ it: spotIt() })],
    ['mixed', (i: number) => (i === 1 ? { it: spotIt() } : {})],
  ] as const) {
    it(`can merge 3 nodes into 1 (${variant})`, async () => {
      const nodes = [0, 1, 2].map((i) => bigNode({ name: `n${i}`, pods: pods(1), ...mk(i) }));
      const { r, left } = await run(nodes);
      expect(cmd(r.decision)).toMatchObject({ kind: 'replace', method: 'multi' });
      expect(cmd(r.decision).candidates).toHaveLength(3);
      expect(left).toHaveLength(1);
      expect(left[0]).not.toMatch(/^n\d$/);
    });
  }
  it("won't merge 2 nodes into 1 of the same type", async () => {
    const nodes = [cheapNode({ name: 'node0', pods: pods(1) }), cheapNode({ name: 'node1', pods: pods(2) })];
    const { r, left } = await run(nodes);
    expect(cmd(r.decision)).toMatchObject({ kind: 'delete', method: 'single' });
    expect(left).toEqual(['node1']);
  });
  it('should wait for the node TTL for non-empty nodes before consolidating (multi-node)', async () => {
    const s = env({ nodes: [bigNode({ name: 'n0', pods: pods(1) }), bigNode({ name: 'n1', pods: pods(1) })] });
    const r = await reconcile(s);
    expect(cmd(r.decision)).toMatchObject({ kind: 'replace', method: 'multi' });
    expect(
      (await validate({ ...s, now: 31_000 }, cmd(r.decision), { solver: reference, wellKnownLabels: wellKnown })).ok,
    ).toBe(true);
    expect(managedNodes(execute(s, r.decision))).toHaveLength(1);
  });
  it('should consolidate multiple empty nodes via multi-nodeclaim consolidation', async () => {
    // In production order Emptiness deletes them first; Multi alone does the same.
    const s = env({ nodes: [0, 1, 2].map((i) => bigNode({ name: `n${i}` })) });
    expect(managedNodes(execute(s, (await reconcile(s)).decision))).toHaveLength(0);
    const multiOnly = await reconcile(s, { methods: ['multi'] });
    expect(multiOnly.decision.kind).toBe('noop'); // Multi leaves empty nodes to Emptiness (§1.4)
  });
  it('should continue to single nodeclaim consolidation when multi-nodeclaim consolidation fails validation', async () => {
    const s = env({
      nodes: [0, 1, 2].map((i) =>
        cheapNode({ name: `n${i + 1}`, allocatable: { cpu: '32', pods: '100' }, pods: pods(1, { cpu: '1' }) }),
      ),
    });
    const r = await reconcile(s);
    const multi = cmd(r.decision);
    expect(multi.method).toBe('multi');
    // during the wait, pods bind to node1 and node2
    const fresh = withNode(
      withNode(s, 'n1', (n) => bind(n, pod({ cpu: '1' }))),
      'n2',
      (n) => bind(n, pod({ cpu: '1' })),
    );
    const v = await validate(fresh, multi, { solver: reference, wellKnownLabels: wellKnown });
    expect(v.ok).toBe(false);
    // the controller goes on with single-node consolidation in the same loop
    const single = await reconcile(fresh, { methods: ['single'] });
    expect(cmd(single.decision).candidates.map((c) => c.name)).toEqual(['n3']);
    expect((await validate(fresh, cmd(single.decision), { solver: reference, wellKnownLabels: wellKnown })).ok).toBe(
      true,
    );
    expect(managedNodes(execute(fresh, single.decision))).toHaveLength(2);
  });
});
