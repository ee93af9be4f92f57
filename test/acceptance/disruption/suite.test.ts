// docs/karpenter/test-cases.md §1 (suite_test.go) at the engine level.
import { beforeEach, describe, expect, it } from 'vitest';
import { ModelCaches } from '../../../engine/model/caches.ts';
import type { StateNode } from '../../../engine/domain/types.ts';
import { budgetMapping } from '../../../engine/disruption/budgets.ts';
import { candidateSet, managedPools, newCandidate } from '../../../engine/disruption/candidates.ts';
import { evictionCost } from '../../../engine/disruption/pods.ts';
import { provisionablePending } from '../../../engine/disruption/pods.ts';
import { simulate } from '../../../engine/disruption/simulate.ts';
import { provision } from '../../../engine/solver/provision.ts';
import { pdb, pod, pods, resetIds } from '../../fixtures/builders.ts';
import {
  fakeInstanceType,
  fakeOffering,
  leastExpensiveInstance,
  mostExpensiveInstance,
} from '../../fixtures/instancetypes.ts';
import { bigNode, env, node, pool, reconcile, reference, start, types, wellKnown } from './harness.ts';

beforeEach(() => resetIds());

const DND = { 'karpenter.sh/do-not-disrupt': 'true' };
const blockingPdb = (labels: Record<string, string>) =>
  pdb('pdb', { matchLabels: labels, disruptionsAllowed: 0, maxUnavailable: 0 });

describe('§1.1 Simulate Scheduling', () => {
  it('should allow pods on deleting nodes to reschedule to uninitialized nodes', async () => {
    const nodes = Array.from({ length: 10 }, (_, i) =>
      bigNode({ name: `n${i}`, allocatable: { cpu: '3', pods: '100' }, markedForDeletion: i > 0 }),
    );
    const p = pod({ cpu: '2', memory: '100Mi' });
    nodes[0] = { ...nodes[0]!, pods: [{ ...p, nodeName: 'n0', phase: 'Running', unschedulable: false }] };
    const s = env({ nodePools: [pool({ consolidateAfter: null })], nodes });
    const sim = await simulate(
      s,
      [s.nodes[0]!],
      { solver: reference, wellKnownLabels: wellKnown, caches: new ModelCaches() },
      true,
    );
    expect(sim.errors.get(p.uid)).toBeUndefined();
    expect(sim.plan.newNodeClaims.flatMap((c) => c.pods)).toContain(p.uid);
  });

  it('should allow multiple replace operations to happen successively', async () => {
    const np = pool({
      consolidateAfter: null,
      budgets: [{ nodes: '3' }],
      requirements: [{ key: 'test-partition', operator: 'Exists', values: [] }],
    });
    const nodes = Array.from({ length: 10 }, (_, i) =>
      bigNode({
        name: `n${i}`,
        allocatable: { cpu: '3', memory: '8Gi', pods: '100' },
        labels: { 'test-partition': String(i) },
        conditions: { drifted: { reason: 'NodePoolDrifted', since: 0 }, initializedAt: 0 },
        pods: [pod({ cpu: '100m', memory: '100Mi', nodeSelector: { 'test-partition': String(i) } })],
      }),
    );
    let s = env({ nodePools: [np], nodes });
    for (const expected of [11, 12, 13]) {
      const r = await reconcile(s);
      expect(r.decision.kind).toBe('replace');
      if (r.decision.kind === 'noop') return;
      expect(r.decision.candidates).toHaveLength(1);
      expect(r.decision.replacements).toHaveLength(1);
      s = start(s, r.decision);
      expect(s.nodes).toHaveLength(expected);
      expect(s.nodes.filter((n) => n.markedForDeletion)).toHaveLength(expected - 10);
    }
    const r = await reconcile(s);
    expect(r.decision.kind).toBe('noop');
    expect(r.decision.explanations.find((e) => e.node === 'n3')?.code).toBe('budget');
  });

  it('can replace node with a local PV (ignoring hostname affinity)', async () => {
    const n = bigNode({
      name: 'local',
      pods: [
        pod({
          owner: { kind: 'StatefulSet', name: 'ss' },
          volumeRequirements: [[{ key: 'kubernetes.io/hostname', operator: 'In', values: ['local'] }]],
        }),
      ],
    });
    const r = await reconcile(env({ nodes: [n] }));
    expect(r.decision.kind).toBe('replace');
    if (r.decision.kind === 'noop') return;
    expect(r.decision.replacements).toHaveLength(1);
    expect(r.decision.replacements[0]!.instanceTypes.map((o) => o.name)).not.toContain(
      mostExpensiveInstance(types()).name,
    );
  });

  it('should ensure that we do not duplicate capacity for disrupted nodes with provisioning', async () => {
    const n = bigNode({
      name: 'drifted',
      conditions: { drifted: { reason: 'x', since: 0 }, initializedAt: 0 },
      pods: [pod()],
    });
    const s = env({ nodes: [n] });
    const r = await reconcile(s);
    expect(r.decision.kind).toBe('replace');
    // the command has not created its replacements yet, so the candidate is not marked: nothing is pending
    const plan = await provision(s, provisionablePending(s), { solver: reference, wellKnownLabels: wellKnown });
    expect(plan.newNodeClaims).toEqual([]);
  });
});

