// Karpenter scheduling acceptance: matchLabelKeys, nodeTaintsPolicy, nodeAffinityPolicy, and spreads combined
// with node affinity (docs/karpenter/test-cases.md §12.6, §12.7, §12.8, §12.11, §12.12).
import { describe, expect, it } from 'vitest';
import type { Taint, TopologySpreadConstraint } from '../../../engine/domain/types.ts';
import { pods, stateNode, type PodOptions } from '../../fixtures/builders.ts';
import { CAPACITY_TYPE, Cluster, counts, eachSolver, HOSTNAME, req, topologyPool, ZONE } from './harness.ts';

const labels = { test: 'test' };
const sel = { matchLabels: labels };
const SPREAD = 'fake-label';
const tsc = (topologyKey: string, o: Partial<TopologySpreadConstraint> = {}): TopologySpreadConstraint => ({
  maxSkew: 1,
  topologyKey,
  whenUnsatisfiable: 'DoNotSchedule',
  labelSelector: sel,
  ...o,
});
const spreadPods = (n: number, spread: TopologySpreadConstraint[], o: PodOptions = {}) =>
  pods(n, { labels, spread, ...o });
const taint: Taint = { key: 'taintname', value: 'taintvalue', effect: 'NoSchedule' };
/** A node Karpenter does not own, too small for the test pods, that only contributes a domain. */
const domainNode = (name: string, nodeLabels: Record<string, string>, taints: Taint[] = []) =>
  stateNode({ name, managed: false, labels: nodeLabels, taints, allocatable: { cpu: '100m' } });

