// Karpenter scheduling acceptance: Dynamic Resource Allocation (docs/karpenter/test-cases.md §11.16), plus the device
// allocation simulation with IgnoreDRARequests=false (docs/karpenter/scheduling.md §2.7, §2.8, §2.16, §2.20). Pods are
// written as manifests and parsed by parsePod, so the container / init-container claim parsing is exercised.
import { describe, expect, it } from 'vitest';
import { REQUESTED_DRA_DRIVERS_ANNOTATION } from '../../../engine/domain/dra.ts';
import { IGNORED_DRA_REASON } from '../../../engine/dra/allocator.ts';
import { daemonSet, pod } from '../../fixtures/builders.ts';
import {
  claim,
  claimTemplate,
  clusterWideSlice,
  deviceClass,
  draPod,
  draState,
  GPU_DRIVER,
  gpuTemplates,
  nodeLocalSlice,
} from '../../fixtures/dra.ts';
import { defaultFakeInstanceTypes, fakeInstanceType } from '../../fixtures/instancetypes.ts';
import { Cluster, eachSolver, INSTANCE_TYPE } from './harness.ts';

const gpuClass = deviceClass('gpu');

eachSolver((s) => {
  describe('Dynamic Resource Allocation (IgnoreDRARequests=true, the default)', () => {
    const shapes = {
      'container claims': { containerClaims: ['gpu'] },
      'init-container claims': { initClaims: ['gpu'] },
      'both container and init-container claims': { containerClaims: ['gpu'], initClaims: ['gpu'] },
    };
    for (const [what, shape] of Object.entries(shapes)) {
      it(`should not schedule a pod with DRA ${what}`, () => {
        const c = new Cluster(s, {
          dra: draState({ deviceClasses: [gpuClass], resourceClaims: [claim('gpu-claim')] }),
        });
        const p = draPod({ name: 'dra', claims: [{ name: 'gpu', claim: 'gpu-claim' }], ...shape });
        const { plan } = c.provision([p]);
        expect(plan.newNodeClaims).toHaveLength(0);
        expect(plan.unschedulable).toEqual([{ uid: p.uid, reason: IGNORED_DRA_REASON }]);
        expect(c.scheduled(p)).toBe(false);
      });
    }
    it('should schedule a pod without DRA requirements', () => {
      const c = new Cluster(s);
      const p = draPod({ name: 'plain' });
      const { plan } = c.provision([p]);
      expect(plan.newNodeClaims).toHaveLength(1);
      expect(plan.unschedulable).toEqual([]);
      expect(c.scheduled(p)).toBe(true);
    });
    it('should leave a DaemonSet with a DRA claim out of the overhead (smaller instance than with IgnoreDRARequests=false)', () => {
      const ds = { ...daemonSet('dra-ds', { cpu: '3' }) };
      const dsWithClaim = {
        ...ds,
        pod: {
          ...ds.pod,
          resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'gpu-template' }],
          containerClaims: ['gpu'],
        },
      };
      const typeWith = (ignoreDRARequests: boolean) => {
        const c = new Cluster(s, { daemonSets: [dsWithClaim], options: { ignoreDRARequests } });
        const p = pod({ cpu: '1' });
        const { plan } = c.provision([p]);
        expect(plan.unschedulable).toEqual([]);
        return { type: c.scheduledNode(p).labels[INSTANCE_TYPE]!, requests: plan.newNodeClaims[0]!.requests };
      };
      const ignoring = typeWith(true);
      const counting = typeWith(false);
      expect(ignoring.type).toBe('small-instance-type');
      expect(ignoring.requests['cpu']).toBe(1000);
      expect(counting.requests['cpu']).toBe(4000); // the daemon's 3 CPU counted
      expect(counting.type).not.toBe(ignoring.type);
      const price = (name: string) => defaultFakeInstanceTypes().find((t) => t.name === name)!.offerings[0]!.price;
      expect(price(counting.type)).toBeGreaterThan(price(ignoring.type));
    });
  });

  describe('Dynamic Resource Allocation (IgnoreDRARequests=false)', () => {
    const gpu1 = {
      ...fakeInstanceType({ name: 'gpu-1', resources: { cpu: 4000 } }),
      deviceTemplates: gpuTemplates('gpu-1', 1),
    };
    const gpu2 = {
      ...fakeInstanceType({ name: 'gpu-2', resources: { cpu: 8000 } }),
      deviceTemplates: gpuTemplates('gpu-2', 2),
    };
    const plainIt = fakeInstanceType({ name: 'no-gpu', resources: { cpu: 2000 } });
    const options = { ignoreDRARequests: false };

    it('narrows instance types to those whose devices satisfy the claim, and annotates the driver', () => {
      const c = new Cluster(s, {
        instanceTypes: [plainIt, gpu1, gpu2],
        options,
        dra: draState({ deviceClasses: [gpuClass], resourceClaimTemplates: [claimTemplate('one-gpu')] }),
      });
      const p = draPod({ name: 'a', claims: [{ name: 'gpu', template: 'one-gpu' }], containerClaims: ['gpu'] });
      const { plan } = c.provision([p]);
      expect(plan.unschedulable).toEqual([]);
      expect(plan.newNodeClaims).toHaveLength(1);
      expect(plan.newNodeClaims[0]!.instanceTypes.map((i) => i.name)).toEqual(['gpu-1', 'gpu-2']);
      expect(plan.newNodeClaims[0]!.annotations).toEqual({ [REQUESTED_DRA_DRIVERS_ANNOTATION]: GPU_DRIVER });
    });
    it('counts template devices per NodeClaim: two one-GPU pods share a two-GPU node, a third needs another node', () => {
      const c = new Cluster(s, {
        instanceTypes: [gpu2],
        options,
        dra: draState({ deviceClasses: [gpuClass], resourceClaimTemplates: [claimTemplate('one-gpu')] }),
      });
      const ps = ['a', 'b', 'c'].map((name) =>
        draPod({ name, claims: [{ name: 'gpu', template: 'one-gpu' }], containerClaims: ['gpu'] }),
      );
      const { plan } = c.provision(ps);
      expect(plan.unschedulable).toEqual([]);
      expect(plan.newNodeClaims.map((n) => n.pods.length).sort()).toEqual([1, 2]);
    });
    it('needs two GPUs on one node for a claim of count 2', () => {
      const c = new Cluster(s, {
        instanceTypes: [gpu1, gpu2],
        options,
        dra: draState({ deviceClasses: [gpuClass], resourceClaims: [claim('two', 'gpu', { count: 2 })] }),
      });
      const p = draPod({ name: 'a', claims: [{ name: 'gpu', claim: 'two' }], containerClaims: ['gpu'] });
      const { plan } = c.provision([p]);
      expect(plan.newNodeClaims.map((n) => n.instanceTypes.map((i) => i.name))).toEqual([['gpu-2']]);
    });
    it("counts an in-flight node's expected devices (its instance type's templates) until it publishes", () => {
      const c = new Cluster(s, {
        instanceTypes: [gpu1],
        options,
        dra: draState({ deviceClasses: [gpuClass], resourceClaims: [claim('one'), claim('two')] }),
      });
      const a = draPod({ name: 'a', claims: [{ name: 'gpu', claim: 'one' }], containerClaims: ['gpu'] });
      const b = draPod({ name: 'b', claims: [{ name: 'gpu', claim: 'two' }], containerClaims: ['gpu'] });
      const first = c.provision([a], { bind: false });
      expect(first.created).toHaveLength(1);
      const inflight = first.created[0]!.name;
      const second = c.provision([a, b], { bind: false });
      expect([...second.plan.existing]).toEqual([[inflight, [a.uid]]]);
      expect(second.plan.newNodeClaims.map((n) => n.pods)).toEqual([[b.uid]]);
      // Once the node publishes its own slices, they are what counts (here: a slice without devices).
      const secondNode = second.created[0]!.name;
      c.dra = draState({ ...c.dra!, resourceSlices: [nodeLocalSlice(inflight, GPU_DRIVER)] });
      const third = c.provision([a, b], { bind: false });
      expect([...third.plan.existing.keys()]).toEqual([secondNode]);
      expect(third.plan.newNodeClaims).toHaveLength(1);
    });
    it('uses a free device published by an existing node', () => {
      const c = new Cluster(s, { instanceTypes: [plainIt], options });
      c.provision([pod({ cpu: '100m' })]);
      c.launch();
      const node = c.nodes[0]!.name;
      c.dra = draState({
        deviceClasses: [gpuClass],
        resourceClaims: [claim('one')],
        resourceSlices: [nodeLocalSlice(node, GPU_DRIVER, 'dev-0')],
      });
      const p = draPod({ name: 'a', cpu: '100m', claims: [{ name: 'gpu', claim: 'one' }], containerClaims: ['gpu'] });
      const { plan } = c.provision([p]);
      expect([...plan.existing]).toEqual([[node, [p.uid]]]);
      expect(plan.newNodeClaims).toHaveLength(0);
    });
    it('uses a cluster-wide device on a new node without device templates, once', () => {
      const c = new Cluster(s, {
        instanceTypes: [plainIt],
        options,
        dra: draState({
          deviceClasses: [gpuClass],
          resourceClaims: [claim('one'), claim('two')],
          resourceSlices: [clusterWideSlice('net', GPU_DRIVER, 'net-0')],
        }),
      });
      const a = draPod({ name: 'a', claims: [{ name: 'gpu', claim: 'one' }], containerClaims: ['gpu'] });
      const b = draPod({ name: 'b', claims: [{ name: 'gpu', claim: 'two' }], containerClaims: ['gpu'] });
      const { plan } = c.provision([a, b]);
      expect(plan.newNodeClaims.flatMap((n) => n.pods)).toHaveLength(1);
      expect(plan.unschedulable).toHaveLength(1);
      expect(plan.newNodeClaims[0]!.annotations).toBeUndefined(); // no node-local driver to wait for
    });
    it('explains a CEL selector outside the supported subset instead of allocating', () => {
      const cls = deviceClass('fancy', GPU_DRIVER, 'device.attributes["gpu.example.com"].model.startsWith("A100")');
      const c = new Cluster(s, {
        instanceTypes: [gpu1],
        options,
        dra: draState({ deviceClasses: [cls], resourceClaims: [claim('x', 'fancy')] }),
      });
      const p = draPod({ name: 'a', claims: [{ name: 'gpu', claim: 'x' }], containerClaims: ['gpu'] });
      const { plan } = c.provision([p]);
      expect(plan.newNodeClaims).toHaveLength(0);
      expect(plan.unschedulable).toHaveLength(1);
      expect(plan.unschedulable[0]!.reason).toMatch(
        /DRA: ResourceClaim default\/x request req-0: selector .*startsWith.*outside the supported CEL subset/,
      );
    });
    it('explains a missing ResourceClaim', () => {
      const c = new Cluster(s, { instanceTypes: [gpu1], options, dra: draState({ deviceClasses: [gpuClass] }) });
      const p = draPod({ name: 'a', claims: [{ name: 'gpu', claim: 'nope' }], containerClaims: ['gpu'] });
      const { plan } = c.provision([p]);
      expect(plan.unschedulable[0]!.reason).toBe('DRA: ResourceClaim default/nope (pod claim gpu) was not found');
    });
  });
});
