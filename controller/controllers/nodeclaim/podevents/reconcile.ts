// nodeclaim.podevents (docs/karpenter/disruption.md §5.2): stamps status.lastPodEventTime on a NodeClaim when a
// non-DaemonSet pod binds to its node, finishes, starts terminating or goes away; consolidateAfter counts
// from that time. Writes within 10 s of the last one are skipped, as Karpenter dedupes them.
import { toKubeTime } from '../../../operator/clock.ts';
import type { KubeObject } from '../../../operator/kube.ts';
import { done, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { Change } from '../../../state/cluster.ts';
import type { ControllerContext } from '../../context.ts';
import { STATE_NODES } from '../../reads.ts';

const POD_EVENT_DEDUPE_MS = 10_000;

const nodeName = (o: KubeObject | undefined): string | undefined =>
  (o?.spec as { nodeName?: string } | undefined)?.nodeName || undefined;
const phase = (o: KubeObject | undefined): string | undefined => (o?.status as { phase?: string } | undefined)?.phase;
const terminal = (o: KubeObject | undefined): boolean => phase(o) === 'Succeeded' || phase(o) === 'Failed';

/** The node a pod change counts as a pod event for, if any. */
export function podEventNode(c: Change): string | undefined {
  if (c.kind !== 'Pod') return undefined;
  if (c.obj.metadata.ownerReferences?.some((o) => o.kind === 'DaemonSet' && o.controller)) return undefined;
  const node = nodeName(c.obj);
  if (!node) return undefined;
  if (c.type === 'delete') return node;
  const bound = nodeName(c.old) !== node;
  const finished = terminal(c.obj) && !terminal(c.old);
  const terminating = Boolean(c.obj.metadata.deletionTimestamp) && !c.old?.metadata.deletionTimestamp;
  return bound || finished || terminating ? node : undefined;
}

export function newPodEvents(ctx: ControllerContext): Controller {
  const latest = new Map<string, number>();

  async function reconcile(claimName: string): Promise<ReconcileResult> {
    const at = latest.get(claimName);
    const claim = ctx.cluster.nodeClaim(claimName);
    if (at === undefined || !claim || claim.info.deletionTimestamp !== undefined) {
      latest.delete(claimName);
      return done;
    }
    const prior = claim.info.lastPodEventTime;
    if (prior !== undefined && at - prior < POD_EVENT_DEDUPE_MS) {
      latest.delete(claimName);
      return done;
    }
    ctx.cluster.applyNodeClaim(
      await ctx.kube.patchStatus('NodeClaim', claimName, { lastPodEventTime: toKubeTime(at) }),
    );
    if (latest.get(claimName) === at) latest.delete(claimName);
    return done;
  }

  return {
    name: 'nodeclaim.podevents',
    reads: STATE_NODES,
    reconcile,
    register(enqueue) {
      return ctx.cluster.subscribe((c) => {
        const node = podEventNode(c);
        const pid = node ? ctx.cluster.node(node)?.info.providerId : undefined;
        const claim = pid ? ctx.cluster.nodeClaimByProviderID(pid) : undefined;
        if (!claim) return;
        latest.set(claim.info.name, ctx.clock.now());
        enqueue(claim.info.name);
      });
    },
  };
}
