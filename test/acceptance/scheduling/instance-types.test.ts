// Karpenter scheduling acceptance: Preferential Fallback, Instance Type Compatibility and Binpacking
// (docs/karpenter/test-cases.md §11.5–§11.7). Pods whose requests come from containers (init containers, runtime
// class overhead) are built as Kubernetes manifests and parsed by engine/api, so the requests the solver
// sees are computed the way the controller computes them.
import { describe, expect, it } from 'vitest';
import type { InstanceType, Pod } from '../../../engine/domain/types.ts';
import { parsePod } from '../../../engine/api/pod.ts';
import { nodePool, pod, pods } from '../../fixtures/builders.ts';
import {
  EXOTIC_INSTANCE_LABEL_KEY,
  fakeInstanceType,
  fakeInstanceTypes,
  fakeOffering,
  LABEL_INSTANCE_SIZE,
} from '../../fixtures/instancetypes.ts';
import { ARCH, CAPACITY_TYPE, Cluster, eachSolver, INSTANCE_TYPE, OS, req, suitePool, ZONE } from './harness.ts';

const Gi = 2 ** 30;

/** A manifest pod: containers (and init containers) with requests, optional spec.overhead. */
function manifestPod(name: string, spec: Record<string, unknown>): Pod {
  const r = parsePod({ metadata: { name, uid: `uid-${name}`, namespace: 'default' }, spec });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return { ...r.value, unschedulable: true };
}

/** A copy of the type with an extra resource in its capacity and allocatable. */
function withResource(it: InstanceType, name: string, qty: number): InstanceType {
  return { ...it, capacity: { ...it.capacity, [name]: qty }, allocatable: { ...it.allocatable, [name]: qty } };
}

