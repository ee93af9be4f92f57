// Default topology spread (kube-scheduler's PodTopologySpread defaultConstraints from --scheduler-config), after
// Karpenter core main past v1.14.1: pkg/controllers/provisioning/scheduling/defaultconstraints_test.go (the
// DefaultTopologySpreadInjector cases, on the deduction itself) and topology_test.go's DefaultConstraints context
// (the scheduling cases, against both solvers). Skews are sorted counts, as in the other topology suites.
import { describe, expect, it } from 'vitest';
import type {
  LabelSelector,
  OwnerRef,
  Pod,
  SelectorSources,
  TopologySpreadConstraint,
} from '../../../engine/domain/types.ts';
import { ownerKey } from '../../../engine/domain/types.ts';
import { defaultSelector, withDefaultSpread } from '../../../engine/scheduling/defaultspread.ts';
import { pod, pods, stateNode, type PodOptions } from '../../fixtures/builders.ts';
import { CAPACITY_TYPE, Cluster, counts, eachSolver, HOSTNAME, req, topologyPool, ZONE } from './harness.ts';

const labels = { test: 'test' };
const rsRef = (name = 'rs', uid = `${name}-uid`): OwnerRef => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  name,
  uid,
  controller: true,
});
const sources = (
  o: { services?: SelectorSources['services']; owners?: Record<string, LabelSelector> } = {},
): SelectorSources => ({ services: o.services ?? [], owners: new Map(Object.entries(o.owners ?? {})) });
const rsSources = (selector: LabelSelector = { matchLabels: labels }, name = 'rs') =>
  sources({ owners: { [ownerKey('ReplicaSet', 'default', name)]: selector } });

