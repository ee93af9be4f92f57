// nodeclaim.drift (Karpenter's NodeClaim disruption controller, docs/karpenter/disruption.md §4.1): keeps the
// Drifted condition of each launched NodeClaim equal to the engine's verdict, in Karpenter's order: the
// NodePool template hash changed (NodePoolDrifted), the NodeClaim's labels no longer meet the pool's
// requirements (RequirementsDrifted), its instance type or offering is gone (InstanceTypeNotFound; checked
// only for NodeClaims older than an hour, a success cached for 30 minutes), or the cloud provider's
// isDrifted (node class drift: AMI, subnets, security groups, ...). Runs on NodeClaim changes, NodePool spec or
// annotation changes (not its status writes), EC2NodeClass changes in what drift reads (spec, annotations, the
// resolved AMIs, subnets, security groups and reservations; not its conditions), and every 5 minutes. The disruption loop replaces Drifted nodes within budgets.
import {
  driftReason,
  INSTANCE_TYPE_CHECK_AGE_MS,
  type InstanceType,
  type NodePool,
  type Snapshot,
  type StateNode,
} from '../../../../engine/index.ts';
import { conditionsOf, findCondition, isTrue, withCondition, withoutCondition } from '../../../operator/conditions.ts';
import { done, requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { NodeClaimEntry } from '../../../state/statenode.ts';
import type { ControllerContext } from '../../context.ts';
import { STATE_NODES } from '../../reads.ts';
import { nodeClassDriftInputsChanged, nodePoolTemplateChanged } from '../poolchange.ts';

const DRIFT_RECHECK_MS = 5 * 60_000;
const INSTANCE_TYPE_CHECK_CACHE_MS = 30 * 60_000;

/** The snapshot the engine's driftReason reads: the pool, its instance types (when checked) and the one node. */
function oneNodeSnapshot(
  ctx: ControllerContext,
  now: number,
  pool: NodePool,
  node: StateNode,
  types: readonly InstanceType[],
): Snapshot {
  return {
    now,
    nodePools: [pool],
    nodeClasses: [],
    instanceTypes: new Map([[pool.name, types]]),
    nodes: [node],
    pendingPods: [],
    daemonSets: [],
    pdbs: [],
    options: ctx.engineOptions,
  };
}

/** Sets the NodeClaim's Drifted condition to `why` (removes it when undefined), and says so in the log. */
async function writeDrifted(ctx: ControllerContext, e: NodeClaimEntry, why: string | undefined): Promise<void> {
  const name = e.info.name;
  const now = ctx.clock.now();
  const conds =
    why === undefined
      ? withoutCondition(conditionsOf(e.obj), 'Drifted')
      : withCondition(conditionsOf(e.obj), 'Drifted', 'True', now, { reason: why, message: why });
  const rv = e.obj.metadata.resourceVersion;
  ctx.cluster.applyNodeClaim(
    await ctx.kube.patchStatus('NodeClaim', name, { conditions: conds }, rv ? { resourceVersion: rv } : {}),
  );
  ctx.log.info({ nodeclaim: name, drifted: why ?? false }, why ? 'nodeclaim drifted' : 'nodeclaim no longer drifted');
}

export function newDrift(ctx: ControllerContext): Controller {
  /** NodeClaim name -> when its instance type was last found to exist. */
  const typeCheckedAt = new Map<string, number>();

  async function reason(e: NodeClaimEntry, pool: NodePool): Promise<string | undefined> {
    const now = ctx.clock.now();
    const pid = e.info.providerId;
    const joined = pid ? ctx.cluster.stateNode(pid) : undefined;
    if (!joined || !pid) return undefined;
    // Drift compares the NodeClaim itself: its labels and hash annotations (the Node's copy may lag).
    const node: StateNode = { ...joined, labels: e.info.labels, annotations: e.info.annotations };
    const old = now - (e.info.creationTimestamp ?? now) > INSTANCE_TYPE_CHECK_AGE_MS;
    const checkType = old && now - (typeCheckedAt.get(e.info.name) ?? -Infinity) >= INSTANCE_TYPE_CHECK_CACHE_MS;
    let types: readonly InstanceType[] = [];
    if (checkType) types = await ctx.cloudProvider.getInstanceTypes(pool);
    const s = oneNodeSnapshot(ctx, now, pool, node, types);
    const found = driftReason(s, node, { checkInstanceType: checkType });
    if (checkType && found !== 'InstanceTypeNotFound') typeCheckedAt.set(e.info.name, now);
    if (found) return found;
    return ctx.cloudProvider.isDrifted({
      nodeClaimName: e.info.name,
      providerID: pid,
      nodeClassName: e.info.nodeClassRef.name,
      ...(e.info.imageId ? { imageID: e.info.imageId } : {}),
      labels: e.info.labels,
      annotations: e.info.annotations,
    });
  }

  async function reconcile(name: string): Promise<ReconcileResult> {
    const e = ctx.cluster.nodeClaim(name);
    if (!e || e.info.deletionTimestamp !== undefined || !e.info.nodePoolName) {
      typeCheckedAt.delete(name);
      return done;
    }
    const pool = ctx.cluster.nodePool(e.info.nodePoolName)?.pool;
    if (!pool) return done;
    const why = isTrue(e.obj, 'Launched') ? await reason(e, pool) : undefined;
    const cur = findCondition(e.obj, 'Drifted');
    const same = why === undefined ? cur === undefined : cur?.status === 'True' && cur.reason === why;
    if (!same) await writeDrifted(ctx, e, why);
    return requeueAfter(DRIFT_RECHECK_MS);
  }

  return {
    name: 'nodeclaim.drift',
    reads: [...STATE_NODES, 'NodePool', 'EC2NodeClass'],
    reconcile,
    register(enqueue) {
      for (const c of ctx.cluster.nodeClaims()) enqueue(c.info.name);
      return ctx.cluster.subscribe((c) => {
        if (c.kind === 'NodeClaim' && c.type === 'upsert') enqueue(c.name);
        if (nodePoolTemplateChanged(c))
          for (const nc of ctx.cluster.nodeClaims()) if (nc.info.nodePoolName === c.name) enqueue(nc.info.name);
        if (nodeClassDriftInputsChanged(c))
          for (const nc of ctx.cluster.nodeClaims()) if (nc.info.nodeClassRef.name === c.name) enqueue(nc.info.name);
      });
    },
  };
}
