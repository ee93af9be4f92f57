// Karpenter scheduling acceptance: Topology, top level and Zonal (docs/karpenter/test-cases.md §12.1, §12.2).
// Skews are compared as sorted counts: which zone gets the extra pod is a map-order choice upstream.
// Left out: "should not spread an invalid label selector" (Karpenter skips it on Kubernetes >= 1.24, where
// admission rejects the selector; there is nothing left to schedule).
import { describe, expect, it } from 'vitest';
import type { Pod, TopologySpreadConstraint } from '../../../engine/domain/types.ts';
import { pod, pods, stateNode, type PodOptions } from '../../fixtures/builders.ts';
import { CAPACITY_TYPE, Cluster, counts, eachSolver, HOSTNAME, req, topologyPool, ZONE } from './harness.ts';

const labels = { test: 'test' };
const sel = { matchLabels: labels };
const tsc = (o: Partial<TopologySpreadConstraint> = {}): TopologySpreadConstraint => ({
  maxSkew: 1,
  topologyKey: ZONE,
  whenUnsatisfiable: 'DoNotSchedule',
  labelSelector: sel,
  ...o,
});
const spreadPods = (n: number, c: TopologySpreadConstraint = tsc(), o: PodOptions = {}): Pod[] =>
  pods(n, { labels, spread: [c], ...o });
const zonePool = (...zones: string[]) =>
  topologyPool({ requirements: [req(CAPACITY_TYPE, 'Exists'), req(ZONE, 'In', ...zones)] });