describe('§1.2 Disruption Taints (engine half: the command the controller taints for)', () => {
  it('should add and remove taints from NodeClaims that fail to disrupt', async () => {
    const current = fakeInstanceType({
      name: 'current-on-demand',
      offerings: [fakeOffering({ zone: 'test-zone-1a', capacityType: 'on-demand', price: 1.5, available: false })],
    });
    const replacement = fakeInstanceType({
      name: 'spot-replacement',
      offerings: [
        fakeOffering({ zone: 'test-zone-1a', capacityType: 'spot', price: 1.0 }),
        fakeOffering({ zone: 'test-zone-1b', capacityType: 'spot', price: 0.2 }),
        fakeOffering({ zone: 'test-zone-1c', capacityType: 'spot', price: 0.4 }),
      ],
    });
    const n = node(current, { name: 'n', allocatable: { cpu: '32', pods: '100' }, pods: [pod({ cpu: '100m' })] });
    const r = await reconcile(env({ nodes: [n], instanceTypes: [current, replacement] }));
    expect(r.decision.kind).toBe('replace');
    if (r.decision.kind === 'noop') return;
    expect(r.decision.reason).toBe('Underutilized');
    expect(r.decision.replacements[0]!.instanceTypes.map((o) => o.name)).toEqual(['spot-replacement']);
    expect(r.decision.replacements[0]!.requirements).toContainEqual({
      key: 'karpenter.sh/capacity-type',
      operator: 'In',
      values: ['spot'],
    });
  });
});

describe('§1.3 BuildDisruptionBudgetMapping (10 initialized nodes)', () => {
  const ten = () => Array.from({ length: 10 }, () => bigNode());
  const allowedFor = (nodes: StateNode[], budgets = [{ nodes: '100%' }]) => {
    const s = env({ nodePools: [pool({ budgets })], nodes });
    return (['Empty', 'Drifted', 'Underutilized'] as const).map((r) => budgetMapping(s, r).get('default')!.available);
  };

  it('should not consider nodes that are not managed as part of disruption count', () => {
    expect(allowedFor([...ten(), bigNode({ managed: false })])).toEqual([10, 10, 10]);
  });
  it('should not consider nodes that are not initialized as part of disruption count', () => {
    expect(allowedFor([...ten(), bigNode({ initialized: false })])).toEqual([10, 10, 10]);
  });
  it('should not consider nodes that have the terminating status condition', () => {
    expect(allowedFor([...ten(), bigNode({ instanceTerminating: true })])).toEqual([10, 10, 10]);
  });
  it('should not return a negative disruption value', () => {
    expect(
      allowedFor(
        ten().map((n) => ({ ...n, deleting: true })),
        [{ nodes: '10%' }],
      ),
    ).toEqual([0, 0, 0]);
  });
  it('should consider nodes with a deletion timestamp set and MarkedForDeletion to the disruption count', () => {
    const ns = ten();
    ns[0] = { ...ns[0]!, deleting: true };
    ns[1] = { ...ns[1]!, markedForDeletion: true };
    expect(allowedFor(ns)).toEqual([8, 8, 8]);
  });
  it('should consider not ready nodes to the disruption count', () => {
    const ns = ten();
    ns[0] = { ...ns[0]!, ready: false };
    ns[1] = { ...ns[1]!, ready: false };
    expect(allowedFor(ns)).toEqual([8, 8, 8]);
  });
});

