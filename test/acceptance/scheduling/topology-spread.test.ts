// Karpenter scheduling acceptance: Topology spread by hostname and capacity type, and combined constraints
// (docs/karpenter/test-cases.md §12.3, §12.4, §12.5, §12.9, §12.10). Skews are sorted counts (which domain gets the
// extra pod is a map-order choice upstream).
import { describe, expect, it } from 'vitest';
import type { TopologySpreadConstraint } from '../../../engine/domain/types.ts';
import { pod, pods, stateNode, type PodOptions } from '../../fixtures/builders.ts';
import { instanceTypesAssorted } from '../../fixtures/instancetypes.ts';
import {
  ARCH,
  CAPACITY_TYPE,
  Cluster,
  counts,
  eachSolver,
  HOSTNAME,
  INSTANCE_TYPE,
  req,
  topologyPool,
  ZONE,
} from './harness.ts';

const labels = { test: 'test' };
const sel = { matchLabels: labels };
const tsc = (topologyKey: string, o: Partial<TopologySpreadConstraint> = {}): TopologySpreadConstraint => ({
  maxSkew: 1,
  topologyKey,
  whenUnsatisfiable: 'DoNotSchedule',
  labelSelector: sel,
  ...o,
});
const spreadPods = (n: number, spread: TopologySpreadConstraint[], o: PodOptions = {}) =>
  pods(n, { labels, spread, ...o });
const ctPool = (...cts: string[]) => topologyPool({ requirements: [req(CAPACITY_TYPE, 'In', ...cts)] });
/** The largest count of any domain (Karpenter's "ToNot(ContainElements(BeNumerically(">", n)))"). */
const most = (xs: number[]) => Math.max(0, ...xs);

