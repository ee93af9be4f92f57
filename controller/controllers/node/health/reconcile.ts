// node.health: node repair (feature gate NodeRepair; Karpenter core pkg/controllers/node/health and
// designs/node-repair.md, main after v1.14.1). The cloud provider names the node conditions it calls
// unhealthy and how long each is tolerated; a managed node past its toleration is replaced by force.
//
// 1. Not a node with a NodeClaim (by providerID) -> done.
// 2. No condition matches a repair policy -> done.
// 3. Inside the toleration -> requeue when it runs out (the condition closest to its end wins).
// 4. More than 20 % (rounded up) of the NodePool's nodes match a policy, or of all nodes for a NodeClaim
//    without a NodePool -> NodeRepairBlocked events, look again in 5 minutes (a zonal outage must not take
//    the whole pool down).
// 5. Write karpenter.sh/nodeclaim-termination-timestamp = now (unless an earlier deadline has passed), so
//    termination drains without waiting for PDBs or do-not-disrupt; delete the NodeClaim (budgets and the
//    node's do-not-disrupt do not apply); count it in the disruption and unhealthy metrics.
import { isActive, isMirrorPod, isOwnedByDaemonSet, type NodeInfo } from '../../../../engine/index.ts';
import { toKubeTime } from '../../../operator/clock.ts';
import { targetOf, type Event } from '../../../operator/events.ts';
import { ignoreNotFound } from '../../../operator/kube.ts';
import { done, requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { Change } from '../../../state/cluster.ts';
import type { NodeClaimEntry, NodeEntry } from '../../../state/statenode.ts';
import type { ControllerContext } from '../../context.ts';
import { NODEPOOL_LABEL, TERMINATION_TIMESTAMP_ANNOTATION } from '../../keys.ts';
import {
  ALLOWED_UNHEALTHY_PERCENT,
  allowedUnhealthy,
  BLOCKED_RETRY_MS,
  matchesAnyPolicy,
  snakeCase,
  unhealthyCondition,
  type Unhealthy,
} from './policy.ts';
import { STATE_NODES } from '../../reads.ts';

/** Karpenter deduplicates NodeRepairBlocked for 15 minutes. */
const BLOCKED_DEDUPE_MS = 15 * 60_000;

/** A Node update worth a look: it is new, or a condition appeared, went, or changed status or transition time. */
function conditionsChanged(c: Change): boolean {
  if (c.kind !== 'Node' || c.type !== 'upsert') return false;
  if (!c.old) return true;
  type Cond = { type?: string; status?: string; lastTransitionTime?: string };
  const conds = (o: typeof c.obj): Cond[] => (o.status?.['conditions'] ?? []) as Cond[];
  const before = conds(c.old);
  const after = conds(c.obj);
  if (before.length !== after.length) return true;
  return before.some((b) => {
    const a = after.find((x) => x.type === b.type);
    return !a || a.status !== b.status || a.lastTransitionTime !== b.lastTransitionTime;
  });
}

/** NodeRepairBlocked on the Node, the NodeClaim and its NodePool; look again later. */
function blocked(
  ctx: ControllerContext,
  node: NodeEntry,
  claim: NodeClaimEntry,
  poolName: string | undefined,
): ReconcileResult {
  const message =
    poolName === undefined
      ? `more then ${ALLOWED_UNHEALTHY_PERCENT}% nodes are unhealthy in the cluster`
      : `more than ${ALLOWED_UNHEALTHY_PERCENT}% nodes are unhealthy in the nodepool`;
  const event = (involved: Event['involved']): Event => ({
    involved,
    type: 'Warning',
    reason: 'NodeRepairBlocked',
    message,
    dedupeValues: [involved.uid ?? `${involved.kind}/${involved.name}`],
    dedupeTimeoutMs: BLOCKED_DEDUPE_MS,
  });
  const pool = poolName === undefined ? undefined : ctx.cluster.nodePool(poolName);
  ctx.events.publish(
    event(targetOf(node.obj, 'Node')),
    event(targetOf(claim.obj, 'NodeClaim')),
    ...(pool ? [event(targetOf(pool.obj, 'NodePool'))] : []),
  );
  ctx.log.info(
    { node: node.info.name, nodeclaim: claim.info.name, nodepool: poolName },
    `node repair blocked: ${message}`,
  );
  return requeueAfter(BLOCKED_RETRY_MS);
}

/** Sets the termination deadline to now, unless a deadline is set that has already passed. */
async function forceTermination(ctx: ControllerContext, claim: NodeClaimEntry): Promise<void> {
  const now = ctx.clock.now();
  const current = Date.parse(claim.info.annotations[TERMINATION_TIMESTAMP_ANNOTATION] ?? '');
  if (current < now) return;
  const at = toKubeTime(now);
  ctx.cluster.applyNodeClaim(
    await ctx.kube.patch('NodeClaim', claim.info.name, {
      metadata: { annotations: { [TERMINATION_TIMESTAMP_ANNOTATION]: at } },
    }),
  );
  ctx.log.info({ nodeclaim: claim.info.name, [TERMINATION_TIMESTAMP_ANNOTATION]: at }, 'annotated nodeclaim');
}

/** Counts a repair in the disruption and unhealthy metrics; returns how many of the node's pods it disrupts. */
function countRepair(ctx: ControllerContext, node: NodeEntry, claim: NodeClaimEntry, unhealthy: Unhealthy): number {
  const pods = ctx.cluster.workloads
    .podsOn(node.info.name)
    .filter((p) => isActive(p) && !isOwnedByDaemonSet(p) && !isMirrorPod(p)).length;
  const tgp = claim.info.terminationGracePeriod;
  const nodepool = node.info.labels[NODEPOOL_LABEL] ?? '';
  const capacityType = node.info.labels['karpenter.sh/capacity-type'] ?? '';
  const labels = {
    reason: 'unhealthy',
    nodepool,
    capacity_type: capacityType,
    consolidation_policy: '',
    termination_mode: tgp === undefined ? 'graceful' : tgp > 0 ? 'eventual' : 'forceful',
  };
  ctx.metrics.nodeClaimsDisrupted.inc(labels);
  ctx.metrics.podsDisruptionInitiated.inc(labels, pods);
  ctx.metrics.nodeClaimsUnhealthyDisrupted.inc({
    condition: snakeCase(unhealthy.condition.type),
    nodepool,
    capacity_type: capacityType,
    image_id: claim.info.imageId ?? '',
  });
  return pods;
}

export function newNodeHealth(ctx: ControllerContext): Controller {
  const policies = ctx.cloudProvider.repairPolicies();

  /** Whether at most the allowed share of these nodes is unhealthy. */
  function healthyEnough(nodes: readonly NodeInfo[]): boolean {
    const unhealthy = nodes.filter((n) => matchesAnyPolicy(policies, n.conditions)).length;
    return unhealthy <= allowedUnhealthy(nodes.length);
  }

  async function repair(node: NodeEntry, claim: NodeClaimEntry, unhealthy: Unhealthy): Promise<void> {
    await forceTermination(ctx, claim);
    if (claim.info.deletionTimestamp !== undefined) return;
    await ctx.kube.delete('NodeClaim', claim.info.name).catch(ignoreNotFound);
    const pods = countRepair(ctx, node, claim, unhealthy);
    ctx.log.info(
      {
        node: node.info.name,
        nodeclaim: claim.info.name,
        condition: unhealthy.condition.type,
        status: unhealthy.condition.status,
        pods,
      },
      'deleting unhealthy node',
    );
  }

  async function reconcile(name: string): Promise<ReconcileResult> {
    const node = ctx.cluster.node(name);
    const claim = node?.info.providerId ? ctx.cluster.nodeClaimByProviderID(node.info.providerId) : undefined;
    if (!node || !claim) return done;
    const unhealthy = unhealthyCondition(policies, node.info.conditions);
    if (!unhealthy) return done;
    const now = ctx.clock.now();
    if (now < unhealthy.repairAt) return requeueAfter(unhealthy.repairAt - now);
    const poolName = claim.info.labels[NODEPOOL_LABEL];
    const peers = ctx.cluster
      .allNodes()
      .map((n) => n.info)
      .filter((n) => poolName === undefined || n.labels[NODEPOOL_LABEL] === poolName);
    if (!healthyEnough(peers)) return blocked(ctx, node, claim, poolName);
    await repair(node, claim, unhealthy);
    return done;
  }

  return {
    name: 'node.health',
    reads: [...STATE_NODES, 'NodePool'],
    reconcile,
    register(enqueue) {
      for (const n of ctx.cluster.allNodes()) enqueue(n.info.name);
      return ctx.cluster.subscribe((c) => {
        if (conditionsChanged(c)) enqueue(c.name);
      });
    },
  };
}
