// nodeclaim.consolidatable (docs/karpenter/disruption.md §5.2): Consolidatable=True once the NodeClaim is
// initialized and consolidateAfter has passed since its last pod event (or since initialization);
// cleared while the wait runs, when consolidateAfter is Never, or before initialization.
import {
  conditionsOf,
  findCondition,
  transitionTime,
  withCondition,
  withoutCondition,
} from '../../../operator/conditions.ts';
import { done, requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { ControllerContext } from '../../context.ts';
import { nodePoolTemplateChanged } from '../poolchange.ts';

export function newConsolidatable(ctx: ControllerContext): Controller {
  async function reconcile(name: string): Promise<ReconcileResult> {
    const claim = ctx.cluster.nodeClaim(name);
    if (!claim || claim.info.deletionTimestamp !== undefined) return done;
    const pool = claim.info.nodePoolName ? ctx.cluster.nodePool(claim.info.nodePoolName)?.pool : undefined;
    if (!pool || pool.replicas !== undefined) return done;
    const now = ctx.clock.now();
    const after = pool.disruption.consolidateAfter;
    const initialized = findCondition(claim.obj, 'Initialized');
    const has = findCondition(claim.obj, 'Consolidatable')?.status === 'True';
    let want = false;
    let wait: number | undefined;
    if (after !== null && initialized?.status === 'True') {
      const since = claim.info.lastPodEventTime ?? transitionTime(initialized) ?? now;
      if (now - since >= after) want = true;
      else wait = since + after - now;
    }
    if (want !== has) {
      const conds = want
        ? withCondition(conditionsOf(claim.obj), 'Consolidatable', 'True', now)
        : withoutCondition(conditionsOf(claim.obj), 'Consolidatable');
      const rv = claim.obj.metadata.resourceVersion;
      ctx.cluster.applyNodeClaim(
        await ctx.kube.patchStatus('NodeClaim', name, { conditions: conds }, rv ? { resourceVersion: rv } : {}),
      );
    }
    return wait !== undefined ? requeueAfter(wait) : done;
  }

  return {
    name: 'nodeclaim.consolidatable',
    reads: ['NodeClaim', 'NodePool'],
    reconcile,
    register(enqueue) {
      for (const c of ctx.cluster.nodeClaims()) enqueue(c.info.name);
      return ctx.cluster.subscribe((c) => {
        if (c.kind === 'NodeClaim' && c.type === 'upsert') enqueue(c.name);
        if (nodePoolTemplateChanged(c))
          for (const nc of ctx.cluster.nodeClaims()) if (nc.info.nodePoolName === c.name) enqueue(nc.info.name);
      });
    },
  };
}
