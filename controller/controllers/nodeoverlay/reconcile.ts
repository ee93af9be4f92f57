// nodeoverlay (feature gate NodeOverlay; Karpenter core pkg/controllers/nodeoverlay/controller.go, main after
// v1.14.1): one pass evaluates every NodeOverlay against every NodePool's instance types (engine/catalog/
// overlay.ts) and
//
// 1. lists each NodePool's instance types from the provider without overlays (a pool whose listing fails is
//    left out of this evaluation and keeps getting UnevaluatedNodePoolError; the pass is retried);
// 2. writes each overlay's ValidationSucceeded (True; False with RuntimeValidation or Conflict, "conflict with
//    another overlay") and Ready conditions, a NodeOverlay that does not parse reported the same way;
// 3. swaps the result into the store the other controllers' cloud provider reads, and marks the cluster
//    unconsolidated (prices changed under consolidation's feet);
// 4. runs again on any NodeOverlay change, NodePool or EC2NodeClass change, and every 6 hours.
import { evaluateOverlays, type NodeOverlay, type OverlayOutcome, type PoolTypes } from '../../../engine/index.ts';
import type { CloudProvider } from '../../cloudprovider/types.ts';
import { conditionsOf, isTrue, sameConditions, withCondition } from '../../operator/conditions.ts';
import { ignoreNotFound, type KubeObject } from '../../operator/kube.ts';
import { requeueAfter, type ReconcileResult } from '../../operator/result.ts';
import { errText, type Controller } from '../../operator/runtime.ts';
import type { ControllerContext } from '../context.ts';
import type { OverlayStore } from './store.ts';

const KEY = 'nodeoverlays';
const ready = (o: KubeObject | undefined): boolean => isTrue(o, 'Ready');
const SIX_HOURS = 6 * 3_600_000;

/** The conditions an overlay's outcome gives it (Karpenter's ValidationSucceeded, rolled up into Ready). */
function overlayConditions(
  obj: KubeObject,
  outcome: OverlayOutcome | { status: 'Invalid'; message: string },
  now: number,
): ReturnType<typeof conditionsOf> {
  const g = obj.metadata.generation !== undefined ? { generation: obj.metadata.generation } : {};
  const ok = outcome.status === 'Applied';
  const reason = outcome.status === 'Invalid' ? 'RuntimeValidation' : outcome.status;
  const message = 'message' in outcome ? outcome.message : '';
  let conds = conditionsOf(obj);
  conds = ok
    ? withCondition(conds, 'ValidationSucceeded', 'True', now, { reason: 'ValidationSucceeded', ...g })
    : withCondition(conds, 'ValidationSucceeded', 'False', now, { reason, message, ...g });
  return withCondition(
    conds,
    'Ready',
    ok ? 'True' : 'False',
    now,
    ok ? { reason: 'Ready', ...g } : { reason: 'UnhealthyDependents', message: 'ValidationSucceeded is False', ...g },
  );
}

export function newNodeOverlay(ctx: ControllerContext, store: OverlayStore, base: CloudProvider): Controller {
  async function poolTypes(): Promise<{ pools: PoolTypes[]; failed: string[] }> {
    const pools: PoolTypes[] = [];
    const failed: string[] = [];
    for (const e of ctx.cluster.nodePools()) {
      if (!e.pool) continue;
      try {
        pools.push({ pool: e.pool, instanceTypes: await base.getInstanceTypes(e.pool) });
      } catch (err) {
        failed.push(`listing instance types for nodepool ${e.pool.name}: ${errText(err)}`);
      }
    }
    return { pools, failed };
  }

  async function writeStatus(
    name: string,
    outcome: OverlayOutcome | { status: 'Invalid'; message: string },
  ): Promise<void> {
    const entry = ctx.cluster.nodeOverlay(name);
    if (!entry) return;
    const conds = overlayConditions(entry.obj, outcome, ctx.clock.now());
    if (sameConditions(conditionsOf(entry.obj), conds)) return;
    const updated = await ctx.kube.patchStatus('NodeOverlay', name, { conditions: conds }).catch(ignoreNotFound);
    if (updated) ctx.cluster.applyNodeOverlay(updated);
  }

  async function reconcile(): Promise<ReconcileResult> {
    const { pools, failed } = await poolTypes();
    const entries = ctx.cluster.nodeOverlays();
    const overlays = entries.flatMap((e) => (e.overlay ? [e.overlay] : [])) as NodeOverlay[];
    const { updates, outcomes } = evaluateOverlays(pools, overlays);
    for (const o of outcomes) await writeStatus(o.name, o);
    for (const e of entries)
      if (!e.overlay) await writeStatus(e.obj.metadata.name!, { status: 'Invalid', message: e.errors.join('; ') });
    store.swap(
      updates,
      pools.map((p) => p.pool.name),
    );
    ctx.cluster.markUnconsolidated();
    for (const o of outcomes)
      if (o.status !== 'Applied')
        ctx.log.info({ nodeoverlay: o.name, reason: o.status, message: o.message }, 'nodeoverlay not applied');
    if (failed.length) throw new Error(failed.join('; '));
    return requeueAfter(SIX_HOURS);
  }

  return {
    name: 'nodeoverlay',
    reads: ['NodeOverlay', 'NodePool', 'EC2NodeClass'],
    reconcile,
    register(enqueue) {
      enqueue(KEY);
      return ctx.cluster.subscribe((c) => {
        const spec = (o: KubeObject | undefined) => JSON.stringify(o?.spec ?? null);
        if (c.kind === 'NodeOverlay' && (c.type === 'delete' || spec(c.obj) !== spec(c.old))) enqueue(KEY);
        // Spec changes (Karpenter filters on generation), and a pool or class turning Ready (its types listable).
        if (
          (c.kind === 'NodePool' || c.kind === 'EC2NodeClass') &&
          (c.type === 'delete' || spec(c.obj) !== spec(c.old) || ready(c.obj) !== ready(c.old))
        )
          enqueue(KEY);
      });
    },
  };
}
