// Karpenter scheduling acceptance: Pod Affinity / Anti-Affinity, including inverse anti-affinity and the
// "Schrödinger" case (docs/karpenter/test-cases.md §12.13).
import { describe, expect, it } from 'vitest';
import type { Affinity, Pod, PodAffinityTerm, TopologySpreadConstraint } from '../../../engine/domain/types.ts';
import { pod, pods, type PodOptions } from '../../fixtures/builders.ts';
import { ARCH, Cluster, counts, eachSolver, HOSTNAME, req, topologyPool, ZONE } from './harness.ts';

const labels = { test: 'test' };
const aff = { security: 's2' };
const term = (
  topologyKey: string,
  matchLabels: Record<string, string> = aff,
  o: Partial<PodAffinityTerm> = {},
): PodAffinityTerm => ({ labelSelector: { matchLabels }, topologyKey, ...o });
const affinity = (a: Affinity): PodOptions => ({ affinity: a });
const requiredAffinity = (...t: PodAffinityTerm[]) => affinity({ podAffinity: { required: t } });
const requiredAnti = (...t: PodAffinityTerm[]) => affinity({ podAntiAffinity: { required: t } });
const preferredAnti = (t: PodAffinityTerm) =>
  affinity({ podAntiAffinity: { preferred: [{ weight: 10, podAffinityTerm: t }] } });
const hostSpread = (matchLabels: Record<string, string> = labels): TopologySpreadConstraint => ({
  maxSkew: 1,
  topologyKey: HOSTNAME,
  whenUnsatisfiable: 'DoNotSchedule',
  labelSelector: { matchLabels },
});
/** Ten pods spread one per host: they create ten nodes for the pods under test to choose from. */
const tenHosts = () => pods(10, { labels, spread: [hostSpread()] });

