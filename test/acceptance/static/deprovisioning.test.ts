// Karpenter core pkg/controllers/static/deprovisioning/suite_test.go (main after v1.14.1), case for case where
// the case carries over, against static.deprovisioning in the simulator (feature gate StaticCapacity).
import { afterEach, describe, expect, it } from 'vitest';
import { replicasChanged } from '../../../controller/controllers/static/counts.ts';
import { newStaticDeprovisioning } from '../../../controller/controllers/static/deprovisioning.ts';
import { deletingNames, live, MIN, startStatic, staticClaim, staticPool, type Static } from './harness.ts';

let t: Static | undefined;
afterEach(async () => {
  await t?.sim.close();
  t = undefined;
});

const start = async () => (t = await startStatic(newStaticDeprovisioning));

describe('Static Deprovisioning', () => {
  describe('Reconcile', () => {
    it('should return early if nodepool replicas is nil', async () => {
      const s = await start();
      await staticPool(s.sim, {});
      await staticClaim(s.sim);
      expect(await s.reconcile()).toEqual({ kind: 'done' });
      expect(deletingNames(s.sim)).toEqual([]);
    });
    it('should return early if current node count is less than or equal to desired replicas', async () => {
      const s = await start();
      await staticPool(s.sim, { replicas: 2 });
      await staticClaim(s.sim);
      await staticClaim(s.sim);
      expect(await s.reconcile()).toEqual({ kind: 'requeueAfter', ms: MIN });
      expect(deletingNames(s.sim)).toEqual([]);
    });
    it('should only consider running nodeclaims and not deleting nodeclaims', async () => {
      const s = await start();
      await staticPool(s.sim, { replicas: 2 });
      await staticClaim(s.sim);
      await staticClaim(s.sim);
      const gone = await staticClaim(s.sim, { deleting: true });
      await s.reconcile();
      expect(deletingNames(s.sim)).toEqual([gone]);
    });
    it('should terminate excess nodeclaims when current count exceeds desired replicas', async () => {
      const s = await start();
      await staticPool(s.sim, { replicas: 2 });
      for (let i = 0; i < 5; i++) await staticClaim(s.sim);
      expect(await s.reconcile()).toEqual({ kind: 'requeueAfter', ms: MIN });
      expect(live(s.sim)).toHaveLength(2);
      expect(deletingNames(s.sim)).toHaveLength(3);
      // The ranking is the engine's, on its workers: one call for the three.
      expect(s.engineCalls).toEqual(['staticScaleDown']);
    });
    it('should handle zero replicas by terminating all nodeclaims', async () => {
      const s = await start();
      await staticPool(s.sim, { replicas: 0 });
      for (let i = 0; i < 3; i++) await staticClaim(s.sim, { pods: [{}] });
      await s.reconcile();
      expect(live(s.sim)).toEqual([]);
    });
    it('should handle no active nodeclaims gracefully', async () => {
      const s = await start();
      await staticPool(s.sim, { replicas: 1 });
      expect(await s.reconcile()).toEqual({ kind: 'requeueAfter', ms: MIN });
    });

    describe('Deprovision Candidate Selection', () => {
      it('should prioritize nodeclaims that have unresolved providerID', async () => {
        const s = await start();
        await staticPool(s.sim, { replicas: 2 });
        await staticClaim(s.sim);
        await staticClaim(s.sim);
        const unlaunched = await staticClaim(s.sim, { launched: false });
        await s.reconcile();
        expect(deletingNames(s.sim)).toEqual([unlaunched]);
      });
      it('should prioritize empty nodes (with only daemonset pods) for termination', async () => {
        const s = await start();
        await staticPool(s.sim, { replicas: 2 });
        const onePod = await staticClaim(s.sim, { pods: [{}] });
        const dsOnly = await staticClaim(s.sim, { pods: [{ daemonSet: true }] });
        await staticClaim(s.sim, { pods: [{}, {}] });
        // A DaemonSet pod under do-not-disrupt keeps its node from counting as empty.
        await staticClaim(s.sim, { pods: [{ daemonSet: true, doNotDisrupt: true }] });
        const empty = await staticClaim(s.sim);
        await s.reconcile();
        // Both empty nodes, then the cheaper of the busy ones (one pod to evict, not two; the guarded one last).
        expect(deletingNames(s.sim)).toEqual([dsOnly, empty, onePod].sort());
      });
      it('should terminate non-empty nodes when empty nodes are insufficient', async () => {
        const s = await start();
        await staticPool(s.sim, { replicas: 1 });
        const empty = await staticClaim(s.sim);
        const light = await staticClaim(s.sim, { pods: [{}] });
        await staticClaim(s.sim, { pods: [{}, {}, {}] });
        await s.reconcile();
        expect(deletingNames(s.sim)).toEqual([empty, light].sort());
      });
      describe('disruption cost ordering', () => {
        it('takes the node whose pods are cheapest to evict, and a do-not-disrupt node last', async () => {
          const s = await start();
          await staticPool(s.sim, { replicas: 2 });
          const guarded = await staticClaim(s.sim, { pods: [{ doNotDisrupt: true }] });
          const costly = await staticClaim(s.sim, { pods: [{ deletionCost: 2 ** 30 }] });
          const cheap = await staticClaim(s.sim, { pods: [{ deletionCost: -(2 ** 29) }] });
          const twoPods = await staticClaim(s.sim, { pods: [{}, {}] });
          await s.reconcile();
          // Eviction costs: cheap 1 − 2^29/2^27 = −3, twoPods 2, costly 1 + 2^30/2^27 = 9; guarded is never first.
          expect(deletingNames(s.sim)).toEqual([cheap, twoPods].sort());
          expect([guarded, costly].some((n) => deletingNames(s.sim).includes(n))).toBe(false);
        });
      });
    });
  });

  describe('Helper Functions', () => {
    describe('hasNodePoolReplicaOrStatusChanged', () => {
      it('should detect replica changes', () => {
        expect(replicasChanged({ spec: { replicas: 3 } }, { spec: { replicas: 5 } })).toBe(true);
      });
      it('should return false for identical replicas', () => {
        expect(replicasChanged({ spec: { replicas: 3 } }, { spec: { replicas: 3 } })).toBe(false);
      });
    });
  });
});
