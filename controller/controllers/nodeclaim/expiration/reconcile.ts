// nodeclaim.expiration (docs/karpenter/disruption.md §5.1): a NodeClaim older than its spec.expireAfter is deleted
// at once: no budget, no replacement launched first, no do-not-disrupt or PDB check here (the drain still
// honours PDBs and do-not-disrupt pods up to the terminationGracePeriod deadline, if any). Its pods are
// re-planned by the provisioner while the node drains. Before the expiry it waits (requeue at the time).
import { isActive, isMirrorPod, isOwnedByDaemonSet } from '../../../../engine/index.ts';
import { ignoreNotFound } from '../../../operator/kube.ts';
import { done, requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { ControllerContext } from '../../context.ts';
import { STATE_NODES } from '../../reads.ts';

export function newExpiration(ctx: ControllerContext): Controller {
  async function reconcile(name: string): Promise<ReconcileResult> {
    const e = ctx.cluster.nodeClaim(name);
    if (!e || e.info.deletionTimestamp !== undefined || !e.info.nodePoolName) return done;
    const after = e.info.expireAfter;
    if (after === null || e.info.creationTimestamp === undefined) return done;
    const at = e.info.creationTimestamp + after;
    const now = ctx.clock.now();
    if (now < at) return requeueAfter(at - now);
    const node = e.info.providerId ? ctx.cluster.stateNode(e.info.providerId) : undefined;
    const pods = (node?.pods ?? []).filter((p) => isActive(p) && !isOwnedByDaemonSet(p) && !isMirrorPod(p)).length;
    await ctx.kube.delete('NodeClaim', name).catch(ignoreNotFound);
    const tgp = e.info.terminationGracePeriod;
    const labels = {
      reason: 'expired',
      nodepool: e.info.nodePoolName,
      capacity_type: e.info.labels['karpenter.sh/capacity-type'] ?? '',
      termination_mode: tgp === undefined ? 'graceful' : tgp > 0 ? 'eventual' : 'forceful',
    };
    ctx.metrics.nodeClaimsDisrupted.inc(labels);
    ctx.metrics.podsDisruptionInitiated.inc(labels, pods);
    ctx.log.info({ nodeclaim: name, expiredAt: new Date(at).toISOString(), pods }, 'deleting expired nodeclaim');
    return done;
  }

  return {
    name: 'nodeclaim.expiration',
    reads: [...STATE_NODES, 'NodePool'],
    reconcile,
    register(enqueue) {
      for (const c of ctx.cluster.nodeClaims()) enqueue(c.info.name);
      return ctx.cluster.subscribe((c) => {
        if (c.kind === 'NodeClaim' && c.type === 'upsert' && !c.old) enqueue(c.name);
      });
    },
  };
}
