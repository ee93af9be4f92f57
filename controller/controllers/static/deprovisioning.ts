// static.deprovisioning (feature gate StaticCapacity; Karpenter core pkg/controllers/static/deprovisioning,
// main after v1.14.1): a static NodePool with more active NodeClaims than replicas deletes the surplus, the most
// disposable first (engine/disruption/staticscale.ts, on the engine's workers: not launched yet, then empty,
// then cheapest to disrupt, do-not-disrupt last). NodeClaims a disruption command is replacing do not count, so a drift replacement in
// flight is not taken for surplus. Disruption budgets do not apply: the user is scaling down; the drain still
// honours PDBs and the termination grace period.
import type { NodePool } from '../../../engine/index.ts';
import { ignoreNotFound } from '../../operator/kube.ts';
import { done, requeueAfter, type ReconcileResult } from '../../operator/result.ts';
import type { Controller } from '../../operator/runtime.ts';
import type { ControllerContext } from '../context.ts';
import { replicasChanged, staticCounts } from './counts.ts';
import { staticSnapshot } from './snapshot.ts';
import { watchStaticPools } from './watch.ts';

const MINUTE = 60_000;

export function newStaticDeprovisioning(ctx: ControllerContext): Controller {
  async function remove(pool: NodePool, name: string): Promise<void> {
    await ctx.kube.delete('NodeClaim', name).catch(ignoreNotFound);
    // Read it back, so the next pass sees it deleting before the informer does.
    const cur = await ctx.kube.find('NodeClaim', name);
    if (cur) ctx.cluster.applyNodeClaim(cur);
    ctx.log.info({ nodeclaim: name, nodepool: pool.name }, 'deleting nodeclaim');
  }

  async function reconcile(name: string): Promise<ReconcileResult> {
    const pool = ctx.cluster.nodePool(name)?.pool;
    if (!pool || pool.replicas === undefined || pool.deleting) return done;
    const { active } = staticCounts(ctx.cluster, name);
    const surplus = active.length - pool.replicas;
    if (surplus <= 0) return requeueAfter(MINUTE);
    ctx.log.info(
      { nodepool: name, current: active.length, desired: pool.replicas, 'deprovision-count': surplus },
      'deprovisioning nodeclaims to satisfy replica count',
    );
    const unlaunched = active.filter((c) => !c.info.providerId).map((c) => c.info.name);
    const nodes = ctx.cluster.stateNodes().filter((n) => n.nodePoolName === name);
    const victims = await ctx.engine.staticScaleDown(staticSnapshot(ctx, pool, { nodes }), name, unlaunched, surplus);
    for (const victim of victims) await remove(pool, victim);
    return requeueAfter(MINUTE);
  }

  return {
    name: 'static.deprovisioning',
    reads: ['NodePool', 'NodeClaim', 'Node', 'Pod'],
    reconcile,
    register: (enqueue) =>
      watchStaticPools(ctx.cluster, enqueue, {
        poolChanged: replicasChanged,
        // A new static NodeClaim may be one too many (a scale-down racing a scale-up).
        claimChanged: (c) => c.type === 'upsert' && !c.old,
      }),
  };
}
