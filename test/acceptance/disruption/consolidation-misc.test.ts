// docs/karpenter/test-cases.md §5.8-§5.15 (consolidation_test.go): savings ratio, topology, parallelization,
// preferences, minValues policy, buffer pods, static pools. §5.11 (reserved capacity) is in reserved.test.ts.
import { beforeEach, describe, expect, it } from 'vitest';
import type { EngineOptions, Pod, StateNode } from '../../../engine/domain/types.ts';
import { provisionablePending } from '../../../engine/disruption/pods.ts';
import type { Command, Decision } from '../../../engine/disruption/types.ts';
import { provision } from '../../../engine/solver/provision.ts';
import { pod, pods, resetIds } from '../../fixtures/builders.ts';
import { leastExpensiveInstance, mostExpensiveInstance } from '../../fixtures/instancetypes.ts';
import {
  bigNode,
  env,
  execute,
  managedNodes,
  OPTIONS,
  pool,
  reconcile,
  reference,
  start,
  types,
  wellKnown,
} from './harness.ts';

beforeEach(() => resetIds());

const cmd = (d: Decision): Command => {
  if (d.kind === 'noop')
    throw new Error(`expected a command: ${d.explanations.map((e) => `${e.node}: ${e.message}`).join('; ')}`);
  return d;
};
const cheapNode = (o: Parameters<typeof bigNode>[0] = {}) => bigNode({ it: leastExpensiveInstance(types()), ...o });
const inZone = (zone: string, cheapest: boolean) => {
  const od = types().filter((t) => t.offerings.some((o) => o.capacityType === 'on-demand' && o.zone === zone));
  const sorted = [...od].sort((a, b) => a.offerings[0]!.price - b.offerings[0]!.price);
  return cheapest ? sorted[0]! : sorted.at(-1)!;
};

describe('§5.8 Node Lifetime Consideration', () => {
  it('should consolidate the node with the best savings ratio first', async () => {
    const p = pool({ expireAfter: 3000 });
    const s = env({
      nodePools: [p],
      nodes: [cheapNode({ name: 'node0', pods: pods(2) }), cheapNode({ name: 'node1', pods: pods(1) })],
    });
    const r = await reconcile(s);
    expect(cmd(r.decision).candidates.map((c) => c.name)).toEqual(['node1']);
  });
});

describe('§5.9 Topology Consideration', () => {
  const spread = {
    maxSkew: 1,
    topologyKey: 'topology.kubernetes.io/zone',
    whenUnsatisfiable: 'DoNotSchedule' as const,
    labelSelector: { matchLabels: { app: 'test' } },
  };

  it('can replace node maintaining zonal topology spread', async () => {
    const mk = (zone: string, cheapest: boolean, name: string) =>
      bigNode({
        it: inZone(zone, cheapest),
        name,
        zone,
        pods: [pod({ cpu: '1', labels: { app: 'test' }, spread: [spread] })],
      });
    const nodes = [mk('test-zone-1', true, 'z1'), mk('test-zone-2', false, 'z2'), mk('test-zone-3', true, 'z3')];
    const s = env({ nodes });
    const r = await reconcile(s);
    expect(cmd(r.decision).candidates.map((c) => c.name)).toEqual(['z2']);
    const after = managedNodes(execute(s, r.decision));
    expect(after).toHaveLength(3);
    const zones = after.map((n) => n.labels['topology.kubernetes.io/zone']).sort();
    expect(zones).toEqual(['test-zone-1', 'test-zone-2', 'test-zone-3']);
  });
  it("won't delete node if it would violate pod anti-affinity", async () => {
    const anti = {
      podAntiAffinity: {
        required: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'test' } } }],
      },
    };
    const nodes = ['test-zone-1', 'test-zone-2', 'test-zone-3'].map((zone, i) =>
      bigNode({
        it: inZone(zone, true),
        name: `n${i}`,
        zone,
        pods: [pod({ labels: { app: 'test' }, affinity: anti })],
      }),
    );
    const r = await reconcile(env({ nodes }));
    expect(r.decision.kind).toBe('noop');
  });
});

describe('§5.10 Parallelization', () => {
  it('should not schedule an additional node when receiving pending pods while consolidating', async () => {
    const s = env({ nodes: [bigNode({ name: 'old', pods: [pod({ cpu: '1' })] })] });
    const r = await reconcile(s);
    expect(cmd(r.decision).kind).toBe('replace');
    const started = start(s, r.decision);
    expect(managedNodes(started)).toHaveLength(2);
    const pending = pod({ cpu: '100m' });
    const after = { ...started, pendingPods: [pending] };
    const plan = await provision(after, provisionablePending(after), { solver: reference, wellKnownLabels: wellKnown });
    expect(plan.newNodeClaims).toHaveLength(0);
    expect([...plan.existing.keys()]).toEqual(['old-r0']);
  });
  it('should not consolidate a node that is launched for pods on a deleting node', async () => {
    const s = env({ nodes: [bigNode({ name: 'old', pods: [pod({ cpu: '1' })] })] });
    const r = await reconcile(s);
    const started = start(s, r.decision, { initialized: false });
    const again = await reconcile(started);
    expect(again.decision.kind).toBe('noop');
    expect(again.decision.explanations.map((e) => [e.node, e.code])).toEqual([
      ['old', 'deleting'],
      ['old-r0', 'not-initialized'],
    ]);
  });
});

