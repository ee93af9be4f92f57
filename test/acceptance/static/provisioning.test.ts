// Karpenter core pkg/controllers/static/provisioning/suite_test.go (main after v1.14.1), case for case where the
// case carries over, against static.provisioning in the simulator (feature gate StaticCapacity).
import { afterEach, describe, expect, it } from 'vitest';
import { newStaticProvisioning, staticShortfall } from '../../../controller/controllers/static/provisioning.ts';
import { replicasOrReadinessChanged } from '../../../controller/controllers/static/counts.ts';
import type { NodePool } from '../../../engine/index.ts';
import { claims, live, MIN, startStatic, staticClaim, staticPool, type Static } from './harness.ts';

let t: Static | undefined;
afterEach(async () => {
  await t?.sim.close();
  t = undefined;
});

const start = async () => (t = await startStatic(newStaticProvisioning));

describe('Static Provisioning', () => {
  describe('Reconcile', () => {
    it('should return early if nodepool root condition is not true', async () => {
      const s = await start();
      await staticPool(s.sim, { replicas: 3 });
      await s.sim.kube.patchStatus('NodePool', 'static', {
        conditions: [
          {
            type: 'Ready',
            status: 'False',
            reason: 'NodeClassNotReady',
            message: 'x',
            lastTransitionTime: '2026-01-01T00:00:00Z',
          },
        ],
      });
      s.sim.operator.cluster.applyNodePool((await s.sim.kube.find('NodePool', 'static'))!);
      expect(await s.reconcile()).toEqual({ kind: 'done' });
      expect(claims(s.sim)).toHaveLength(0);
    });
    it('should return early if nodepool replicas is nil', async () => {
      const s = await start();
      await staticPool(s.sim, {});
      expect(await s.reconcile()).toEqual({ kind: 'done' });
      expect(claims(s.sim)).toHaveLength(0);
    });
    it('should return early if current node count exceeds desired replicas', async () => {
      const s = await start();
      await staticPool(s.sim, { replicas: 2 });
      for (let i = 0; i < 3; i++) await staticClaim(s.sim);
      expect(await s.reconcile()).toEqual({ kind: 'requeueAfter', ms: MIN });
      expect(claims(s.sim)).toHaveLength(3);
    });
    it('should create nodeclaims when current node count is less than desired replicas', async () => {
      const s = await start();
      await staticPool(s.sim, { replicas: 3 });
      expect(await s.reconcile()).toEqual({ kind: 'requeueAfter', ms: MIN });
      expect(claims(s.sim)).toHaveLength(3);
      expect(
        await s.sim.operator.metrics.value('karpenter_nodeclaims_created_total', {
          reason: 'provisioned',
          nodepool: 'static',
          min_values_relaxed: 'false',
        }),
      ).toBe(3);
      // The template NodeClaim is the engine's, built on its workers: one call for the three.
      expect(s.engineCalls).toEqual(['staticClaim']);
    });
    it('should create additional nodeclaims to reach desired replicas', async () => {
      const s = await start();
      await staticPool(s.sim, { replicas: 5 });
      await staticClaim(s.sim);
      await staticClaim(s.sim);
      await s.reconcile();
      expect(claims(s.sim)).toHaveLength(5);
    });
    it('should not create additional nodeclaims', async () => {
      const s = await start();
      await staticPool(s.sim, { replicas: 2 });
      await s.reconcile();
      await s.reconcile();
      expect(claims(s.sim)).toHaveLength(2);
    });
    it('should not create additional nodeclaims when node limits are reached', async () => {
      const s = await start();
      await staticPool(s.sim, { replicas: 5, nodeLimit: 3 });
      await staticClaim(s.sim);
      await staticClaim(s.sim, { deleting: true });
      // Active (1) and deleting (1) count against limits.nodes: one more fits.
      await s.reconcile();
      expect(claims(s.sim)).toHaveLength(3);
      expect(await s.reconcile()).toEqual({ kind: 'requeueAfter', ms: 30_000 });
      expect(claims(s.sim)).toHaveLength(3);
    });
    it('should handle zero replicas', async () => {
      const s = await start();
      await staticPool(s.sim, { replicas: 0 });
      expect(await s.reconcile()).toEqual({ kind: 'requeueAfter', ms: MIN });
      expect(claims(s.sim)).toHaveLength(0);
    });
    it('should respect nodepool template specifications', async () => {
      const s = await start();
      await staticPool(s.sim, {
        replicas: 2,
        labels: { team: 'search' },
        taints: [{ key: 'dedicated', value: 'search', effect: 'NoSchedule' }],
        instanceTypes: ['m5.xlarge'],
      });
      await s.reconcile();
      const made = claims(s.sim);
      expect(made).toHaveLength(2);
      for (const c of made) {
        expect(c.metadata.labels).toMatchObject({ team: 'search', 'karpenter.sh/nodepool': 'static' });
        expect(c.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'NodePool', name: 'static' });
        const spec = c.spec as { taints?: unknown[]; requirements: Array<{ key: string; values: string[] }> };
        expect(spec.taints).toEqual([{ key: 'dedicated', value: 'search', effect: 'NoSchedule' }]);
        expect(spec.requirements.find((r) => r.key === 'node.kubernetes.io/instance-type')?.values).toEqual([
          'm5.xlarge',
        ]);
      }
    });
    it('should handle large replica counts', async () => {
      const s = await start();
      await staticPool(s.sim, { replicas: 60 });
      await s.reconcile();
      expect(new Set(live(s.sim)).size).toBe(60);
    });
  });

  describe('Helper Functions', () => {
    const pool = (replicas: number, nodes?: number) =>
      ({ replicas, limits: nodes === undefined ? {} : { nodes } }) as unknown as NodePool;
    it('counts NodeClaims pending disruption as present for scale-up, and every NodeClaim against limits.nodes', () => {
      expect(staticShortfall(2, 1, 0, pool(3))).toEqual({ waitMs: MIN });
      expect(staticShortfall(1, 0, 0, pool(3))).toEqual({ n: 2 });
      expect(staticShortfall(1, 1, 1, pool(5, 4))).toEqual({ n: 1 });
      expect(staticShortfall(2, 1, 1, pool(5, 4))).toEqual({ waitMs: 30_000, why: 'nodepool node limit reached' });
    });
    it('should detect replica changes and readiness, not other updates', () => {
      const ready = { status: { conditions: [{ type: 'Ready', status: 'True' }] } };
      expect(replicasOrReadinessChanged({ spec: { replicas: 3 } }, { spec: { replicas: 2 } })).toBe(true);
      expect(replicasOrReadinessChanged({ spec: { replicas: 3 } }, { spec: { replicas: 3 } })).toBe(false);
      expect(replicasOrReadinessChanged({ spec: { replicas: 3 }, ...ready }, { spec: { replicas: 3 } })).toBe(true);
      expect(replicasOrReadinessChanged({ spec: { replicas: 3 }, ...ready }, { spec: { replicas: 3 }, ...ready })).toBe(
        false,
      );
    });
  });
});
