// static.provisioning (feature gate StaticCapacity; Karpenter core pkg/controllers/static/provisioning, main
// after v1.14.1): a static NodePool (spec.replicas) keeps that many NodeClaims whatever the pods, each built from
// the pool's template alone (every compatible instance type with an available offering, cheapest first).
//
// 1. Not a Ready, static, live NodePool -> done.
// 2. Cluster state never synced yet -> again in 1 s (a half-listed view would over-provision; once it has
//    synced, a NodeClaim waiting for its launch is counted, so there is no need to wait again).
// 3. Active + pending disruption >= replicas -> look again in a minute (scale-down is static.deprovisioning's).
// 4. Room under limits.nodes (active, pending disruption and deleting NodeClaims all count against it): none
//    -> "nodepool node limit reached", again in 30 s.
// 5. Create the missing NodeClaims (written straight into cluster state, so the next pass counts them), all
//    from one template NodeClaim the engine builds on its workers.
import { NODES, type NodePool } from '../../../engine/index.ts';
import { done, requeueAfter, type ReconcileResult } from '../../operator/result.ts';
import type { Controller } from '../../operator/runtime.ts';
import { poolInstanceTypes } from '../../state/snapshot.ts';
import type { ControllerContext } from '../context.ts';
import { nodeClaimFor } from '../provisioning/nodeclaim.ts';
import { replicasOrReadinessChanged, staticCounts } from './counts.ts';
import { staticSnapshot } from './snapshot.ts';
import { watchStaticPools } from './watch.ts';

const MINUTE = 60_000;

/** How many NodeClaims a static pool should create now, or how long to wait and why. */
export function staticShortfall(
  active: number,
  pendingDisruption: number,
  deleting: number,
  pool: NodePool,
): { n: number } | { waitMs: number; why?: string } {
  const replicas = pool.replicas ?? 0;
  if (active + pendingDisruption >= replicas) return { waitMs: MINUTE };
  const limit = pool.limits[NODES] ?? Infinity;
  const n = Math.min(replicas - active, limit - (active + pendingDisruption + deleting));
  if (n <= 0) return { waitMs: 30_000, why: 'nodepool node limit reached' };
  return { n };
}

export function newStaticProvisioning(ctx: ControllerContext): Controller {
  let hasSynced = false;

  async function create(pool: NodePool, n: number): Promise<void> {
    const entry = ctx.cluster.nodePool(pool.name)!;
    const instanceTypes = await poolInstanceTypes(ctx, pool);
    const plan = await ctx.engine.staticClaim(staticSnapshot(ctx, pool, { instanceTypes }), pool.name);
    if (!plan) throw new Error(`nodepool ${pool.name}: no instance type its template allows has an available offering`);
    for (let i = 0; i < n; i++) {
      const created = await ctx.kube.create('NodeClaim', nodeClaimFor(plan, pool, entry.obj));
      ctx.cluster.applyNodeClaim(created);
      ctx.metrics.nodeClaimsCreated.inc({ reason: 'provisioned', nodepool: pool.name, min_values_relaxed: 'false' });
      ctx.log.info({ nodeclaim: created.metadata.name, nodepool: pool.name }, 'created nodeclaim');
    }
  }

  async function reconcile(name: string): Promise<ReconcileResult> {
    const pool = ctx.cluster.nodePool(name)?.pool;
    if (!pool || pool.replicas === undefined || !pool.ready || pool.deleting) return done;
    if (!hasSynced && !(hasSynced = ctx.cluster.synced())) return requeueAfter(1_000);
    const counts = staticCounts(ctx.cluster, name);
    const w = staticShortfall(counts.active.length, counts.pendingDisruption, counts.deleting, pool);
    if ('waitMs' in w) {
      if (w.why) ctx.log.info({ nodepool: name, limit: pool.limits[NODES] }, w.why);
      return requeueAfter(w.waitMs);
    }
    ctx.log.info(
      { nodepool: name, current: counts.active.length, desired: pool.replicas, 'provision-count': w.n },
      'provisioning nodeclaims to satisfy replica count',
    );
    await create(pool, w.n);
    return requeueAfter(MINUTE);
  }

  return {
    name: 'static.provisioning',
    reads: ['NodePool', 'NodeClaim', 'EC2NodeClass'],
    reconcile,
    register: (enqueue) =>
      watchStaticPools(ctx.cluster, enqueue, {
        poolChanged: replicasOrReadinessChanged,
        // A static NodeClaim that starts deleting or is gone may leave the pool short.
        claimChanged: (c) =>
          c.type === 'delete' || Boolean(c.obj.metadata.deletionTimestamp && !c.old?.metadata.deletionTimestamp),
      }),
  };
}