eachSolver((s) => {
  const cluster = (...nodePools: ReturnType<typeof topologyPool>[]) =>
    new Cluster(s, { nodePools: nodePools.length ? nodePools : [topologyPool()] });

  describe('MatchLabelKeys', () => {
    it('should support matchLabelKeys', () => {
      const c = cluster();
      const spread = [tsc(HOSTNAME, { matchLabelKeys: ['test-label'] })];
      c.provision([
        ...spreadPods(2, spread, { labels: { ...labels, 'test-label': 'value-a' } }),
        ...spreadPods(2, spread, { labels: { ...labels, 'test-label': 'value-b' } }),
      ]);
      // Each "deployment" spreads on its own: two nodes with one pod of each, not four nodes.
      expect(c.skew(HOSTNAME, sel)).toEqual(counts(2, 2));
    });
    it('should ignore unknown labels specified in matchLabelKeys', () => {
      const c = cluster();
      c.provision(spreadPods(4, [tsc(HOSTNAME, { matchLabelKeys: ['test-label'] })]));
      expect(c.skew(HOSTNAME, sel)).toEqual(counts(1, 1, 1, 1));
    });
  });

  describe('NodeTaintsPolicy', () => {
    const existingDomains = (policy: 'Honor' | 'Ignore') => {
      const c = new Cluster(s, {
        nodePools: [topologyPool({ labels: { [SPREAD]: 'baz' } })],
        nodes: [domainNode('n-foo', { [SPREAD]: 'foo' }, [taint]), domainNode('n-bar', { [SPREAD]: 'bar' }, [taint])],
      });
      c.provision(spreadPods(5, [tsc(SPREAD, { nodeTaintsPolicy: policy })], { cpu: '1' }));
      return c.skew(SPREAD, sel);
    };
    it('should balance pods across a label (NodeTaintsPolicy=ignore)', () => {
      // Three domains are known (foo and bar from the tainted nodes, baz from the pool); only baz can grow.
      expect(existingDomains('Ignore')).toEqual([1]);
    });
    it('should balance pods across a label (NodeTaintsPolicy=honor)', () => {
      expect(existingDomains('Honor')).toEqual([5]);
    });
    const poolDomains = (policy: 'Honor' | 'Ignore') => {
      const c = cluster(
        topologyPool({ name: 'plain', requirements: [req(CAPACITY_TYPE, 'Exists'), req(SPREAD, 'In', 'foo')] }),
        topologyPool({
          name: 'tainted',
          requirements: [req(CAPACITY_TYPE, 'Exists'), req(SPREAD, 'In', 'bar')],
          taints: [{ key: 'taint-key', value: 'taint-value', effect: 'NoSchedule' }],
        }),
      );
      c.provision(spreadPods(2, [tsc(SPREAD, { nodeTaintsPolicy: policy })]));
      return c.skew(SPREAD, sel);
    };
    it('should balance pods across a label when discovered from the nodepool (NodeTaintsPolicy=ignore)', () => {
      expect(poolDomains('Ignore')).toEqual([1]);
    });
    it('should balance pods across a label when discovered from the nodepool (NodeTaintsPolicy=honor)', () => {
      expect(poolDomains('Honor')).toEqual([2]);
    });
    it('should balance pods across a label when mutually exclusive NodePools (by taints) share domains (NodeTaintsPolicy=honor)', () => {
      const pools = [
        ['foo', 'bar'],
        ['foo', 'baz'],
      ].map((domains, i) =>
        topologyPool({
          name: `np-${i}`,
          requirements: [req(CAPACITY_TYPE, 'Exists'), req(SPREAD, 'In', ...domains)],
          taints: [{ key: 'taint-key', value: `nodepool-${i}`, effect: 'NoSchedule' }],
        }),
      );
      const c = cluster(...pools);
      const spread = [tsc(SPREAD, { nodeTaintsPolicy: 'Honor' })];
      const tolerating = (i: number, n: number) =>
        spreadPods(n, spread, { tolerations: [{ key: 'taint-key', effect: 'NoSchedule', value: `nodepool-${i}` }] });
      c.provision([...tolerating(0, 2), ...tolerating(1, 4)]);
      // foo: 2 (either pool), bar: 1 (pool 0), baz: 3 (pool 1).
      expect(c.skew(SPREAD, sel)).toEqual(counts(3, 2, 1));
    });
  });

  describe('NodeAffinityPolicy', () => {
    const affinityDomains = (policy: 'Honor' | 'Ignore') => {
      const c = new Cluster(s, {
        nodePools: [topologyPool({ labels: { [SPREAD]: 'baz', selector: 'value' } })],
        nodes: [
          domainNode('n-foo', { [SPREAD]: 'foo', selector: 'mismatch' }),
          domainNode('n-bar', { [SPREAD]: 'bar', selector: 'mismatch' }),
        ],
      });
      c.provision(
        spreadPods(5, [tsc(SPREAD, { nodeAffinityPolicy: policy })], { cpu: '1', nodeSelector: { selector: 'value' } }),
      );
      return c.skew(SPREAD, sel);
    };
    it('should balance pods across a label (NodeAffinityPolicy=ignore)', () => {
      expect(affinityDomains('Ignore')).toEqual([1]);
    });
    it('should balance pods across a label (NodeAffinityPolicy=honor)', () => {
      expect(affinityDomains('Honor')).toEqual([5]);
    });
  });

  describe('Combined Zonal Topology and Node Affinity', () => {
    it('should limit spread options by nodeSelector', () => {
      const c = cluster();
      c.provision([
        ...spreadPods(5, [tsc(ZONE)], { nodeSelector: { [ZONE]: 'test-zone-1' } }),
        ...spreadPods(10, [tsc(ZONE)], { nodeSelector: { [ZONE]: 'test-zone-2' } }),
      ]);
      expect(c.skew(ZONE, sel)).toEqual(counts(5, 10));
    });
    it('should limit spread options by node requirements', () => {
      const c = cluster();
      c.provision(spreadPods(10, [tsc(ZONE)], { required: [[req(ZONE, 'In', 'test-zone-1', 'test-zone-2')]] }));
      expect(c.skew(ZONE, sel)).toEqual(counts(5, 5));
    });
    it('should limit spread options by required node affinity', () => {
      const c = cluster();
      c.provision(spreadPods(6, [tsc(ZONE)], { required: [[req(ZONE, 'In', 'test-zone-1', 'test-zone-2')]] }));
      expect(c.skew(ZONE, sel)).toEqual(counts(3, 3));
      c.nodePools = [topologyPool({ requirements: [req(ZONE, 'In', 'test-zone-1', 'test-zone-2', 'test-zone-3')] })];
      c.provision(spreadPods(1, [tsc(ZONE)], { required: [[req(ZONE, 'In', 'test-zone-2', 'test-zone-3')]] }));
      // Zone 3 is empty: placing there violates max-skew less than before, so it is allowed.
      expect(c.skew(ZONE, sel)).toEqual(counts(3, 3, 1));
      c.provision(spreadPods(5, [tsc(ZONE)]));
      expect(c.skew(ZONE, sel)).toEqual(counts(4, 4, 4));
    });
    it('should not limit spread options by preferred node affinity', () => {
      const c = cluster();
      c.provision(
        spreadPods(6, [tsc(ZONE)], {
          preferred: [{ weight: 1, expressions: [req(ZONE, 'In', 'test-zone-1', 'test-zone-2')] }],
        }),
      );
      expect(c.skew(ZONE, sel)).toEqual(counts(2, 2, 2));
    });
  });

  describe('Combined Capacity Type Topology and Node Affinity', () => {
    it('should limit spread options by nodeSelector', () => {
      const c = cluster();
      const spread = [tsc(CAPACITY_TYPE, { whenUnsatisfiable: 'ScheduleAnyway' })];
      c.provision([
        ...spreadPods(5, spread, { nodeSelector: { [CAPACITY_TYPE]: 'spot' } }),
        ...spreadPods(5, spread, { nodeSelector: { [CAPACITY_TYPE]: 'on-demand' } }),
      ]);
      expect(c.skew(CAPACITY_TYPE, sel)).toEqual(counts(5, 5));
    });
    it('should limit spread options by node affinity (capacity type)', () => {
      const c = cluster();
      const spread = [tsc(CAPACITY_TYPE)];
      c.provision(spreadPods(3, spread, { required: [[req(CAPACITY_TYPE, 'In', 'spot')]] }));
      expect(c.skew(CAPACITY_TYPE, sel)).toEqual([3]);
      c.provision(spreadPods(1, spread, { required: [[req(CAPACITY_TYPE, 'In', 'on-demand', 'spot')]] }));
      expect(c.skew(CAPACITY_TYPE, sel)).toEqual(counts(3, 1));
      c.provision(spreadPods(5, spread));
      expect(c.skew(CAPACITY_TYPE, sel)).toEqual(counts(5, 4));
    });
  });
});
