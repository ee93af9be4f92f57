// How node.termination cordons and drains a Node (docs/karpenter/disruption.md §5.6): the disrupted taint and the
// load-balancer exclusion label, then one drain pass: pods that would outlive the termination deadline are
// deleted, the others evicted through the Eviction API one tier at a time (drain.ts), PDB refusals
// reported as FailedDraining.
import { goTime, podTarget, targetOf } from '../../../operator/events.ts';
import { ignoreNotFound, isNotFound, isTooManyRequests, KubeError } from '../../../operator/kube.ts';
import type { Pod } from '../../../../engine/index.ts';
import type { NodeEntry } from '../../../state/statenode.ts';
import type { ControllerContext } from '../../context.ts';
import { DISRUPTED_TAINT, EXCLUDE_LB_LABEL } from '../../keys.ts';
import { doNotDisrupt, evictionTier, forceDeletions, waitingPods } from './drain.ts';

type TaintJson = { key: string; value?: string; effect: string };

interface Drainer {
  /** Taints the node karpenter.sh/disrupted:NoSchedule and excludes it from load balancers (once). */
  taint(n: NodeEntry): Promise<void>;
  /** One drain pass; returns how many pods still hold the node. */
  drain(n: NodeEntry, deadline: number | undefined, reason: string): Promise<number>;
}

/** The node's NodeClaim for log lines (Karpenter's node termination logs it with every line). */
function claimOf(ctx: ControllerContext, n: NodeEntry): { nodeclaim?: string } {
  const c = n.info.providerId ? ctx.cluster.nodeClaimByProviderID(n.info.providerId) : undefined;
  return c ? { nodeclaim: c.info.name } : {};
}

async function taint(ctx: ControllerContext, n: NodeEntry): Promise<void> {
  const taints = (n.obj.spec?.['taints'] ?? []) as TaintJson[];
  const has = taints.some((t) => t.key === DISRUPTED_TAINT.key && t.effect === DISRUPTED_TAINT.effect);
  if (has && n.obj.metadata.labels?.[EXCLUDE_LB_LABEL] === 'karpenter') return;
  const next = [...taints.filter((t) => t.key !== DISRUPTED_TAINT.key), { ...DISRUPTED_TAINT }];
  ctx.cluster.applyNode(
    await ctx.kube.patch('Node', n.info.name, {
      metadata: { resourceVersion: n.obj.metadata.resourceVersion, labels: { [EXCLUDE_LB_LABEL]: 'karpenter' } },
      spec: { taints: next },
    }),
  );
  if (!has)
    ctx.log.info(
      {
        ...claimOf(ctx, n),
        'taint.Key': DISRUPTED_TAINT.key,
        'taint.Value': '',
        'taint.Effect': DISRUPTED_TAINT.effect,
      },
      'tainted node',
    );
}

/** Deletes pods the termination deadline leaves no time to evict, with what grace period is left. */
async function deleteForced(
  ctx: ControllerContext,
  forced: readonly Pod[],
  deadline: number | undefined,
  now: number,
): Promise<void> {
  for (const p of forced) {
    const grace = Math.max(1, Math.floor(((deadline ?? now) - now) / 1000));
    await ctx.kube
      .delete('Pod', p.name, { namespace: p.namespace, gracePeriodSeconds: grace, uid: p.uid })
      .catch(ignoreNotFound);
    ctx.metrics.podsDrained.inc({ reason: 'Forceful Termination' });
    ctx.events.publish({
      involved: podTarget(p),
      type: 'Normal',
      reason: 'Disrupted',
      message: `Deleting the pod to accommodate the terminationTime ${goTime(deadline!)} of the node. The pod was granted ${grace} seconds of grace-period of its ${p.terminationGracePeriodSeconds ?? 30} terminationGracePeriodSeconds. This bypasses the PDB of the pod and the do-not-disrupt annotation.`,
    });
  }
}

/** Evicts one pod; a PDB refusal is reported on the node as FailedDraining, anything but gone or conflict throws. */
async function evict(ctx: ControllerContext, n: NodeEntry, p: Pod, reason: string): Promise<void> {
  try {
    await ctx.kube.evict(p.namespace, p.name, p.uid);
    ctx.metrics.evictionRequests.inc({ code: '200' });
    ctx.metrics.podsDrained.inc({ reason });
    ctx.events.publish({
      involved: podTarget(p),
      type: 'Normal',
      reason: 'Evicted',
      message: `Evicted pod: ${reason}`,
    });
  } catch (err) {
    const code = err instanceof KubeError ? err.code : 0;
    ctx.metrics.evictionRequests.inc({ code: String(code) });
    if (isNotFound(err) || code === 409) return;
    if (!isTooManyRequests(err)) throw new Error(`evicting pod ${p.namespace}/${p.name}`, { cause: err });
    const multiple = (err as KubeError).message.includes('multiple');
    ctx.events.publish({
      involved: targetOf(n.obj, 'Node'),
      type: 'Warning',
      reason: 'FailedDraining',
      message: `Failed to drain node, ${multiple ? 'eviction does not support multiple PDBs' : `evicting pod ${p.namespace}/${p.name} violates a PDB`}`,
    });
  }
}

/** One drain pass; returns how many pods still hold the node. */
async function drain(
  ctx: ControllerContext,
  n: NodeEntry,
  deadline: number | undefined,
  reason: string,
): Promise<number> {
  const now = ctx.clock.now();
  const waiting = waitingPods(ctx.cluster.workloads.podsOn(n.info.name), now);
  if (!waiting.length) return 0;
  const forced = forceDeletions(waiting, deadline, now);
  await deleteForced(ctx, forced, deadline, now);
  const rest = waiting.filter((p) => !forced.includes(p));
  for (const p of evictionTier(rest)) if (!doNotDisrupt(p, now)) await evict(ctx, n, p, reason);
  ctx.events.publish({
    involved: targetOf(n.obj, 'Node'),
    type: 'Warning',
    reason: 'FailedDraining',
    message: `Failed to drain node, ${waiting.length} pods are waiting to be evicted`,
  });
  return waiting.length;
}

export function newDrainer(ctx: ControllerContext): Drainer {
  return {
    taint: (n) => taint(ctx, n),
    drain: (n, deadline, reason) => drain(ctx, n, deadline, reason),
  };
}
