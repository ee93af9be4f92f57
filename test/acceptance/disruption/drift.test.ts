// docs/karpenter/test-cases.md §3 (drift_test.go): NodePool consolidateAfter 1h, budget 100%; nodes of the most
// expensive type with 32 CPU, Drifted=True, Consolidatable cleared.
import { beforeEach, describe, expect, it } from 'vitest';
import type { Snapshot, StateNode } from '../../../engine/domain/types.ts';
import { applyCommand } from '../../../engine/disruption/apply.ts';
import type { Command } from '../../../engine/disruption/types.ts';
import { HARNESS_ORDER } from '../../../engine/disruption/types.ts';
import { pdb, pod, pods, resetIds } from '../../fixtures/builders.ts';
import { fakeInstanceType, fakeOffering } from '../../fixtures/instancetypes.ts';
import { bigNode, env, execute, GiB, managedNodes, node, pool, reconcile, start } from './harness.ts';

beforeEach(() => resetIds());

const HOUR = 3600_000;
const driftPool = (o: Parameters<typeof pool>[0] = {}) => pool({ consolidateAfter: HOUR, ...o });
const drifted = (o: Parameters<typeof bigNode>[0] = {}, since = 0) =>
  bigNode({ conditions: { initializedAt: 0, drifted: { reason: 'NodePoolDrifted', since } }, ...o });
const DND = { 'karpenter.sh/do-not-disrupt': 'true' };

async function once(nodes: StateNode[], o: Partial<Snapshot> = {}) {
  const s = env({ nodePools: [driftPool()], nodes, ...o });
  const r = await reconcile(s);
  return { s, r, after: execute(s, r.decision) };
}

describe('§3.1 Metrics', () => {
  it('should correctly report eligible drifted nodes', async () => {
    const n = drifted({ pods: [pod({ annotations: DND })] });
    expect((await once([n])).r.metrics.eligibleNodes.Drifted).toBe(0);
    expect((await once([{ ...n, pods: [pod()] }])).r.metrics.eligibleNodes.Drifted).toBe(1);
  });
});

describe('§3.2 Budgets (10 nodes)', () => {
  it('should only consider 3 nodes allowed to be disrupted because of budgets', async () => {
    const s = env({
      nodePools: [driftPool({ budgets: [{ nodes: '30%' }] })],
      nodes: Array.from({ length: 10 }, () => drifted()),
    });
    const r = await reconcile(s, { methods: ['drift'] });
    expect(r.metrics.allowedDisruptions).toEqual([
      { nodePool: 'default', reason: 'Drifted', allowed: 3, disrupting: 0 },
    ]);
  });

  it('should disrupt 3 nodes, taking into account commands in progress', async () => {
    const nodes = Array.from({ length: 10 }, (_, i) =>
      i < 5 ? drifted({ pods: [pod()] }) : bigNode({ conditions: { initializedAt: 0 } }),
    );
    let s = env({ nodePools: [driftPool({ budgets: [{ nodes: '30%' }] })], nodes });
    const commands: Command[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await reconcile(s);
      if (r.decision.kind === 'noop') continue;
      commands.push(r.decision);
      s = start(s, r.decision);
    }
    expect(s.nodes.filter((n) => n.markedForDeletion)).toHaveLength(3);
    for (const c of commands) s = applyCommand(s, c);
    expect(managedNodes(s)).toHaveLength(7);
  });

  it('should respect budgets for multiple nodepools', async () => {
    const pools = Array.from({ length: 10 }, (_, i) =>
      driftPool({ name: `pool-${i}`, budgets: [{ nodes: '1' }], consolidateAfter: null, expireAfter: null }),
    );
    const nodes = pools.flatMap((p) => [0, 1, 2].map((j) => drifted({ nodePool: p.name, pods: j < 2 ? [pod()] : [] })));
    let s = env({ nodePools: pools, nodes });
    const commands: Command[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await reconcile(s);
      if (i === 0)
        expect(r.metrics.allowedDisruptions.filter((g) => g.reason === 'Drifted').map((g) => g.allowed)).toEqual(
          Array(10).fill(1),
        );
      if (r.decision.kind === 'noop') break;
      commands.push(r.decision);
      s = start(s, r.decision);
    }
    expect(commands).toHaveLength(10);
    expect(commands.every((c) => c.metricLabels.reason === 'drifted')).toBe(true);
    expect(new Set(commands.map((c) => c.candidates[0]!.nodePool)).size).toBe(10);
    for (const c of commands) s = applyCommand(s, c);
    expect(managedNodes(s)).toHaveLength(20);
  });
});

