// Provisioning the guide's examples end to end: NodePools and EC2NodeClasses applied through
// client-node, pods from a Deployment, the controller choosing pools and launching through the simulated
// cloud, on a manual clock.
import { afterEach, describe, expect, it } from 'vitest';
import {
  condition,
  deployment,
  events,
  guide,
  label,
  nodeClaims,
  nodeClassNamed,
  nodes,
  pods,
  running,
  scale,
  simulation,
  type Simulation,
} from '../support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe("provisioning the guide's NodePools", () => {
  it('puts pods on the production NodePool (weight 100, on-demand m/r) rather than development (weight 10)', async () => {
    sim = await simulation();
    await sim.apply(nodeClassNamed('production'));
    await sim.apply(nodeClassNamed('development'));
    await sim.apply(guide('guide-02.yaml'));
    await sim.apply(deployment('web', 3));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 3, 180_000, 'web running');

    const claims = nodeClaims(sim);
    expect(claims.length).toBeGreaterThan(0);
    for (const c of claims) {
      expect(label(c, 'karpenter.sh/nodepool')).toBe('production');
      expect(label(c, 'karpenter.sh/capacity-type')).toBe('on-demand');
      expect(['m', 'r']).toContain(label(c, 'karpenter.k8s.aws/instance-category'));
      expect(Number(label(c, 'karpenter.k8s.aws/instance-generation'))).toBeGreaterThan(5);
      expect(label(c, 'workload-type')).toBe('production');
      expect(label(c, 'karpenter.k8s.aws/ec2nodeclass')).toBe('production');
      expect(c.metadata.annotations?.['karpenter.sh/nodepool-hash']).toMatch(/^\d+$/);
      expect(c.metadata.annotations?.['karpenter.sh/nodepool-hash-version']).toBe('v3');
      expect(c.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'NodePool', name: 'production' });
      const spec = c.spec as {
        requirements: Array<{ key: string; operator: string; values: string[] }>;
        resources: { requests: Record<string, string> };
        nodeClassRef: { name: string };
        expireAfter: string;
      };
      expect(spec.nodeClassRef.name).toBe('production');
      expect(spec.requirements.find((r) => r.key === 'karpenter.sh/capacity-type')?.values).toEqual(['on-demand']);
      expect(
        spec.requirements.find((r) => r.key === 'node.kubernetes.io/instance-type')?.values.length,
      ).toBeGreaterThan(1);
      expect(spec.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
      expect(spec.expireAfter).toMatch(/^168h/);
      expect(condition(c, 'Ready')?.status).toBe('True');
    }
    // The pool's hash annotation is the one stamped on its NodeClaims.
    const pool = sim.cluster.api.get('nodepools.karpenter.sh', undefined, 'production');
    expect(pool.metadata.annotations?.['karpenter.sh/nodepool-hash']).toBe(
      claims[0]!.metadata.annotations?.['karpenter.sh/nodepool-hash'],
    );
    expect(condition(pool, 'Ready')?.status).toBe('True');
    expect((pool.status as { resources: Record<string, string> }).resources['nodes']).toBe(String(nodes(sim).length));
    const nominated = events(sim, 'Nominated');
    expect(
      nominated.some((e) => String(e['message']).startsWith('Pod should schedule on: nodeclaim/production-')),
    ).toBe(true);
  });

  it('launches spot from the spot-first NodePool of guide-06', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-06.yaml'));
    await sim.apply(deployment('web', 2));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 2, 180_000, 'web running');
    // The improvement phase may split the two pods over two small nodes when that is cheaper: all spot-first, spot.
    const placed = nodes(sim).map((n) => [label(n, 'karpenter.sh/nodepool'), label(n, 'karpenter.sh/capacity-type')]);
    expect(placed.length).toBeGreaterThan(0);
    expect(placed.every(([p, ct]) => p === 'spot-first' && ct === 'spot')).toBe(true);
  });

  it('falls back to the on-demand NodePool when spot capacity is exhausted (guide-06)', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-06.yaml'));
    sim.provider.blockCapacity({ capacityType: 'spot' });
    await sim.apply(deployment('web', 2));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 2, 300_000, 'web running');
    const placed = nodes(sim).map((n) => [label(n, 'karpenter.sh/nodepool'), label(n, 'karpenter.sh/capacity-type')]);
    expect(placed.length).toBeGreaterThan(0);
    expect(placed.every(([p, ct]) => p === 'on-demand-fallback' && ct === 'on-demand')).toBe(true);
    const ice = events(sim, 'InsufficientCapacityError');
    expect(ice.length).toBeGreaterThan(0);
    expect(String(ice[0]!['message'])).toMatch(/spot offerings had insufficient capacity/);
    // The failed offerings are kept out of scheduling for 3 minutes.
    expect(sim.provider.ice.entries().every((k) => k.startsWith('spot:'))).toBe(true);
    expect(sim.provider.ice.entries().length).toBeGreaterThan(0);
  });

  it('leaves pods pending with a FailedScheduling event naming the NodePool limit once it is reached', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata: { name: small }
spec:
  template:
    spec:
      nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: default }
      requirements:
        - { key: karpenter.k8s.aws/instance-cpu, operator: In, values: ['4'] }
  limits: { cpu: '4' }
`);
    await sim.apply(deployment('web', 5));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 3, 180_000, 'three pods running');
    await sim.clock.advance(120_000);
    expect(nodeClaims(sim)).toHaveLength(1);
    const pending = pods(sim, 'web').filter((p) => (p.status as { phase: string }).phase === 'Pending');
    expect(pending).toHaveLength(2);
    const failed = events(sim, 'FailedScheduling').filter(
      (e) =>
        (e['involvedObject'] as { name: string }).name === pending[0]!.metadata.name &&
        e['source'] &&
        (e['source'] as { component: string }).component === 'karpenter',
    );
    expect(failed.length).toBeGreaterThan(0);
    expect(String(failed.at(-1)!['message'])).toMatch(
      /^Failed to schedule pod, .*(limits? .*\(NodePool=small\)|nodepool small.*limit)/,
    );
    await scale(sim, 'web', 3);
    await sim.clock.advanceUntil(() => pods(sim!, 'web').length === 3, 60_000, 'scaled down');
  });
});
