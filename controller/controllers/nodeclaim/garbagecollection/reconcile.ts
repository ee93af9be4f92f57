// nodeclaim.garbagecollection (docs/karpenter/disruption.md §5.5, docs/karpenter/aws-provider.md §4 step 8), every 2 minutes:
// 1. Instances this controller launched that no NodeClaim owns, 30 s after their launch, are terminated.
//    The cloud provider lists only this cluster's instances (on AWS by the tags every launch carries:
//    eks:eks-cluster-name, karpenter.sh/nodepool, karpenter.k8s.aws/ec2nodeclass). An instance is owned
//    when a NodeClaim records its providerID, as in Karpenter. A launch in flight is safe because the pass
//    runs only when cluster state is synced, which no NodeClaim without providerID allows. An instance
//    launched by a controller that died before recording it is an orphan: the restarted controller
//    launches its NodeClaim again.
// 2. Registered NodeClaims whose instance is gone are deleted, unless their Node is still Ready.
import { isNodeClaimNotFound } from '../../../cloudprovider/types.ts';
import { isTrue } from '../../../operator/conditions.ts';
import { ignoreNotFound } from '../../../operator/kube.ts';
import { requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { ControllerContext } from '../../context.ts';
import { CLAIMS_AND_NODES } from '../../reads.ts';

export const GC_PERIOD_MS = 2 * 60_000;
export const ORPHAN_GRACE_MS = 30_000;

export function newGarbageCollection(ctx: ControllerContext, periodMs = GC_PERIOD_MS): Controller {
  const log = ctx.log;

  async function reconcile(): Promise<ReconcileResult> {
    if (!ctx.cluster.synced()) return requeueAfter(1_000);
    const now = ctx.clock.now();
    const instances = await ctx.cloudProvider.list();
    const live = new Set<string>();
    for (const i of instances) {
      if (i.state === 'shutting-down' || i.state === 'terminated') continue;
      live.add(i.providerID);
      if (ctx.cluster.nodeClaimByProviderID(i.providerID) || now - i.launchTime < ORPHAN_GRACE_MS) continue;
      log.info(
        { providerID: i.providerID, instanceType: i.instanceType, nodeclaim: i.nodeClaimName },
        'terminating an instance no nodeclaim owns',
      );
      await ctx.cloudProvider.delete(i.providerID).catch((err: unknown) => {
        if (!isNodeClaimNotFound(err)) throw err;
      });
    }
    for (const c of ctx.cluster.nodeClaims()) {
      const pid = c.info.providerId;
      if (!pid || c.info.deletionTimestamp !== undefined || !isTrue(c.obj, 'Registered') || live.has(pid)) continue;
      if (ctx.cluster.nodeByProviderID(pid)?.info.ready) continue;
      log.info({ nodeclaim: c.info.name, providerID: pid }, 'deleting a nodeclaim whose instance is gone');
      await ctx.kube.delete('NodeClaim', c.info.name).catch(ignoreNotFound);
      ctx.metrics.nodeClaimsDisrupted.inc({
        reason: 'garbage_collected',
        nodepool: c.info.nodePoolName ?? '',
        capacity_type: c.info.labels['karpenter.sh/capacity-type'] ?? '',
      });
    }
    return requeueAfter(periodMs);
  }

  return {
    name: 'nodeclaim.garbagecollection',
    reads: CLAIMS_AND_NODES,
    concurrency: 1,
    reconcile,
    register(_enqueue, enqueueAfter) {
      enqueueAfter('', 10_000);
      return () => {};
    },
  };
}