describe('§1.4 Pod Eviction Cost', () => {
  const cost = (v: string) => evictionCost(pod({ annotations: { 'controller.kubernetes.io/pod-deletion-cost': v } }));
  it('should have a standard disruptionCost for a pod with no priority or disruptionCost specified', () =>
    expect(evictionCost(pod())).toBe(1));
  it('should have a higher disruptionCost for a pod with a positive deletionCost', () =>
    expect(cost('100')).toBeGreaterThan(1));
  it('should have a lower disruptionCost for a pod with a positive deletionCost', () =>
    expect(cost('-100')).toBeLessThan(1));
  it('should have higher costs for higher deletion costs', () => {
    expect(cost('101')).toBeGreaterThan(cost('100'));
    expect(cost('100')).toBeGreaterThan(cost('99'));
  });
  it('should have a higher disruptionCost for a pod with a higher priority', () =>
    expect(evictionCost(pod({ priority: 1 }))).toBeGreaterThan(1));
  it('should have a lower disruptionCost for a pod with a lower priority', () =>
    expect(evictionCost(pod({ priority: -1 }))).toBeLessThan(1));
});

describe('§1.5 Candidate Filtering', () => {
  const candidate = (
    n: StateNode,
    o: {
      cls?: 'graceful' | 'eventual';
      pdbs?: ReturnType<typeof pdb>[];
      queued?: Set<string>;
      pools?: ReturnType<typeof pool>[];
      now?: number;
    } = {},
  ) => {
    const s = env({ nodes: [n], pdbs: o.pdbs ?? [], now: o.now ?? 0, ...(o.pools ? { nodePools: o.pools } : {}) });
    return newCandidate(s, n, o.cls ?? 'graceful', managedPools(s), o.queued);
  };
  const error = (r: ReturnType<typeof candidate>) => (r.ok ? undefined : r.explanation);
  const TGP = 300_000;
  const labels = { app: 'test' };

  it('should not consider candidates that have do-not-disrupt pods scheduled and no terminationGracePeriod', () => {
    const e = error(candidate(bigNode({ pods: [pod({ name: 'p', annotations: DND })] })));
    expect(e?.event).toEqual({
      reason: 'DisruptionBlocked',
      message: 'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/p)',
    });
    expect(e?.message).toBe('pod default/p has karpenter.sh/do-not-disrupt');
  });
  it('should not consider candidates that have do-not-disrupt mirror pods scheduled', () => {
    expect(
      error(candidate(bigNode({ pods: [pod({ annotations: DND, owner: { kind: 'Node', name: 'n' } })] })))?.code,
    ).toBe('pod-do-not-disrupt');
  });
  it('should not consider candidates that have do-not-disrupt daemonset pods scheduled', () => {
    expect(
      error(candidate(bigNode({ pods: [pod({ annotations: DND, owner: { kind: 'DaemonSet', name: 'd' } })] })))?.code,
    ).toBe('pod-do-not-disrupt');
  });
  it('should consider candidates that have do-not-disrupt pods scheduled with a terminationGracePeriod set for eventual disruption', () => {
    expect(
      candidate(bigNode({ terminationGracePeriod: TGP, pods: [pod({ annotations: DND })] }), { cls: 'eventual' }).ok,
    ).toBe(true);
  });
  it('should consider candidates that have PDB-blocked pods scheduled with a terminationGracePeriod set for eventual disruption', () => {
    expect(
      candidate(bigNode({ terminationGracePeriod: TGP, pods: [pod({ labels })] }), {
        cls: 'eventual',
        pdbs: [blockingPdb(labels)],
      }).ok,
    ).toBe(true);
  });
  it('should not consider candidates that have do-not-disrupt pods scheduled with a terminationGracePeriod set for graceful disruption', () => {
    expect(error(candidate(bigNode({ terminationGracePeriod: TGP, pods: [pod({ annotations: DND })] })))?.code).toBe(
      'pod-do-not-disrupt',
    );
  });
  it('should not consider candidates that have PDB-blocked pods scheduled with a terminationGracePeriod set for graceful disruption', () => {
    const e = error(
      candidate(bigNode({ terminationGracePeriod: TGP, pods: [pod({ labels })] }), { pdbs: [blockingPdb(labels)] }),
    );
    expect(e?.event?.message).toBe('Pdb prevents pod evictions (PodDisruptionBudget=[default/pdb])');
    expect(e?.message).toMatch(/^pdb default\/pdb allows 0 disruptions/);
  });
  it('should not consider candidates that have do-not-disrupt pods scheduled without a terminationGracePeriod set for eventual disruption', () => {
    expect(error(candidate(bigNode({ pods: [pod({ annotations: DND })] }), { cls: 'eventual' }))?.code).toBe(
      'pod-do-not-disrupt',
    );
  });
  it('should not consider candidates that have PDB-blocked pods scheduled without a terminationGracePeriod set for eventual disruption', () => {
    expect(
      error(candidate(bigNode({ pods: [pod({ labels })] }), { cls: 'eventual', pdbs: [blockingPdb(labels)] }))?.code,
    ).toBe('pdb-blocked');
  });
  it('should consider candidates that have do-not-disrupt terminating pods', () => {
    expect(candidate(bigNode({ pods: [pod({ annotations: DND, deletionTimestamp: 1 })] })).ok).toBe(true);
  });
  it('should consider candidates that have do-not-disrupt terminal pods', () => {
    expect(
      candidate(
        bigNode({
          pods: [
            pod({ annotations: DND, phase: 'Succeeded', nodeName: 'x' }),
            pod({ annotations: DND, phase: 'Failed', nodeName: 'x' }),
          ],
        }),
      ).ok,
    ).toBe(true);
  });
  it('should not consider candidates that have do-not-disrupt on nodes', () => {
    const e = error(candidate(bigNode({ annotations: DND })));
    expect(e?.message).toBe('disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation');
    expect(e?.event?.message).toBe('Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation');
  });
  it('should not consider candidates that have fully blocking PDBs and multiple PDBs on a pod', () => {
    const e = error(
      candidate(bigNode({ pods: [pod({ labels })] }), {
        pdbs: [
          pdb('a', { matchLabels: labels, disruptionsAllowed: 1 }),
          pdb('b', { matchLabels: labels, disruptionsAllowed: 1 }),
        ],
      }),
    );
    expect(e?.event?.message).toMatch(/^Eviction does not support multiple PDBs/);
    expect(e?.event?.message).toContain('default/a');
    expect(e?.event?.message).toContain('default/b');
  });
  it('should not consider candidates that have fully blocking PDBs', () => {
    expect(error(candidate(bigNode({ pods: [pod({ labels })] }), { pdbs: [blockingPdb(labels)] }))?.code).toBe(
      'pdb-blocked',
    );
  });
  it('should not consider candidates that have fully blocking PDBs on daemonset pods', () => {
    expect(
      error(
        candidate(bigNode({ pods: [pod({ labels, owner: { kind: 'DaemonSet', name: 'd' } })] }), {
          pdbs: [blockingPdb(labels)],
        }),
      )?.code,
    ).toBe('pdb-blocked');
  });
  it('should consider candidates that have fully blocking PDBs on mirror pods', () => {
    expect(
      candidate(bigNode({ pods: [pod({ labels, owner: { kind: 'Node', name: 'n' } })] }), {
        pdbs: [blockingPdb(labels)],
      }).ok,
    ).toBe(true);
  });
  it('should not consider candidates that have fully blocking PDBs without a terminationGracePeriod set for graceful disruption', () => {
    expect(candidate(bigNode({ pods: [pod({ labels })] }), { pdbs: [blockingPdb(labels)] }).ok).toBe(false);
  });
  it('should consider candidates that have fully blocking PDBs on terminal pods', () => {
    expect(
      candidate(bigNode({ pods: [pod({ labels, phase: 'Succeeded', nodeName: 'x' })] }), {
        pdbs: [blockingPdb(labels)],
      }).ok,
    ).toBe(true);
  });
  it('should consider candidates that have fully blocking PDBs on terminating pods', () => {
    expect(
      candidate(bigNode({ pods: [pod({ labels, deletionTimestamp: 1 })] }), { pdbs: [blockingPdb(labels)] }).ok,
    ).toBe(true);
  });
  it('should not consider candidates that is just a Node representation', () => {
    expect(error(candidate(bigNode({ managed: false })))?.message).toBe("node isn't managed by karpenter");
  });
  it('should not consider candidate that is just a NodeClaim representation', () => {
    expect(error(candidate(bigNode({ hasNode: false })))?.message).toBe('nodeclaim does not have an associated node');
  });
  it('should not consider candidates that are nominated', () => {
    const e = error(candidate(bigNode({ nominatedUntil: 20_000 }), { now: 0 }));
    expect(e?.message).toBe('node is nominated for a pending pod');
    expect(e?.event?.reason).toBe('DisruptionBlocked');
    expect(candidate(bigNode({ nominatedUntil: 20_000 }), { now: 20_000 }).ok).toBe(true);
  });
  it('should not consider candidates that are deleting', () => {
    expect(error(candidate(bigNode({ deleting: true })))?.message).toBe('node is deleting or marked for deletion');
  });
  it('should not consider candidates that are MarkedForDeletion', () => {
    expect(error(candidate(bigNode({ markedForDeletion: true })))?.message).toBe(
      'node is deleting or marked for deletion',
    );
  });
  it('should not consider candidates that are not initialized', () => {
    expect(error(candidate(bigNode({ initialized: false })))?.message).toBe("node isn't initialized");
  });
  it('should not consider candidates that are not owned by a NodePool (no karpenter.sh/nodepool label)', () => {
    const n = bigNode();
    const { ['karpenter.sh/nodepool']: _, ...labels2 } = n.labels;
    expect(error(candidate({ ...n, labels: labels2 }))?.message).toBe(
      "node doesn't have required label (label=karpenter.sh/nodepool)",
    );
  });
  it('should not consider candidates that are have a non-existent NodePool', () => {
    const e = error(candidate(bigNode({ nodePool: 'gone' })));
    expect(e?.message).toBe('nodepool not found (NodePool=gone)');
    expect(e?.event?.message).toBe('NodePool not found (NodePool=gone)');
  });
  it('should consider candidates that do not have the karpenter.sh/capacity-type label', () => {
    const n = bigNode();
    const { ['karpenter.sh/capacity-type']: _, ...l } = n.labels;
    expect(candidate({ ...n, labels: l }).ok).toBe(true);
  });
  it('should consider candidates that do not have the topology.kubernetes.io/zone label', () => {
    const n = bigNode();
    const { ['topology.kubernetes.io/zone']: _, ...l } = n.labels;
    expect(candidate({ ...n, labels: l }).ok).toBe(true);
  });
  it('should consider candidates that do not have the node.kubernetes.io/instance-type label', () => {
    const n = bigNode();
    const { ['node.kubernetes.io/instance-type']: _, ...l } = n.labels;
    const r = candidate({ ...n, labels: l });
    expect(r.ok && r.candidate.instanceType).toBeUndefined();
  });
  it('should consider candidates that have an instance type that cannot be resolved', () => {
    const n = bigNode({ labels: { 'node.kubernetes.io/instance-type': 'unknown' } });
    const r = candidate(n);
    expect(r.ok).toBe(true);
    expect(r.ok && r.candidate.price).toBe(0);
  });
  it('should not consider candidates that are actively being processed in the queue', () => {
    const n = bigNode();
    const r = candidate(n, { queued: new Set([n.providerId!]) });
    expect(!r.ok && r.explanation.message).toBe('candidate is already being disrupted');
    expect(!r.ok && r.explanation.event).toBeUndefined();
  });
});