describe('§3.3 Drift', () => {
  it('should continue to the next drifted node if the first cannot reschedule all pods', async () => {
    const node1 = drifted({
      name: 'node1',
      allocatable: { cpu: '200', memory: '256Gi', pods: '100' },
      pods: [pod({ cpu: '150' })],
    });
    const small = node(
      fakeInstanceType({
        name: 'one-cpu',
        resources: { cpu: 1000, memory: GiB },
        offerings: [fakeOffering({ zone: 'test-zone-1', capacityType: 'on-demand', price: 0.2 })],
      }),
      {
        name: 'node2',
        conditions: { initializedAt: 0, drifted: { reason: 'x', since: 1 } },
        pods: [pod({ cpu: '100m' })],
      },
    );
    const { r, after } = await once([node1, small]);
    expect(r.decision.kind !== 'noop' && r.decision.candidates.map((c) => c.name)).toEqual(['node2']);
    expect(r.decision.explanations.find((e) => e.node === 'node1')?.code).toBe('pods-would-not-schedule');
    expect(managedNodes(after).map((n) => n.name)).toContain('node1');
  });
  it('should ignore nodes without the drifted status condition', async () => {
    expect((await once([bigNode({ conditions: { initializedAt: 0 } })])).r.decision.kind).toBe('noop');
  });
  it('should ignore nodes with the drifted status condition set to false', async () => {
    expect((await once([bigNode({ conditions: { initializedAt: 0 } })])).r.metrics.eligibleNodes.Drifted).toBe(0);
  });
  it('should ignore nodes with the karpenter.sh/do-not-disrupt annotation', async () => {
    expect((await once([drifted({ annotations: DND })])).r.decision.kind).toBe('noop');
  });
  it('should delete drifted nodes with the karpenter.sh/do-not-disrupt annotation set to false', async () => {
    const { r, after } = await once([
      drifted({ name: 'd', annotations: { 'karpenter.sh/do-not-disrupt': 'false' }, pods: [pod()] }),
      bigNode({ name: 'room', conditions: { initializedAt: 0 } }),
    ]);
    expect(r.decision.kind).toBe('delete');
    expect(managedNodes(after).map((n) => n.name)).toEqual(['room']);
  });
  it('should not create replacements for drifted nodes that have do-not-disrupt pods', async () => {
    const { r } = await once([drifted({ pods: [pod({ annotations: DND })] })]);
    expect(r.decision.kind).toBe('noop');
  });
  it('should not create replacements for drifted nodes that have do-not-disrupt pods with NodePool TerminationGracePeriod not nil', async () => {
    const s = env({
      nodePools: [driftPool({ terminationGracePeriod: 300_000 })],
      nodes: [drifted({ pods: [pod({ annotations: DND })] })],
    });
    expect((await reconcile(s)).decision.kind).toBe('noop');
  });
  it('should not create replacements for drifted nodes that have pods with blocking PDBs when TGP is set', async () => {
    const labels = { app: 'db' };
    const s = env({
      nodePools: [driftPool()],
      nodes: [drifted({ terminationGracePeriod: 300_000, pods: [pod({ labels })] })],
      pdbs: [pdb('db', { matchLabels: labels, disruptionsAllowed: 0, maxUnavailable: 0 })],
    });
    const r = await reconcile(s);
    // the blocked pod is not "currently reschedulable": nothing to move, so a delete without a replacement
    expect(r.decision.kind).toBe('delete');
    expect(r.decision.kind !== 'noop' && r.decision.replacements).toEqual([]);
  });
  it('should not drift nodes with pods that have a duration-based do-not-disrupt still active', async () => {
    const n = drifted({ pods: [pod({ annotations: { 'karpenter.sh/do-not-disrupt': '2m' }, startTime: 0 })] });
    expect((await once([n], { now: 0 })).r.decision.kind).toBe('noop');
    const later = await once([n], { now: 3 * 60_000 });
    expect(later.r.decision.kind).toBe('replace');
    expect(later.after.nodes).toHaveLength(1);
  });
  it('should drift nodes with pods that have an invalid do-not-disrupt format', async () => {
    const { after } = await once([
      drifted({ name: 'd', pods: [pod({ annotations: { 'karpenter.sh/do-not-disrupt': 'invalid-format' } })] }),
      bigNode({ name: 'other', conditions: { initializedAt: 0 } }),
    ]);
    expect(managedNodes(after).map((n) => n.name)).toEqual(['other']);
    expect(after.nodes[0]!.pods).toHaveLength(1);
  });
  it('should not drift nodes until the longest duration-based do-not-disrupt expires', async () => {
    const n = drifted({
      pods: [
        pod({ annotations: { 'karpenter.sh/do-not-disrupt': '1m' }, startTime: 0 }),
        pod({ annotations: { 'karpenter.sh/do-not-disrupt': '3m' }, startTime: 0 }),
      ],
    });
    expect((await once([n], { now: 0 })).r.decision.kind).toBe('noop');
    expect((await once([n], { now: 2 * 60_000 })).r.decision.kind).toBe('noop');
    expect((await once([n], { now: 4 * 60_000 })).r.decision.kind).toBe('replace');
  });
  it('should replace drifted nodes', async () => {
    const { r, after } = await once([drifted({ name: 'old', pods: [pod()] })]);
    expect(r.decision.kind !== 'noop' && r.decision.replacements).toHaveLength(1);
    expect(managedNodes(after)).toHaveLength(1);
    expect(managedNodes(after)[0]!.name).not.toBe('old');
  });
  it('should delete drifted nodes', async () => {
    const { r, after } = await once([
      drifted({ name: 'd', pods: [pod()] }),
      bigNode({ name: 'room', conditions: { initializedAt: 0 } }),
    ]);
    expect(r.decision.kind).toBe('delete');
    expect(managedNodes(after).map((n) => n.name)).toEqual(['room']);
  });
  it('should delete drifted nodes when they are empty and consolidation is disabled', async () => {
    const s = env({ nodePools: [driftPool({ consolidateAfter: null })], nodes: [drifted()] });
    const r = await reconcile(s);
    expect(r.decision.kind !== 'noop' && r.decision.reason).toBe('Drifted');
    expect(r.metrics.eligibleNodes.Drifted).toBe(1);
    expect(managedNodes(execute(s, r.decision))).toHaveLength(0);
  });
  it('should drift empty nodes before non-empty nodes', async () => {
    const s = env({
      nodePools: [driftPool({ consolidateAfter: null })],
      nodes: [drifted({ name: 'node', pods: [pod()] }), drifted({ name: 'node2' })],
    });
    const r = await reconcile(s);
    expect(r.decision.kind !== 'noop' && r.decision.candidates.map((c) => c.name)).toEqual(['node2']);
    expect(r.metrics.eligibleNodes.Drifted).toBe(2);
    expect(managedNodes(execute(s, r.decision)).map((n) => n.name)).toEqual(['node']);
  });
  it('should delete drifted nodes when they are empty and consolidatable', async () => {
    const n = drifted({ conditions: { initializedAt: 0, consolidatable: true, drifted: { reason: 'x', since: 0 } } });
    // Production order: Emptiness takes it first (reason Empty); the upstream harness order reaches Drift first.
    expect((await once([n])).r.decision).toMatchObject({ kind: 'delete', reason: 'Empty' });
    const s = env({ nodePools: [driftPool()], nodes: [n] });
    const harness = await reconcile(s, { methods: HARNESS_ORDER });
    expect(harness.decision).toMatchObject({ kind: 'delete', reason: 'Drifted' });
    expect(harness.metrics.eligibleNodes.Drifted).toBe(1);
  });
  it('should untaint nodes when drift replacement fails (engine half: the replace command the queue would roll back)', async () => {
    const { r } = await once([drifted({ pods: [pod()] })]);
    expect(r.decision).toMatchObject({
      kind: 'replace',
      reason: 'Drifted',
      metricLabels: { decision: 'replace', reason: 'drifted', consolidation_type: '' },
    });
  });
  it('can replace drifted nodes with multiple nodes', async () => {
    const three = fakeInstanceType({
      name: 'three-cpu',
      resources: { cpu: 3000, memory: 8 * GiB, pods: 10 },
      offerings: [fakeOffering({ zone: 'test-zone-1', capacityType: 'on-demand', price: 0.5 })],
    });
    const eight = fakeInstanceType({
      name: 'eight-cpu',
      resources: { cpu: 8000, memory: 8 * GiB, pods: 10 },
      offerings: [fakeOffering({ zone: 'test-zone-1', capacityType: 'on-demand', price: 1, available: false })],
    });
    const n = node(eight, {
      name: 'old',
      conditions: { initializedAt: 0, drifted: { reason: 'x', since: 0 } },
      pods: pods(3, { cpu: '2' }),
    });
    const s = env({ nodePools: [driftPool()], nodes: [n], instanceTypes: [eight, three] });
    const r = await reconcile(s);
    expect(r.decision.kind !== 'noop' && r.decision.replacements).toHaveLength(3);
    const after = execute(s, r.decision);
    expect(managedNodes(after)).toHaveLength(3);
    expect(after.nodes.every((x) => x.pods.length === 1)).toBe(true);
  });
  it('should drift one non-empty node at a time, starting with the earliest drift', async () => {
    const nodeA = drifted({ name: 'node', pods: [pod({ cpu: '30' })] }, HOUR);
    const nodeB = drifted({ name: 'node2', pods: [pod({ cpu: '30' })] }, 0);
    const { r } = await once([nodeA, nodeB]);
    expect(r.decision.kind !== 'noop' && r.decision.candidates.map((c) => c.name)).toEqual(['node2']);
    expect(r.decision.kind !== 'noop' && r.decision.replacements).toHaveLength(1);
  });
});

describe('§3.4 Static NodePool', () => {
  it('should not consider static nodepool for drift', async () => {
    const s = env({ nodePools: [driftPool({ replicas: 2 })], nodes: [drifted(), drifted()] });
    const r = await reconcile(s, { methods: ['drift'] });
    expect(r.metrics.eligibleNodes.Drifted).toBe(0);
    expect(r.decision.kind).toBe('noop');
  });
});