eachSolver((s) => {
  const cluster = (...nodePools: ReturnType<typeof topologyPool>[]) =>
    new Cluster(s, { nodePools: nodePools.length ? nodePools : [topologyPool()] });

  describe('Topology', () => {
    it('should ignore unknown topology keys', () => {
      const c = cluster();
      const ps = [pod({ labels, spread: [tsc({ topologyKey: 'unknown' })] }), pod()];
      c.provision(ps);
      expect(c.scheduled(ps[0]!)).toBe(false);
      expect(c.scheduled(ps[1]!)).toBe(true);
    });
    it('should not spread when a nil label selector is defined', () => {
      const c = cluster();
      c.provision(pods(2, { labels, spread: [{ maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'DoNotSchedule' }] }));
      expect(c.skew(ZONE)).toEqual([2]);
    });
  });

  describe('Zonal', () => {
    it('should balance pods across zones (match labels)', () => {
      const c = cluster();
      c.provision(spreadPods(4));
      expect(c.skew(ZONE, sel)).toEqual(counts(1, 1, 2));
    });
    it('should balance pods across zones (match expressions)', () => {
      const c = cluster();
      const expr = { matchExpressions: [{ key: 'test', operator: 'In' as const, values: ['test'] }] };
      c.provision(spreadPods(4, tsc({ labelSelector: expr })));
      expect(c.skew(ZONE, expr)).toEqual(counts(1, 1, 2));
    });
    it('should respect NodePool zonal constraints', () => {
      const c = cluster(zonePool('test-zone-1', 'test-zone-2', 'test-zone-3'));
      c.provision(spreadPods(4));
      expect(c.skew(ZONE, sel)).toEqual(counts(1, 1, 2));
    });
    it('should respect NodePool zonal constraints (subset) with requirements', () => {
      const c = cluster(zonePool('test-zone-1', 'test-zone-2'));
      c.provision(spreadPods(4));
      expect(c.skew(ZONE, sel)).toEqual(counts(2, 2));
    });
    it('should respect NodePool zonal constraints (subset) with labels', () => {
      const c = cluster(topologyPool({ labels: { [ZONE]: 'test-zone-1' } }));
      c.provision(spreadPods(4));
      expect(c.skew(ZONE, sel)).toEqual([4]);
    });
    it('should respect NodePool zonal constraints (subset) with requirements and labels', () => {
      const c = cluster(
        topologyPool({
          requirements: [req(ZONE, 'In', 'test-zone-1', 'test-zone-2')],
          labels: { [ZONE]: 'test-zone-1' },
        }),
      );
      c.provision(spreadPods(4));
      expect(c.skew(ZONE, sel)).toEqual([4]);
    });
    it('should respect NodePool zonal constraints (subset) with labels across NodePools', () => {
      const c = cluster(
        topologyPool({
          name: 'a',
          requirements: [req(ZONE, 'In', 'test-zone-1', 'test-zone-2')],
          labels: { [ZONE]: 'test-zone-1' },
        }),
        topologyPool({ name: 'b', requirements: [], labels: { [ZONE]: 'test-zone-2' } }),
      );
      c.provision(spreadPods(4));
      expect(c.skew(ZONE, sel)).toEqual(counts(2, 2));
    });
    it('should respect NodePool zonal constraints (existing pod)', () => {
      const c = cluster();
      // Big enough that its node cannot act as an in-flight node for the others.
      const first = pod({ labels, cpu: '1.1', nodeSelector: { [ZONE]: 'test-zone-3' } });
      c.provision([first]);
      expect(c.scheduled(first)).toBe(true);
      c.nodePools = [zonePool('test-zone-1', 'test-zone-2')];
      c.provision(spreadPods(6, tsc(), { cpu: '1.1' }));
      expect(c.skew(ZONE, sel)).toEqual(counts(1, 2, 2));
    });
    it("should schedule to the non-minimum domain if its all that's available", () => {
      const c = cluster(zonePool('test-zone-1'));
      const skew5 = tsc({ maxSkew: 5 });
      c.provision(spreadPods(1, skew5, { cpu: '1.1' }));
      expect(c.skew(ZONE, sel)).toEqual([1]);
      c.nodePools = [zonePool('test-zone-2')];
      c.provision(spreadPods(1, skew5, { cpu: '1.1' }));
      expect(c.skew(ZONE, sel)).toEqual(counts(1, 1));
      c.nodePools = [zonePool('test-zone-3')];
      c.provision(spreadPods(10, skew5, { cpu: '1.1' }));
      expect(c.skew(ZONE, sel)).toEqual(counts(1, 1, 6));
    });
    it('should only schedule to minimum domains if already violating max skew', () => {
      const c = cluster();
      const ps = spreadPods(9, tsc(), { cpu: '1.1' });
      c.provision(ps);
      expect(c.skew(ZONE, sel)).toEqual(counts(3, 3, 3));
      for (const p of ps) if (c.scheduledNode(p).labels[ZONE] !== 'test-zone-1') c.deletePod(p);
      expect(c.skew(ZONE, sel)).toEqual([3]);
      c.provision(spreadPods(3, tsc(), { cpu: '1.1' }));
      expect(c.skew(ZONE, sel)).toEqual(counts(3, 1, 2));
    });
    it('should not violate max-skew when unsat = do not schedule', () => {
      const c = cluster(zonePool('test-zone-1'));
      c.provision(spreadPods(1, tsc(), { cpu: '1.1' }));
      expect(c.skew(ZONE, sel)).toEqual([1]);
      c.nodePools = [zonePool('test-zone-2', 'test-zone-3')];
      c.provision(spreadPods(10, tsc(), { cpu: '1.1' }));
      expect(c.skew(ZONE, sel)).toEqual(counts(1, 2, 2));
    });
    it('should not violate max-skew when unsat = do not schedule (discover domains)', () => {
      const c = cluster(zonePool('test-zone-1'));
      c.provision([pod({ labels, cpu: '1.1' })]);
      c.nodePools = [zonePool('test-zone-2', 'test-zone-3')];
      c.provision(spreadPods(10, tsc(), { cpu: '1.1' }));
      expect(c.skew(ZONE, sel)).toEqual(counts(1, 2, 2));
    });
    it('should only count running/scheduled pods with matching labels scheduled to nodes with a corresponding domain', () => {
      const node = (name: string, zone?: string) =>
        stateNode({ name, managed: false, labels: zone ? { [ZONE]: zone } : {} });
      const c = new Cluster(s, {
        nodePools: [topologyPool()],
        nodes: [node('first', 'test-zone-1'), node('second', 'test-zone-2'), node('third')],
      });
      c.provision([
        pod({ nodeName: 'first' }), // ignored, missing labels
        { ...pod({ labels }), unschedulable: false }, // ignored, pending
        pod({ labels, nodeName: 'third' }), // ignored, no domain on node
        pod({ labels, namespace: 'wrong-namespace', nodeName: 'first' }), // ignored, wrong namespace
        pod({ labels, deletionTimestamp: 10_000 }), // ignored, terminating
        pod({ labels, nodeName: 'first', phase: 'Failed' }), // ignored, phase=Failed
        pod({ labels, nodeName: 'first', phase: 'Succeeded' }), // ignored, phase=Succeeded
        pod({ labels, nodeName: 'first' }),
        pod({ labels, nodeName: 'first' }),
        pod({ labels, nodeName: 'second' }),
        ...spreadPods(2),
      ]);
      expect(c.skew(ZONE, sel)).toEqual(counts(2, 2, 1));
    });
    it('should match all pods when labelSelector is not specified', () => {
      const c = cluster();
      c.provision([pod()]);
      expect(c.skew(ZONE)).toEqual([1]);
    });
    it('should handle interdependent selectors', () => {
      const c = cluster();
      const ps = pods(5, { spread: [tsc({ topologyKey: HOSTNAME })] });
      c.provision(ps);
      expect(new Set(ps.map((p) => c.scheduledNode(p).name)).size).toBe(1);
    });
    it('should respect minDomains constraints', () => {
      const c = cluster(zonePool('test-zone-1', 'test-zone-2'));
      c.provision(spreadPods(3, tsc({ minDomains: 3 })));
      expect(c.skew(ZONE, sel)).toEqual(counts(1, 1));
    });
    it('satisfied minDomains constraints (equal) should allow expected pod scheduling', () => {
      const c = cluster(zonePool('test-zone-1', 'test-zone-2', 'test-zone-3'));
      c.provision(spreadPods(11, tsc({ minDomains: 3 })));
      expect(c.skew(ZONE, sel)).toEqual(counts(4, 4, 3));
    });
    it('satisfied minDomains constraints (greater than minimum) should allow expected pod scheduling', () => {
      const c = cluster(zonePool('test-zone-1', 'test-zone-2', 'test-zone-3'));
      c.provision(spreadPods(11, tsc({ minDomains: 2 })));
      expect(c.skew(ZONE, sel)).toEqual(counts(4, 4, 3));
    });
  });
});