eachSolver((s) => {
  const cluster = () => new Cluster(s, { nodePools: [topologyPool()] });
  const place = (ps: Pod[]) => {
    const c = cluster();
    c.provision(ps);
    return c;
  };
  const sameNode = (c: Cluster, a: Pod, b: Pod) => c.scheduledNode(a).name === c.scheduledNode(b).name;

  it('should schedule a pod with empty pod affinity and anti-affinity', () => {
    const p = pod(affinity({ podAffinity: { required: [] }, podAntiAffinity: { required: [] } }));
    expect(place([p]).scheduled(p)).toBe(true);
  });
  it('should respect pod affinity (hostname)', () => {
    const a1 = pod({ labels: aff });
    const a2 = pod(requiredAffinity(term(HOSTNAME)));
    const c = place([...tenHosts(), a1, a2]);
    expect(sameNode(c, a1, a2)).toBe(true);
  });
  it('should respect pod affinity (arch)', () => {
    const a1 = pod({ labels: aff, spread: [hostSpread(aff)], cpu: '2', nodeSelector: { [ARCH]: 'arm64' } });
    const a2 = pod({ labels: aff, spread: [hostSpread(aff)], cpu: '1', ...requiredAffinity(term(ARCH)) });
    const c = place([a1, a2]);
    expect(c.scheduledNode(a1).labels[ARCH]).toBe(c.scheduledNode(a2).labels[ARCH]);
    expect(sameNode(c, a1, a2)).toBe(false);
  });
  it('should respect self pod affinity (hostname)', () => {
    const ps = pods(3, { labels: aff, ...requiredAffinity(term(HOSTNAME)) });
    const c = place(ps);
    expect(new Set(ps.map((p) => c.scheduledNode(p).name)).size).toBe(1);
  });
  it('should respect self pod affinity for first empty topology domain only (hostname)', () => {
    const batch = () => pods(10, { labels: aff, ...requiredAffinity(term(HOSTNAME)) });
    const c = cluster();
    const first = batch();
    c.provision(first);
    const placed = first.filter((p) => c.scheduled(p));
    // The node holds five pods: one node, five placed, five left.
    expect(placed).toHaveLength(5);
    expect(new Set(placed.map((p) => c.scheduledNode(p).name)).size).toBe(1);
    const second = batch();
    c.provision(second);
    for (const p of second) expect(c.scheduled(p)).toBe(false);
  });
  it('should respect self pod affinity for first empty topology domain only (hostname/constrained zones)', () => {
    const c = cluster();
    c.provision([pod({ labels: aff, nodeSelector: { [ZONE]: 'test-zone-1' }, ...requiredAffinity(term(HOSTNAME)) })]);
    const ps = pods(10, {
      labels: aff,
      required: [[req(ZONE, 'In', 'test-zone-2', 'test-zone-3')]],
      ...requiredAffinity(term(HOSTNAME)),
    });
    c.provision(ps);
    for (const p of ps) expect(c.scheduled(p)).toBe(false);
  });
  it('should respect self pod affinity (zone)', () => {
    const ps = pods(3, { labels: aff, ...requiredAffinity(term(ZONE)) });
    const c = place(ps);
    expect(new Set(ps.map((p) => c.scheduledNode(p).name)).size).toBe(1);
  });
  it('should respect self pod affinity (zone w/ constraint)', () => {
    const ps = pods(3, { labels: aff, required: [[req(ZONE, 'In', 'test-zone-3')]], ...requiredAffinity(term(ZONE)) });
    const c = place(ps);
    expect(new Set(ps.map((p) => c.scheduledNode(p).name)).size).toBe(1);
    for (const p of ps) expect(c.scheduledNode(p).labels[ZONE]).toBe('test-zone-3');
  });
  it('should schedule pods with matching affinities and incompatible node selectors to different zones', () => {
    const a = pod({ labels: aff, nodeSelector: { [ZONE]: 'test-zone-2' }, ...requiredAffinity(term(ZONE)) });
    const b = pod({ labels: aff, nodeSelector: { [ZONE]: 'test-zone-3' }, ...requiredAffinity(term(ZONE)) });
    const c = place([a, b]);
    expect(c.nodes).toHaveLength(2);
    expect(new Set([a, b].map((p) => c.scheduledNode(p).labels[ZONE]))).toEqual(
      new Set(['test-zone-2', 'test-zone-3']),
    );
  });
  it('should allow violation of preferred pod affinity', () => {
    const a2 = pod(affinity({ podAffinity: { preferred: [{ weight: 50, podAffinityTerm: term(HOSTNAME) }] } }));
    expect(place([...tenHosts(), a2]).scheduled(a2)).toBe(true);
  });
  it('should allow violation of preferred pod anti-affinity', () => {
    const affPods = pods(10, preferredAnti(term(ZONE, labels)));
    const zoneSpread: TopologySpreadConstraint = {
      maxSkew: 1,
      topologyKey: ZONE,
      whenUnsatisfiable: 'DoNotSchedule',
      labelSelector: { matchLabels: labels },
    };
    const c = place([...pods(3, { labels, spread: [zoneSpread] }), ...affPods]);
    for (const p of affPods) expect(c.scheduled(p)).toBe(true);
  });
  it('should separate nodes using simple pod anti-affinity on hostname', () => {
    const c = cluster();
    // Affinity is symmetric: the outcome must not depend on which pod is tried first.
    for (let i = 0; i < 10; i++) {
      const a1 = pod({ labels: aff });
      const a2 = pod(requiredAnti(term(HOSTNAME)));
      c.provision([a2, a1]);
      expect(sameNode(c, a1, a2)).toBe(false);
    }
  });
  const zonePods = (o: PodOptions) =>
    ['test-zone-1', 'test-zone-2', 'test-zone-3'].map((z) => pod({ cpu: '2', nodeSelector: { [ZONE]: z }, ...o }));
  it('should not violate pod anti-affinity on zone', () => {
    const zs = zonePods({ labels: aff });
    const anti = pod(requiredAnti(term(ZONE)));
    const c = place([...zs, anti]);
    for (const p of zs) expect(c.scheduled(p)).toBe(true);
    expect(c.scheduled(anti)).toBe(false);
  });
  it('should not violate pod anti-affinity on zone (other schedules first)', () => {
    const target = pod({ labels: aff, cpu: '2' });
    const anti = pod(requiredAnti(term(ZONE)));
    const c = place([target, anti]);
    expect(c.scheduled(target)).toBe(true);
    expect(c.scheduled(anti)).toBe(false);
  });
  it('should not violate pod anti-affinity (arch)', () => {
    const a1 = pod({ labels: aff, spread: [hostSpread(aff)], cpu: '2', nodeSelector: { [ARCH]: 'arm64' } });
    const a2 = pod({ labels: aff, spread: [hostSpread(aff)], cpu: '1', ...requiredAnti(term(ARCH)) });
    const c = place([a1, a2]);
    expect(c.scheduledNode(a1).labels[ARCH]).not.toBe(c.scheduledNode(a2).labels[ARCH]);
  });
  it('should violate preferred pod anti-affinity on zone (inverse)', () => {
    const zs = zonePods(preferredAnti(term(ZONE)));
    const target = pod({ labels: aff });
    const c = place([...zs, target]);
    for (const p of [...zs, target]) expect(c.scheduled(p)).toBe(true);
  });
  it('should not violate pod anti-affinity on zone (inverse)', () => {
    const zs = zonePods(requiredAnti(term(ZONE)));
    const target = pod({ labels: aff });
    const c = place([...zs, target]);
    for (const p of zs) expect(c.scheduled(p)).toBe(true);
    // Every zone holds a pod whose anti-affinity rejects the target.
    expect(c.scheduled(target)).toBe(false);
  });
  it('should not violate pod anti-affinity on zone (Schrödinger)', () => {
    const anywhere = pod({ cpu: '2', ...requiredAnti(term(ZONE)) });
    const target = pod({ labels: aff });
    const c = cluster();
    c.provision([anywhere, target]);
    const n1 = c.scheduledNode(anywhere);
    // Its zone is undecided while planning, so it could be any zone: the target cannot go anywhere.
    expect(c.scheduled(target)).toBe(false);
    // Once the node exists its zone is known, and the target goes to another one.
    c.provision([target]);
    expect(c.scheduledNode(target).labels[ZONE]).not.toBe(n1.labels[ZONE]);
  });
  it('should not violate pod anti-affinity on zone (inverse w/existing nodes)', () => {
    const c = cluster();
    c.provision(zonePods(requiredAnti(term(ZONE))));
    const target = pod({ labels: aff });
    c.provision([target]);
    expect(c.scheduled(target)).toBe(false);
  });
  it('should violate preferred pod anti-affinity on zone (inverse w/existing nodes)', () => {
    const c = cluster();
    c.provision(zonePods(preferredAnti(term(ZONE))));
    const target = pod({ labels: aff });
    c.provision([target]);
    expect(c.scheduled(target)).toBe(true);
  });
  it('should allow violation of a pod affinity preference with a conflicting required constraint', () => {
    const a1 = pod({ labels: aff });
    const affPods = pods(3, {
      labels,
      spread: [hostSpread()],
      ...affinity({ podAffinity: { preferred: [{ weight: 50, podAffinityTerm: term(HOSTNAME) }] } }),
    });
    const c = place([...affPods, a1]);
    for (const p of [...affPods, a1]) expect(c.scheduled(p)).toBe(true);
    expect(c.skew(HOSTNAME, { matchLabels: labels })).toEqual(counts(1, 1, 1));
  });
  it('should support pod anti-affinity with a zone topology', () => {
    const c = cluster();
    const batch = () => pods(3, { labels: aff, ...requiredAnti(term(ZONE)) });
    // The zone of a planned node is only known once it launches, so each batch places one pod.
    for (const expected of [[1], [1, 1], [1, 1, 1], [1, 1, 1]]) {
      c.provision(batch());
      expect(c.skew(ZONE)).toEqual(expected);
      c.deleteUnscheduled();
    }
  });
  it('should not schedule pods with affinity to a non-existent pod', () => {
    const ps = pods(10, requiredAffinity(term(ZONE)));
    const c = place(ps);
    for (const p of ps) expect(c.scheduled(p)).toBe(false);
  });
  it('should support pod affinity with zone topology (unconstrained target)', () => {
    const target = pod({ labels: aff });
    const affPods = pods(10, requiredAffinity(term(ZONE)));
    const c = cluster();
    c.provision([...affPods, target]);
    for (const p of affPods) expect(c.scheduled(p)).toBe(false);
    expect(c.skew(ZONE)).toEqual([1]);
    c.provision(affPods);
    for (const p of affPods) expect(c.scheduled(p)).toBe(true);
    expect(c.skew(ZONE)).toEqual([11]);
  });
  it('should support pod affinity with zone topology (constrained target)', () => {
    const target = pod({ labels: aff, required: [[req(ZONE, 'In', 'test-zone-1')]] });
    const c = place([...pods(10, requiredAffinity(term(ZONE))), target]);
    expect(c.skew(ZONE)).toEqual([11]);
  });
  it('should handle multiple dependent affinities', () => {
    const tier = (type: string) => ({ type, spread: 'spread' });
    const ps = [
      pod({ labels: tier('db') }),
      pod({ labels: tier('web'), ...requiredAffinity(term(HOSTNAME, tier('db'))) }),
      pod({ labels: tier('cache'), ...requiredAffinity(term(HOSTNAME, tier('web'))) }),
      pod({ labels: tier('ui'), ...requiredAffinity(term(HOSTNAME, tier('cache'))) }),
    ];
    const c = place(ps);
    for (const p of ps) expect(c.scheduled(p)).toBe(true);
  });
  it('should fail to schedule pods with unsatisfiable dependencies', () => {
    const p = pod({
      labels: { type: 'db', spread: 'spread' },
      ...requiredAffinity(term(HOSTNAME, { type: 'web', spread: 'spread' })),
    });
    expect(place([p]).scheduled(p)).toBe(false);
  });
  describe('namespaces', () => {
    const withTarget = (namespace: string, t: PodAffinityTerm) => {
      const a1 = pod({ labels: aff, namespace });
      const a2 = pod(requiredAffinity(t));
      return { a1, a2, c: place([...tenHosts(), a1, a2]) };
    };
    it('should filter pod affinity topologies by namespace, no matching pods', () => {
      const { a1, a2, c } = withTarget('other-ns-no-match', term(HOSTNAME));
      expect(c.scheduled(a1)).toBe(true);
      expect(c.scheduled(a2)).toBe(false);
    });
    it('should filter pod affinity topologies by namespace, matching pods namespace list', () => {
      const { a1, a2, c } = withTarget('other-ns-list', term(HOSTNAME, aff, { namespaces: ['other-ns-list'] }));
      expect(sameNode(c, a1, a2)).toBe(true);
    });
    it('should filter pod affinity topologies by namespace, empty namespace selector', () => {
      const { a1, a2, c } = withTarget(
        'empty-ns-selector',
        term(HOSTNAME, aff, { namespaceSelector: { matchLabels: {} } }),
      );
      expect(sameNode(c, a1, a2)).toBe(true);
    });
  });
});