describe('DefaultTopologySpreadInjector', () => {
  describe('owner selectors', () => {
    it("should deduce a ReplicaSet's selector, not the pod's labels", () => {
      const p = pod({ labels: { ...labels, extra: 'x' }, owner: rsRef() });
      expect(defaultSelector(p, rsSources())).toEqual({
        matchExpressions: [{ key: 'test', operator: 'In', values: ['test'] }],
      });
    });
    it("should deduce a StatefulSet's selector and ignore the pod's volatile labels", () => {
      const p = pod({
        labels: { ...labels, 'statefulset.kubernetes.io/pod-name': 'web-0', 'apps.kubernetes.io/pod-index': '0' },
        owner: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', controller: true },
      });
      expect(
        defaultSelector(
          p,
          sources({ owners: { [ownerKey('StatefulSet', 'default', 'web')]: { matchLabels: labels } } }),
        ),
      ).toEqual({ matchExpressions: [{ key: 'test', operator: 'In', values: ['test'] }] });
    });
    it("should carry a ReplicaSet's matchExpressions through verbatim", () => {
      const expr = { key: 'tier', operator: 'NotIn' as const, values: ['cache'] };
      const p = pod({ labels, owner: rsRef() });
      expect(defaultSelector(p, rsSources({ matchLabels: labels, matchExpressions: [expr] }))).toEqual({
        matchExpressions: [{ key: 'test', operator: 'In', values: ['test'] }, expr],
      });
    });
    it("should deduce a ReplicationController's selector", () => {
      const p = pod({
        labels,
        owner: { apiVersion: 'v1', kind: 'ReplicationController', name: 'rc', controller: true },
      });
      expect(
        defaultSelector(
          p,
          sources({ owners: { [ownerKey('ReplicationController', 'default', 'rc')]: { matchLabels: labels } } }),
        ),
      ).toEqual({ matchLabels: labels });
    });
    it('should not deduce a selector from an unsupported owner kind', () => {
      const p = pod({ labels, owner: { apiVersion: 'batch/v1', kind: 'Job', name: 'job', controller: true } });
      expect(
        defaultSelector(p, sources({ owners: { [ownerKey('Job', 'default', 'job')]: { matchLabels: labels } } })),
      ).toBeUndefined();
    });
    it('should ignore a non-controller owner reference', () => {
      const p = pod({ labels, owner: { ...rsRef(), controller: false } });
      expect(defaultSelector(p, rsSources())).toBeUndefined();
    });
    it('should tolerate an owner that no longer exists', () => {
      expect(defaultSelector(pod({ labels, owner: rsRef('gone') }), rsSources())).toBeUndefined();
    });
  });

  describe('service selectors', () => {
    const svc = (selector: Record<string, string> | undefined, namespace = 'default', name = 'svc') => ({
      namespace,
      name,
      ...(selector ? { selector } : {}),
    });
    const bare = (l: Record<string, string> = labels) =>
      pod({ labels: l, owner: { apiVersion: 'batch/v1', kind: 'Job', name: 'j', controller: true } });
    it('should deduce a selector from a matching service', () => {
      expect(defaultSelector(bare(), sources({ services: [svc(labels)] }))).toEqual({ matchLabels: labels });
    });
    it('should merge the selectors of every matching service', () => {
      const p = bare({ ...labels, app: 'web' });
      expect(
        defaultSelector(p, sources({ services: [svc(labels, 'default', 'a'), svc({ app: 'web' }, 'default', 'b')] })),
      ).toEqual({ matchLabels: { ...labels, app: 'web' } });
    });
    it('should not deduce a selector from a non-matching service', () => {
      expect(defaultSelector(bare(), sources({ services: [svc({ test: 'other' })] }))).toBeUndefined();
    });
    it('should skip a service with a nil selector', () => {
      expect(defaultSelector(bare(), sources({ services: [svc(undefined)] }))).toBeUndefined();
    });
    it('should contribute nothing for a service with an empty selector', () => {
      expect(defaultSelector(bare(), sources({ services: [svc({})] }))).toBeUndefined();
    });
    it('should ignore a matching service in another namespace', () => {
      expect(defaultSelector(bare(), sources({ services: [svc(labels, 'other')] }))).toBeUndefined();
    });
    it("should combine a service selector with the owner's", () => {
      const p = pod({ labels: { ...labels, app: 'web' }, owner: rsRef() });
      const s = { ...rsSources(), services: [svc({ app: 'web' })] };
      expect(defaultSelector(p, s)).toEqual({
        matchLabels: { app: 'web' },
        matchExpressions: [{ key: 'test', operator: 'In', values: ['test'] }],
      });
    });
  });

  describe('conflicting service and owner selectors', () => {
    it("should let a ReplicationController's selector overwrite a conflicting service label", () => {
      const p = pod({
        labels: { test: 'svc' },
        owner: { apiVersion: 'v1', kind: 'ReplicationController', name: 'rc', controller: true },
      });
      const s = sources({
        services: [{ namespace: 'default', name: 'svc', selector: { test: 'svc' } }],
        owners: { [ownerKey('ReplicationController', 'default', 'rc')]: { matchLabels: { test: 'rc' } } },
      });
      expect(defaultSelector(p, s)).toEqual({ matchLabels: { test: 'rc' } });
    });
    it("should AND a ReplicaSet's conflicting selector, selecting nothing", () => {
      const p = pod({ labels: { test: 'svc' }, owner: rsRef() });
      const s = {
        ...rsSources({ matchLabels: { test: 'rs' } }),
        services: [{ namespace: 'default', name: 'svc', selector: { test: 'svc' } }],
      };
      expect(defaultSelector(p, s)).toEqual({
        matchLabels: { test: 'svc' },
        matchExpressions: [{ key: 'test', operator: 'In', values: ['rs'] }],
      });
    });
  });

  describe('selector caching', () => {
    const zone: TopologySpreadConstraint = { maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'DoNotSchedule' };
    it('should not share a selector between pods of the same owner with different labels', () => {
      const s = sources({ services: [{ namespace: 'default', name: 'svc', selector: { app: 'a' } }] });
      const [a, b] = withDefaultSpread([pod({ labels: { app: 'a' } }), pod({ labels: { app: 'b' } })], [zone], s);
      expect(a!.topologySpreadConstraints[0]!.labelSelector).toEqual({ matchLabels: { app: 'a' } });
      expect(b!.topologySpreadConstraints).toEqual([]);
    });
    it('should not share a selector between identically-labeled pods in different namespaces', () => {
      const s = sources({ services: [{ namespace: 'default', name: 'svc', selector: labels }] });
      const [a, b] = withDefaultSpread([pod({ labels }), pod({ labels, namespace: 'other' })], [zone], s);
      expect(a!.topologySpreadConstraints).toHaveLength(1);
      expect(b!.topologySpreadConstraints).toEqual([]);
    });
  });

  describe('injection', () => {
    const zone: TopologySpreadConstraint = { maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'DoNotSchedule' };
    it('should leave a pod that declares its own constraints untouched', () => {
      const own = pod({
        labels,
        owner: rsRef(),
        spread: [{ ...zone, maxSkew: 3, labelSelector: { matchLabels: labels } }],
      });
      expect(withDefaultSpread([own], [zone], rsSources())[0]).toBe(own);
    });
    it('should be a no-op when no defaults are configured', () => {
      const ps = [pod({ labels, owner: rsRef() })];
      expect(withDefaultSpread(ps, undefined, rsSources())).toBe(ps);
      expect(withDefaultSpread(ps, [], rsSources())).toBe(ps);
    });
    it("should give each pod its own constraint slice so relaxation can't leak across pods", () => {
      // The engine never mutates pods: relaxation builds new ones, so pods of one workload may share the list.
      const [a, b] = withDefaultSpread(
        [pod({ labels, owner: rsRef() }), pod({ labels, owner: rsRef() })],
        [zone],
        rsSources(),
      );
      expect(Object.isFrozen(a!.topologySpreadConstraints)).toBe(true);
      expect(a!.topologySpreadConstraints).toEqual(b!.topologySpreadConstraints);
    });
    it('should preserve the configured constraint fields on the injected copy', () => {
      const configured: TopologySpreadConstraint = {
        maxSkew: 2,
        topologyKey: ZONE,
        whenUnsatisfiable: 'ScheduleAnyway',
        minDomains: 3,
        nodeAffinityPolicy: 'Ignore',
        nodeTaintsPolicy: 'Honor',
      };
      const [a] = withDefaultSpread([pod({ labels, owner: rsRef() })], [configured], rsSources());
      expect(a!.topologySpreadConstraints).toEqual([
        { ...configured, labelSelector: { matchExpressions: [{ key: 'test', operator: 'In', values: ['test'] }] } },
      ]);
    });
    it('should deduce independent selectors for pods of different workloads in one pass', () => {
      const s = sources({
        owners: {
          [ownerKey('ReplicaSet', 'default', 'a')]: { matchLabels: { app: 'a' } },
          [ownerKey('ReplicaSet', 'default', 'b')]: { matchLabels: { app: 'b' } },
        },
      });
      const [a, b] = withDefaultSpread(
        [pod({ labels: { app: 'a' }, owner: rsRef('a') }), pod({ labels: { app: 'b' }, owner: rsRef('b') })],
        [zone],
        s,
      );
      expect(a!.topologySpreadConstraints[0]!.labelSelector).toEqual({
        matchExpressions: [{ key: 'app', operator: 'In', values: ['a'] }],
      });
      expect(b!.topologySpreadConstraints[0]!.labelSelector).toEqual({
        matchExpressions: [{ key: 'app', operator: 'In', values: ['b'] }],
      });
    });
  });
});