describe('§1.6 Metrics (3 leastExpensive nodes, budgets 100%)', () => {
  const cheap = () => leastExpensiveInstance(types());
  const three = (o: (i: number) => Parameters<typeof bigNode>[0]) =>
    Array.from({ length: 3 }, (_, i) => bigNode({ it: cheap(), name: `n${i}`, ...o(i) }));
  const labelsOf = async (nodes: StateNode[]) => {
    const r = await reconcile(env({ nodes }));
    return r.decision.kind === 'noop' ? undefined : r.decision.metricLabels;
  };

  it('should fire metrics for single node empty disruption', async () => {
    expect(await labelsOf(three((i) => ({ pods: i === 0 ? [] : [pod()] })))).toEqual({
      decision: 'delete',
      reason: 'empty',
      consolidation_type: 'empty',
    });
  });
  it('should fire metrics for single node delete disruption', async () => {
    const nodes = three((i) => ({
      pods: pods(2),
      ...(i === 0
        ? { conditions: { drifted: { reason: 'x', since: 0 }, initializedAt: 0 } }
        : { conditions: { initializedAt: 0 } }),
    })).slice(0, 2);
    expect(await labelsOf(nodes)).toEqual({ decision: 'delete', reason: 'drifted', consolidation_type: '' });
  });
  it('should fire metrics for single node replace disruption', async () => {
    const n = bigNode({ pods: pods(4), conditions: { drifted: { reason: 'x', since: 0 }, initializedAt: 0 } });
    expect(await labelsOf([n])).toEqual({ decision: 'replace', reason: 'drifted', consolidation_type: '' });
  });
  it('should fire metrics for multi-node empty disruption', async () => {
    expect(await labelsOf(three(() => ({ pods: [] })))).toEqual({
      decision: 'delete',
      reason: 'empty',
      consolidation_type: 'empty',
    });
  });
  it('should fire metrics for multi-node delete disruption', async () => {
    const r = await reconcile(env({ nodes: three(() => ({ pods: [pod()] })) }));
    expect(r.decision.kind !== 'noop' && r.decision.metricLabels).toEqual({
      decision: 'delete',
      reason: 'underutilized',
      consolidation_type: 'multi',
    });
    expect(r.decision.kind !== 'noop' && r.decision.candidates).toHaveLength(2);
  });
  // four pods bound 1, 1, 2 on three of the most expensive nodes
  const spread = () => [pods(1), pods(1), pods(2)].map((ps, i) => bigNode({ name: `n${i}`, pods: ps }));
  it('should fire metrics for multi-node replace disruption', async () => {
    const nodes = spread();
    expect(await labelsOf(nodes)).toEqual({
      decision: 'replace',
      reason: 'underutilized',
      consolidation_type: 'multi',
    });
  });
  it('should stop multi-node consolidation after context deadline is reached', async () => {
    const nodes = spread();
    let t = 0;
    const r = await reconcile(env({ nodes }), { methods: ['multi'], elapsedMs: () => (t += 61_000) });
    expect(r.decision.kind).toBe('noop');
    expect(r.metrics.timeouts.multi).toBe(1);
  });
});

describe('candidate sets', () => {
  it('builds the graceful and eventual sets from the same nodes', () => {
    const tgp = bigNode({ name: 'tgp', terminationGracePeriod: 60_000, pods: [pod({ annotations: DND })] });
    const s = env({ nodes: [tgp, bigNode({ name: 'plain' })] });
    expect(candidateSet(s, 'graceful').all.map((c) => c.node.name)).toEqual(['plain']);
    expect(candidateSet(s, 'eventual').all.map((c) => c.node.name)).toEqual(['tgp', 'plain']);
  });
});