describe('§5.12 Preferences (PreferencePolicy=Ignore)', () => {
  const ignore: EngineOptions = { ...OPTIONS, preferencePolicy: 'Ignore' };
  it('should consolidate through deletion when ignoring preferences', async () => {
    const pref = {
      podAntiAffinity: {
        preferred: [
          {
            weight: 100,
            podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'test' } } },
          },
        ],
      },
    };
    const mk = (): Pod => pod({ labels: { app: 'test' }, affinity: pref });
    const s = env({
      options: ignore,
      nodes: [cheapNode({ name: 'node0', pods: [mk(), mk()] }), cheapNode({ name: 'node1', pods: [mk()] })],
    });
    const r = await reconcile(s);
    expect(cmd(r.decision)).toMatchObject({ kind: 'delete' });
    expect(managedNodes(execute(s, r.decision)).map((n) => n.name)).toEqual(['node0']);
  });
  it('should consolidate through replacement when ignoring preferences', async () => {
    const expensive = mostExpensiveInstance(types()).name;
    const p = pod({
      preferred: [
        {
          weight: 100,
          expressions: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: [expensive] }],
        },
      ],
    });
    const r = await reconcile(env({ options: ignore, nodes: [bigNode({ pods: [p] })] }));
    expect(cmd(r.decision).kind).toBe('replace');
    expect(cmd(r.decision).replacements[0]!.instanceTypes.map((o) => o.name)).not.toContain(expensive);
  });
});

describe('§5.13 MinValuesPolicy', () => {
  it('should not consolidate by relaxing minValues when policy is BestEffort', async () => {
    const p = pool({
      requirements: [
        {
          key: 'node.kubernetes.io/instance-type',
          operator: 'In',
          values: types()
            .filter((t) => t.name.includes('amd64-linux-test-zone-1-on-demand'))
            .slice(0, 20)
            .map((t) => t.name),
          minValues: 50,
        },
      ],
    });
    const s = env({
      nodePools: [p],
      options: { ...OPTIONS, minValuesPolicy: 'BestEffort' },
      nodes: [bigNode({ name: 'n', pods: [pod({ cpu: '1' })] })],
    });
    const r = await reconcile(s);
    expect(r.decision.kind).toBe('noop');
    const e = r.decision.explanations.find((x) => x.node === 'n')!;
    expect(e.event?.message).toContain(
      'minValues requirement is not met for label(s) (label(s)=[node.kubernetes.io/instance-type])',
    );
  });
});

describe('§5.14 Buffer Pods', () => {
  const buffered = (n: StateNode, count: number): StateNode => ({ ...n, bufferPods: count });
  it('should not empty-consolidate a node with only buffer pods', async () => {
    const s = env({ nodes: [buffered(bigNode({ name: 'b' }), 2)] });
    const r = await reconcile(s);
    expect(r.decision.kind).toBe('noop');
  });
  it('should allow consolidation of a node with real pods and buffer pods to a cheaper instance', async () => {
    const r = await reconcile(env({ nodes: [buffered(bigNode({ name: 'b', pods: [pod({ cpu: '1' })] }), 2)] }));
    expect(cmd(r.decision).kind).toBe('replace');
  });
  it('should skip buffer-only nodes in single-node consolidation but protect via emptiness', async () => {
    const s = env({
      nodes: [buffered(bigNode({ name: 'b' }), 1), bigNode({ name: 'real', pods: [pod({ cpu: '1' })] })],
    });
    const r = await reconcile(s);
    expect(cmd(r.decision).candidates.map((c) => c.name)).toEqual(['real']);
    expect(managedNodes(execute(s, r.decision)).map((n) => n.name)).toContain('b');
  });
  it('should consolidate a buffer node once buffer pods are cleared', async () => {
    const n = bigNode({ name: 'b' });
    expect((await reconcile(env({ nodes: [buffered(n, 1)] }))).decision.kind).toBe('noop');
    expect(cmd((await reconcile(env({ nodes: [buffered(n, 0)] }))).decision).candidates.map((c) => c.name)).toEqual([
      'b',
    ]);
  });
});

describe('§5.15 Static NodePool', () => {
  it('should not consolidate static NodePool nodes', async () => {
    const r = await reconcile(
      env({ nodePools: [pool({ replicas: 2 })], nodes: [bigNode({ pods: [pod()] }), bigNode({ pods: [pod()] })] }),
    );
    expect(r.decision.kind).toBe('noop');
    expect(r.metrics.eligibleNodes.Underutilized).toBe(0);
  });
});