eachSolver((s) => {
  const withReqs = (...r: ReturnType<typeof req>[]) =>
    suitePool({ requirements: [req(CAPACITY_TYPE, 'In', 'spot', 'on-demand'), ...r] });
  const cluster = (pool = suitePool(), instanceTypes?: InstanceType[]) =>
    new Cluster(s, { nodePools: [pool], ...(instanceTypes ? { instanceTypes } : {}) });
  const nodesOf = (c: Cluster, ps: Pod[]) => new Set(ps.map((p) => c.scheduledNode(p).name));

  describe('Preferential Fallback', () => {
    describe('Required', () => {
      it('should not relax the final term', () => {
        const c = cluster(withReqs(req(ZONE, 'In', 'test-zone-1'), req(INSTANCE_TYPE, 'In', 'default-instance-type')));
        const p = pod({ required: [[req(ZONE, 'In', 'invalid')]] });
        c.provision([p]);
        expect(c.scheduled(p)).toBe(false);
      });
      it('should relax multiple terms', () => {
        const c = cluster();
        const p = pod({
          required: [
            [req(ZONE, 'In', 'invalid')],
            [req(ZONE, 'In', 'invalid')],
            [req(ZONE, 'In', 'test-zone-1')],
            [req(ZONE, 'In', 'test-zone-2')],
          ],
        });
        c.provision([p]);
        expect(c.scheduledNode(p).labels[ZONE]).toBe('test-zone-1');
      });
    });
    describe('Preferred', () => {
      it('should relax all terms', () => {
        const c = cluster();
        const p = pod({
          preferred: [
            { weight: 1, expressions: [req(ZONE, 'In', 'invalid')] },
            { weight: 1, expressions: [req(INSTANCE_TYPE, 'In', 'invalid')] },
          ],
        });
        c.provision([p]);
        expect(c.scheduled(p)).toBe(true);
      });
      it('should relax to use lighter weights', () => {
        const c = cluster(withReqs(req(ZONE, 'In', 'test-zone-1', 'test-zone-2')));
        const p = pod({
          preferred: [
            { weight: 100, expressions: [req(INSTANCE_TYPE, 'In', 'test-zone-3')] },
            { weight: 50, expressions: [req(ZONE, 'In', 'test-zone-2')] },
            { weight: 1, expressions: [req(ZONE, 'In', 'test-zone-1')] },
          ],
        });
        c.provision([p]);
        expect(c.scheduledNode(p).labels[ZONE]).toBe('test-zone-2');
      });
      it('should schedule even if preference is conflicting with requirement', () => {
        const c = cluster();
        const p = pod({
          preferred: [{ weight: 1, expressions: [req(ZONE, 'NotIn', 'test-zone-3')] }],
          required: [[req(ZONE, 'In', 'test-zone-3')]],
        });
        c.provision([p]);
        expect(c.scheduledNode(p).labels[ZONE]).toBe('test-zone-3');
      });
      it('should schedule even if preference requirements are conflicting', () => {
        const c = cluster();
        const p = pod({
          preferred: [{ weight: 1, expressions: [req(ZONE, 'In', 'invalid'), req(ZONE, 'NotIn', 'invalid')] }],
        });
        c.provision([p]);
        expect(c.scheduled(p)).toBe(true);
      });
    });
  });

  describe('Instance Type Compatibility', () => {
    const bothArchs = () => withReqs(req(ARCH, 'In', 'arm64', 'amd64'));
    const amd64 = () => withReqs(req(ARCH, 'In', 'amd64'));
    const twoNodes = (pool: ReturnType<typeof suitePool>, ps: Pod[], its?: InstanceType[]) => {
      const c = cluster(pool, its);
      c.provision(ps);
      expect(nodesOf(c, ps).size).toBe(2);
    };
    it('should not schedule if requesting more resources than any instance type has', () => {
      const c = cluster();
      const p = pod({ cpu: '512' });
      c.provision([p]);
      expect(c.scheduled(p)).toBe(false);
    });
    it('should launch pods with different archs on different instances', () => {
      twoNodes(bothArchs(), [pod({ nodeSelector: { [ARCH]: 'amd64' } }), pod({ nodeSelector: { [ARCH]: 'arm64' } })]);
    });
    it('should exclude instance types that are not supported by the pod constraints (node affinity/instance type)', () => {
      const c = cluster(amd64());
      const p = pod({ required: [[req(INSTANCE_TYPE, 'In', 'arm-instance-type')]] });
      c.provision([p]);
      expect(c.scheduled(p)).toBe(false);
    });
    it('should exclude instance types that are not supported by the pod constraints (node affinity/operating system)', () => {
      const c = cluster(amd64());
      const p = pod({ required: [[req(OS, 'In', 'ios')]] });
      c.provision([p]);
      expect(c.scheduled(p)).toBe(false);
    });
    it('should exclude instance types that are not supported by the provider constraints (arch)', () => {
      const c = cluster(amd64());
      const p = pod({ cpu: '14' });
      c.provision([p]);
      expect(c.scheduled(p)).toBe(false);
    });
    it('should launch pods with different operating systems on different instances', () => {
      twoNodes(bothArchs(), [pod({ nodeSelector: { [OS]: 'linux' } }), pod({ nodeSelector: { [OS]: 'windows' } })]);
    });
    it('should launch pods with different instance type node selectors on different instances', () => {
      twoNodes(bothArchs(), [
        pod({ nodeSelector: { 'beta.kubernetes.io/instance-type': 'small-instance-type' } }),
        pod({ nodeSelector: { [INSTANCE_TYPE]: 'default-instance-type' } }),
      ]);
    });
    it('should launch pods with different zone selectors on different instances', () => {
      twoNodes(bothArchs(), [
        pod({ nodeSelector: { [ZONE]: 'test-zone-1' } }),
        pod({ nodeSelector: { [ZONE]: 'test-zone-2' } }),
      ]);
    });
    const gpuTypes = () => {
      const its = fakeInstanceTypes(5);
      its[0] = withResource(its[0]!, 'karpenter.sh/super-great-gpu', 25);
      its[1] = withResource(its[1]!, 'karpenter.sh/even-better-gpu', 25);
      return its;
    };
    it("should launch pods with resources that aren't on any single instance type on different instances", () => {
      twoNodes(
        suitePool(),
        [
          pod({ resources: { 'karpenter.sh/super-great-gpu': '1' } }),
          pod({ resources: { 'karpenter.sh/even-better-gpu': '1' } }),
        ],
        gpuTypes(),
      );
    });
    it("should fail to schedule a pod with resources requests that aren't on a single instance type", () => {
      const c = cluster(suitePool(), gpuTypes());
      const p = pod({ resources: { 'karpenter.sh/super-great-gpu': '1', 'karpenter.sh/even-better-gpu': '1' } });
      c.provision([p]);
      expect(c.scheduled(p)).toBe(false);
    });
    describe('Provider Specific Labels', () => {
      const five = () => cluster(suitePool(), fakeInstanceTypes(5));
      it('should filter instance types that match labels', () => {
        const c = five();
        const ps = [
          pod({ nodeSelector: { [LABEL_INSTANCE_SIZE]: 'large' } }),
          pod({ nodeSelector: { [LABEL_INSTANCE_SIZE]: 'small' } }),
        ];
        c.provision(ps);
        expect(c.scheduledNode(ps[0]!).labels[INSTANCE_TYPE]).toBe('fake-it-4');
        expect(c.scheduledNode(ps[1]!).labels[INSTANCE_TYPE]).toBe('fake-it-0');
      });
      it('should not schedule with incompatible labels', () => {
        const c = five();
        const ps = [
          pod({ nodeSelector: { [LABEL_INSTANCE_SIZE]: 'large', [INSTANCE_TYPE]: 'fake-it-0' } }),
          pod({ nodeSelector: { [LABEL_INSTANCE_SIZE]: 'small', [INSTANCE_TYPE]: 'fake-it-4' } }),
        ];
        c.provision(ps);
        expect(ps.map((p) => c.scheduled(p))).toEqual([false, false]);
      });
      it('should schedule optional labels', () => {
        const c = five();
        const p = pod({ required: [[req(EXOTIC_INSTANCE_LABEL_KEY, 'Exists')]] });
        c.provision([p]);
        expect(c.scheduledNode(p).labels).toHaveProperty(EXOTIC_INSTANCE_LABEL_KEY);
        expect(c.scheduledNode(p).labels[INSTANCE_TYPE]).toBe('fake-it-4');
      });
      it('should schedule without optional labels if disallowed', () => {
        const c = cluster(nodePool(), fakeInstanceTypes(5));
        const p = pod({ required: [[req(EXOTIC_INSTANCE_LABEL_KEY, 'DoesNotExist')]] });
        c.provision([p]);
        expect(c.scheduledNode(p).labels).not.toHaveProperty(EXOTIC_INSTANCE_LABEL_KEY);
      });
    });
  });

  describe('Binpacking', () => {
    const typeOf = (ps: Pod[], its?: InstanceType[], pool = suitePool()) => {
      const c = cluster(pool, its);
      c.provision(ps);
      return { c, types: ps.map((p) => (c.scheduled(p) ? c.scheduledNode(p).labels[INSTANCE_TYPE] : undefined)) };
    };
    it('should schedule a small pod on the smallest instance', () => {
      expect(typeOf([pod({ memory: '100M' })]).types).toEqual(['small-instance-type']);
    });
    it('should schedule a small pod on the smallest possible instance type', () => {
      expect(typeOf([pod({ memory: '2000M' })]).types).toEqual(['small-instance-type']);
    });
    it('should take pod runtime class into consideration', () => {
      // The RuntimeClass admission copies its 2-CPU overhead into spec.overhead; 1 + 2 CPU needs 3 CPUs.
      const p = manifestPod('runtime', {
        containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }],
        overhead: { cpu: '2' },
      });
      expect(typeOf([p]).types).toEqual(['default-instance-type']);
    });
    it('should schedule multiple small pods on the smallest possible instance type', () => {
      const ps = pods(5, { memory: '10M' });
      const { c, types } = typeOf(ps);
      expect(new Set(types)).toEqual(new Set(['small-instance-type']));
      expect(nodesOf(c, ps).size).toBe(1);
    });
    it('should create new nodes when a node is at capacity', () => {
      const ps = pods(40, { nodeSelector: { [ARCH]: 'amd64' }, memory: '1.8G' });
      const { c, types } = typeOf(ps);
      expect(new Set(types)).toEqual(new Set(['default-instance-type']));
      expect(nodesOf(c, ps).size).toBe(20);
    });
    it('should pack small and large pods together', () => {
      const ps = [
        ...pods(40, { nodeSelector: { [ARCH]: 'amd64' }, memory: '1.8G' }),
        ...pods(20, { nodeSelector: { [ARCH]: 'amd64' }, memory: '400M' }),
      ];
      const { c, types } = typeOf(ps);
      expect(new Set(types)).toEqual(new Set(['default-instance-type']));
      expect(nodesOf(c, ps).size).toBe(20);
    });
    it('should pack nodes tightly', () => {
      const ps = [pod({ cpu: '4.5' }), pod({ cpu: '1' })];
      const { c, types } = typeOf(ps, fakeInstanceTypes(5));
      expect(nodesOf(c, ps).size).toBe(2);
      expect(types[0]).not.toBe(types[1]);
    });
    it('should handle zero-quantity resource requests', () => {
      expect(typeOf([pod({ resources: { 'foo.com/weird-resources': '0' } })]).types[0]).toBeDefined();
    });
    it("should not schedule pods that exceed every instance type's capacity", () => {
      expect(typeOf([pod({ memory: '2Ti' })]).types).toEqual([undefined]);
    });
    it('should create new nodes when a node is at capacity due to pod limits per node', () => {
      const ps = pods(25, { nodeSelector: { [ARCH]: 'amd64' }, cpu: '1m', memory: '1m' });
      const { c, types } = typeOf(ps);
      expect(new Set(types)).toEqual(new Set(['small-instance-type']));
      expect(nodesOf(c, ps).size).toBe(5);
    });
    it('should take into account initContainer resource requests when binpacking', () => {
      const p = manifestPod('init', {
        containers: [{ name: 'c', resources: { requests: { cpu: '1', memory: '1Gi' } } }],
        initContainers: [{ name: 'i', resources: { requests: { cpu: '2', memory: '1Gi' } } }],
      });
      expect(typeOf([p]).types).toEqual(['default-instance-type']);
    });
    it('should not schedule pods when initContainer resource requests are greater than available instance types', () => {
      const p = manifestPod('init-big', {
        containers: [{ name: 'c', resources: { requests: { cpu: '1', memory: '1Gi' } } }],
        initContainers: [{ name: 'i', resources: { requests: { cpu: '2', memory: '1Ti' } } }],
      });
      expect(typeOf([p]).types).toEqual([undefined]);
    });
    it('should select for valid instance types, regardless of price', () => {
      const priced = (name: string, cpu: number, price: number) =>
        fakeInstanceType({
          name,
          resources: { cpu: cpu * 1000, memory: cpu * Gi },
          offerings: [fakeOffering({ zone: 'test-zone-1a', capacityType: 'on-demand', price })],
        });
      const its = [priced('medium', 2, 3), priced('small', 1, 2), priced('large', 4, 1)];
      const c = cluster(suitePool(), its);
      const p = pod({ cpu: '1m', memory: '1Mi' });
      const { plan } = c.provision([p]);
      expect(c.scheduledNode(p).labels[INSTANCE_TYPE]).toBe('large');
      // All three types are valid options handed to the cloud provider, cheapest first.
      const options = plan.newNodeClaims[0]!.requirements.find((r) => r.key === INSTANCE_TYPE)!.values;
      expect(new Set(options)).toEqual(new Set(['small', 'medium', 'large']));
      expect(plan.newNodeClaims[0]!.instanceTypes.map((o) => o.name)).toEqual(['large', 'small', 'medium']);
    });
  });
});