eachSolver((s) => {
  describe('DefaultConstraints', () => {
    const zoneDefault: TopologySpreadConstraint = { maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'DoNotSchedule' };
    const hostnameDefault: TopologySpreadConstraint = {
      maxSkew: 1,
      topologyKey: HOSTNAME,
      whenUnsatisfiable: 'DoNotSchedule',
    };
    const deduced = { matchLabels: labels };
    const cluster = (
      defaults: readonly TopologySpreadConstraint[],
      o: { pool?: ReturnType<typeof topologyPool>; sources?: SelectorSources } = {},
    ) =>
      new Cluster(s, {
        nodePools: [o.pool ?? topologyPool()],
        options: defaults.length ? { defaultTopologySpreadConstraints: defaults } : {},
        selectorSources: o.sources ?? rsSources(),
      });
    const ownedPods = (n: number, o: PodOptions = {}): Pod[] => pods(n, { labels, owner: rsRef(), ...o });
    const zones = (...z: string[]) =>
      topologyPool({ requirements: [req(CAPACITY_TYPE, 'Exists'), req(ZONE, 'In', ...z)] });
    const nodesOf = (c: Cluster, ps: readonly Pod[]) => new Set(ps.map((p) => c.scheduledNode(p).name));

    it('should apply default zonal spread to a pod that declares no constraints of its own', () => {
      const c = cluster([zoneDefault]);
      c.provision(ownedPods(4));
      expect(c.skew(ZONE, deduced)).toEqual(counts(1, 1, 2));
    });
    it('should apply default hostname spread to a pod that declares no constraints of its own', () => {
      const c = cluster([hostnameDefault]);
      c.provision(ownedPods(3));
      expect(c.skew(HOSTNAME, deduced)).toEqual(counts(1, 1, 1));
    });
    it('should NOT apply the default to a pod that declares its own constraints', () => {
      const c = cluster([hostnameDefault]);
      const ps = ownedPods(3, { spread: [{ ...hostnameDefault, maxSkew: 3, labelSelector: deduced }] });
      c.provision(ps);
      expect(nodesOf(c, ps).size).toBe(1);
    });
    it('should carry minDomains through a synthesized default', () => {
      const c = cluster([{ ...zoneDefault, minDomains: 3 }], { pool: zones('test-zone-1', 'test-zone-2') });
      c.provision(ownedPods(3));
      expect(c.skew(ZONE, deduced)).toEqual(counts(1, 1));
    });
    it("should NOT schedule past a synthesized DoNotSchedule default that can't be satisfied", () => {
      const c = cluster([{ ...zoneDefault, minDomains: 3 }], { pool: zones('test-zone-1') });
      const ps = ownedPods(3);
      c.provision(ps);
      expect(ps.filter((p) => c.scheduled(p))).toHaveLength(1);
    });
    it("should relax a synthesized ScheduleAnyway default when it can't be satisfied", () => {
      const c = cluster([{ ...zoneDefault, whenUnsatisfiable: 'ScheduleAnyway', minDomains: 3 }], {
        pool: zones('test-zone-1'),
      });
      const ps = ownedPods(3);
      c.provision(ps);
      expect(ps.every((p) => c.scheduled(p))).toBe(true);
    });
    it('should be a no-op when no default constraints are configured', () => {
      const c = cluster([]);
      const ps = ownedPods(3);
      c.provision(ps);
      expect(nodesOf(c, ps).size).toBe(1);
    });
    it('should not apply the default to a pod with no owner and no matching service', () => {
      const c = cluster([hostnameDefault]);
      const ps = pods(3, { labels, owner: { kind: 'Pod', name: 'none' } });
      c.provision(ps);
      expect(nodesOf(c, ps).size).toBe(1);
    });
    it('should count pre-existing cluster pods through the deduced selector', () => {
      const c = cluster([zoneDefault], { pool: zones('test-zone-1', 'test-zone-2') });
      c.nodes.push(stateNode({ name: 'existing', labels: { [ZONE]: 'test-zone-1' } }));
      c.provision([
        pod({ labels, owner: rsRef(), nodeName: 'existing' }),
        pod({ labels, owner: rsRef(), nodeName: 'existing' }),
      ]);
      const fresh = ownedPods(2);
      c.provision(fresh);
      for (const p of fresh) expect(c.scheduledNode(p).labels[ZONE]).toBe('test-zone-2');
      expect(c.skew(ZONE, deduced)).toEqual(counts(2, 2));
    });
    it('should spread each workload independently', () => {
      const other = { test: 'other' };
      const src = sources({
        owners: {
          [ownerKey('ReplicaSet', 'default', 'rs')]: deduced,
          [ownerKey('ReplicaSet', 'default', 'other')]: { matchLabels: other },
        },
      });
      const c = cluster([zoneDefault], { sources: src });
      c.provision([...ownedPods(3), ...pods(3, { labels: other, owner: rsRef('other') })]);
      expect(c.skew(ZONE, deduced)).toEqual(counts(1, 1, 1));
      expect(c.skew(ZONE, { matchLabels: other })).toEqual(counts(1, 1, 1));
    });
    it('should spread each Deployment revision independently', () => {
      const old = { test: 'test', 'pod-template-hash': 'old' };
      const cur = { test: 'test', 'pod-template-hash': 'new' };
      const src = sources({
        owners: {
          [ownerKey('ReplicaSet', 'default', 'old')]: { matchLabels: old },
          [ownerKey('ReplicaSet', 'default', 'new')]: { matchLabels: cur },
        },
      });
      const c = cluster([zoneDefault], { sources: src });
      c.provision([...pods(3, { labels: old, owner: rsRef('old') }), ...pods(3, { labels: cur, owner: rsRef('new') })]);
      expect(c.skew(ZONE, { matchLabels: old })).toEqual(counts(1, 1, 1));
      expect(c.skew(ZONE, { matchLabels: cur })).toEqual(counts(1, 1, 1));
    });
    it('should deduce a selector from a matching service for a pod with no supported owner', () => {
      const c = cluster([zoneDefault], {
        sources: sources({ services: [{ namespace: 'default', name: 'svc', selector: labels }] }),
      });
      c.provision(
        pods(4, { labels, owner: { apiVersion: 'batch/v1', kind: 'Job', name: 'test-job', controller: true } }),
      );
      expect(c.skew(ZONE, deduced)).toEqual(counts(1, 1, 2));
    });
  });
});