eachSolver((s) => {
  const cluster = (...nodePools: ReturnType<typeof topologyPool>[]) =>
    new Cluster(s, { nodePools: nodePools.length ? nodePools : [topologyPool()] });

  describe('Hostname', () => {
    it('should balance pods across nodes', () => {
      const c = cluster();
      c.provision(spreadPods(4, [tsc(HOSTNAME)]));
      expect(c.skew(HOSTNAME, sel)).toEqual(counts(1, 1, 1, 1));
    });
    it('should balance pods on the same hostname up to maxskew', () => {
      const c = cluster();
      c.provision(spreadPods(4, [tsc(HOSTNAME, { maxSkew: 4 })]));
      expect(c.skew(HOSTNAME, sel)).toEqual([4]);
    });
    const app = (name: string, o: PodOptions = {}) =>
      pods(2, {
        labels: { app: name },
        spread: [tsc(HOSTNAME, { labelSelector: { matchLabels: { app: name } } })],
        ...o,
      });
    it('balance multiple deployments with hostname topology spread', () => {
      const c = cluster();
      const ps = [...app('app1'), ...app('app2')];
      c.provision(ps);
      for (const p of ps) expect(c.scheduled(p)).toBe(true);
      expect(c.nodes).toHaveLength(2);
    });
    it('balance multiple deployments with hostname topology spread & varying arch', () => {
      const c = cluster();
      const ps = [
        ...app('app1', { required: [[req(ARCH, 'In', 'amd64')]] }),
        ...app('app2', { required: [[req(ARCH, 'In', 'arm64')]] }),
      ];
      c.provision(ps);
      for (const p of ps) expect(c.scheduled(p)).toBe(true);
      expect(c.nodes).toHaveLength(4);
    });
  });

  describe('CapacityType', () => {
    it('should balance pods across capacity types', () => {
      const c = cluster();
      c.provision(spreadPods(4, [tsc(CAPACITY_TYPE)]));
      expect(c.skew(CAPACITY_TYPE, sel)).toEqual(counts(2, 2));
    });
    it('should respect NodePool capacity type constraints', () => {
      const c = cluster(ctPool('spot', 'on-demand'));
      c.provision(spreadPods(4, [tsc(CAPACITY_TYPE)]));
      expect(c.skew(CAPACITY_TYPE, sel)).toEqual(counts(2, 2));
    });
    const spotThenOnDemand = (when: TopologySpreadConstraint['whenUnsatisfiable']) => {
      const spread = [tsc(CAPACITY_TYPE, { whenUnsatisfiable: when })];
      const c = cluster(ctPool('spot'));
      c.provision(spreadPods(1, spread, { cpu: '1.1' }));
      expect(c.skew(CAPACITY_TYPE, sel)).toEqual([1]);
      c.nodePools = [ctPool('on-demand')];
      c.provision(spreadPods(5, spread, { cpu: '1.1' }));
      return c.skew(CAPACITY_TYPE, sel);
    };
    it('should not violate max-skew when unsat = do not schedule (capacity type)', () => {
      expect(spotThenOnDemand('DoNotSchedule')).toEqual(counts(1, 2));
    });
    it('should violate max-skew when unsat = schedule anyway (capacity type)', () => {
      expect(spotThenOnDemand('ScheduleAnyway')).toEqual(counts(1, 5));
    });
    it('should only count running/scheduled pods with matching labels scheduled to nodes with a corresponding domain', () => {
      const node = (name: string, ct?: string) =>
        stateNode({ name, managed: false, labels: ct ? { [CAPACITY_TYPE]: ct } : {} });
      const c = new Cluster(s, {
        nodePools: [topologyPool()],
        nodes: [node('first', 'spot'), node('second', 'on-demand'), node('third')],
      });
      c.provision([
        pod({ nodeName: 'first' }),
        { ...pod({ labels }), unschedulable: false },
        pod({ labels, nodeName: 'third' }),
        pod({ labels, namespace: 'wrong-namespace', nodeName: 'first' }),
        pod({ labels, deletionTimestamp: 10_000 }),
        pod({ labels, nodeName: 'first', phase: 'Failed' }),
        pod({ labels, nodeName: 'first', phase: 'Succeeded' }),
        pod({ labels, nodeName: 'first' }),
        pod({ labels, nodeName: 'first' }),
        pod({ labels, nodeName: 'second' }),
        ...spreadPods(2, [tsc(CAPACITY_TYPE)]),
      ]);
      expect(c.skew(CAPACITY_TYPE, sel)).toEqual(counts(2, 3));
    });
    it('should match all pods when labelSelector is not specified', () => {
      const c = cluster();
      c.provision([pod()]);
      expect(c.skew(CAPACITY_TYPE)).toEqual([1]);
    });
    it('should handle interdependent selectors', () => {
      const c = cluster();
      const ps = pods(5, { spread: [tsc(HOSTNAME)] });
      c.provision(ps);
      expect(new Set(ps.map((p) => c.scheduledNode(p).name)).size).toBe(1);
    });
    it('should balance pods across capacity-types (node required affinity constrained)', () => {
      const c = cluster();
      const first = pod({
        labels,
        required: [[req(ZONE, 'In', 'test-zone-1'), req(CAPACITY_TYPE, 'In', 'on-demand')]],
      });
      c.provision([first]);
      expect(c.scheduled(first)).toBe(true);
      // The zone-2/spot pods' node affinity excludes the zone-1 on-demand node from their counts (Honor).
      c.provision(
        spreadPods(5, [tsc(CAPACITY_TYPE)], {
          required: [[req(ZONE, 'In', 'test-zone-2'), req(CAPACITY_TYPE, 'In', 'spot')]],
        }),
      );
      expect(c.skew(CAPACITY_TYPE, sel)).toEqual(counts(1, 5));
    });
    it('should balance pods across capacity-types (no constraints)', () => {
      const c = cluster();
      const first = pod({
        labels,
        nodeSelector: { [INSTANCE_TYPE]: 'single-pod-instance-type' },
        required: [[req(CAPACITY_TYPE, 'In', 'on-demand')]],
      });
      c.provision([first]);
      expect(c.scheduled(first)).toBe(true);
      c.nodePools = [ctPool('spot')];
      c.provision(spreadPods(5, [tsc(CAPACITY_TYPE)], { cpu: '2' }));
      expect(c.skew(CAPACITY_TYPE, sel)).toEqual(counts(1, 2));
    });
    it('should balance pods across arch (no constraints)', () => {
      const c = cluster();
      const first = pod({
        labels,
        nodeSelector: { [INSTANCE_TYPE]: 'single-pod-instance-type' },
        required: [[req(ARCH, 'In', 'amd64')]],
      });
      c.provision([first]);
      expect(c.scheduled(first)).toBe(true);
      c.nodePools = [topologyPool({ requirements: [req(ARCH, 'In', 'arm64')] })];
      c.provision(spreadPods(5, [tsc(ARCH)], { cpu: '2' }));
      expect(c.skew(ARCH, sel)).toEqual(counts(1, 2));
    });
  });

  describe('Combined Hostname and Zonal Topology', () => {
    it('should spread pods while respecting both constraints (hostname and zonal)', () => {
      const c = cluster();
      const spread = [tsc(ZONE), tsc(HOSTNAME, { maxSkew: 3 })];
      const expected = [
        [1, 1],
        [1, 2, 2],
        [3, 3, 4],
        [7, 7, 7],
      ];
      [2, 3, 5, 11].forEach((n, i) => {
        c.provision(spreadPods(n, spread));
        expect(c.skew(ZONE, sel)).toEqual(expected[i]);
        expect(most(c.skew(HOSTNAME, sel))).toBeLessThanOrEqual(3);
      });
    });
    it('should balance pods across NodePool requirements', () => {
      const key = 'capacity.spread.4-1';
      const c = cluster(
        topologyPool({
          name: 'spot',
          requirements: [req(CAPACITY_TYPE, 'In', 'spot'), req(key, 'In', '2', '3', '4', '5')],
        }),
        topologyPool({ name: 'on-demand', requirements: [req(CAPACITY_TYPE, 'In', 'on-demand'), req(key, 'In', '1')] }),
      );
      const ps = spreadPods(20, [tsc(key)]);
      c.provision(ps);
      for (const p of ps) expect(c.scheduled(p)).toBe(true);
      expect(c.skew(key, sel)).toEqual(counts(4, 4, 4, 4, 4));
      expect(c.skew(CAPACITY_TYPE, sel)).toEqual(counts(4, 16));
    });
    it('should spread pods while respecting both constraints (zone DoNotSchedule, hostname ScheduleAnyway)', () => {
      const c = cluster(
        topologyPool({
          name: 'a',
          requirements: [req(CAPACITY_TYPE, 'Exists'), req(ZONE, 'In', 'test-zone-1', 'test-zone-2')],
        }),
        topologyPool({ name: 'b', requirements: [req(ZONE, 'In', 'test-zone-3')], limits: { cpu: '0' } }),
      );
      c.provision(spreadPods(10, [tsc(ZONE), tsc(HOSTNAME, { whenUnsatisfiable: 'ScheduleAnyway' })]));
      expect(c.skew(ZONE, sel)).toEqual(counts(1, 1));
      expect(c.skew(HOSTNAME, sel)).toEqual(counts(1, 1));
    });
    it('should spread pods while respecting both constraints (capacity type and hostname)', () => {
      const c = cluster();
      const spread = [tsc(CAPACITY_TYPE), tsc(HOSTNAME, { maxSkew: 3 })];
      const expected = [
        [1, 1],
        [2, 3],
        [5, 5],
        [10, 11],
      ];
      [2, 3, 5, 11].forEach((n, i) => {
        c.provision(spreadPods(n, spread));
        expect(c.skew(CAPACITY_TYPE, sel)).toEqual(expected[i]);
        expect(most(c.skew(HOSTNAME, sel))).toBeLessThanOrEqual(3);
      });
    });
  });

  describe('Combined Zonal and Capacity Type Topology', () => {
    it('should spread pods while respecting both constraints', () => {
      const c = cluster();
      const spread = [tsc(CAPACITY_TYPE), tsc(ZONE)];
      const bounds = [
        [1, 1],
        [3, 2],
        [5, 4],
        [11, 7],
      ];
      [2, 3, 3, 11].forEach((n, i) => {
        c.provision(spreadPods(n, spread));
        expect(most(c.skew(CAPACITY_TYPE, sel))).toBeLessThanOrEqual(bounds[i]![0]!);
        expect(most(c.skew(ZONE, sel))).toBeLessThanOrEqual(bounds[i]![1]!);
      });
    });
  });

  describe('Combined Hostname, Zonal, and Capacity Type Topology', () => {
    it('should spread pods while respecting all constraints', () => {
      // An instance type for every zone and capacity-type pair.
      const c = new Cluster(s, { nodePools: [topologyPool()], instanceTypes: instanceTypesAssorted() });
      const spread = [tsc(CAPACITY_TYPE), tsc(ZONE, { maxSkew: 2 }), tsc(HOSTNAME, { maxSkew: 3 })];
      for (let i = 1; i < 15; i++) {
        const ps = spreadPods(i, spread);
        c.provision(ps);
        expect(c.maxSkew(CAPACITY_TYPE, sel)).toBeLessThanOrEqual(1);
        expect(c.maxSkew(ZONE, sel)).toBeLessThanOrEqual(2);
        expect(c.maxSkew(HOSTNAME, sel)).toBeLessThanOrEqual(3);
        for (const p of ps) expect(c.scheduled(p), `batch ${i}`).toBe(true);
      }
    });
  });
});
