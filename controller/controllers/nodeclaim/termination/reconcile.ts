// nodeclaim.termination: the NodeClaim finalizer (docs/karpenter/disruption.md §5.3, §5.6).
// 1. Write the termination deadline annotation when the NodeClaim has a terminationGracePeriod.
// 2. Delete the Node(s) with its providerID and wait for them to go (the node finalizer drains them).
// 3. Delete the instance the NodeClaim records; wait (5 s polls) until the cloud says it is gone. One the
//    cloud provider says is not this cluster's is not terminated: an InstanceNotOwned warning, and on.
// 4. Remove the finalizer.
import { isInstanceNotOwned, isNodeClaimNotFound } from '../../../cloudprovider/types.ts';
import { toKubeTime } from '../../../operator/clock.ts';
import { withCondition } from '../../../operator/conditions.ts';
import { conditionsOf } from '../../../operator/conditions.ts';
import { targetOf } from '../../../operator/events.ts';
import { ignoreNotFound } from '../../../operator/kube.ts';
import { done, requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { NodeClaimEntry } from '../../../state/statenode.ts';
import type { ControllerContext } from '../../context.ts';
import { TERMINATION_FINALIZER, TERMINATION_TIMESTAMP_ANNOTATION } from '../../keys.ts';
import { CLAIMS_AND_NODES } from '../../reads.ts';

const INSTANCE_POLL_MS = 5_000;

export function newNodeClaimTermination(ctx: ControllerContext): Controller {
  const terminator = new NodeClaimTerminator(ctx);
  return {
    name: 'nodeclaim.termination',
    reads: CLAIMS_AND_NODES,
    reconcile: (name) => terminator.reconcile(name),
    register(enqueue) {
      for (const c of ctx.cluster.nodeClaims()) if (c.info.deletionTimestamp !== undefined) enqueue(c.info.name);
      return ctx.cluster.subscribe((c) => {
        if (c.kind === 'NodeClaim' && c.type === 'upsert' && c.obj.metadata.deletionTimestamp) enqueue(c.name);
        if (c.kind === 'Node' && c.type === 'delete') {
          const pid = (c.obj.spec as { providerID?: string } | undefined)?.providerID;
          const claim = pid ? ctx.cluster.nodeClaimByProviderID(pid) : undefined;
          if (claim?.info.deletionTimestamp !== undefined) enqueue(claim.info.name);
        }
      });
    },
  };
}

/** The finalizer's steps for each terminating NodeClaim, and since when each one's instance has been terminating. */
class NodeClaimTerminator {
  private readonly terminatingSince = new Map<string, number>();

  constructor(private readonly ctx: ControllerContext) {}

  async reconcile(name: string): Promise<ReconcileResult> {
    const ctx = this.ctx;
    const e = ctx.cluster.nodeClaim(name);
    if (
      !e ||
      e.info.deletionTimestamp === undefined ||
      !(e.obj.metadata.finalizers ?? []).includes(TERMINATION_FINALIZER)
    ) {
      this.terminatingSince.delete(name);
      return done;
    }
    await writeDeadline(ctx, e);
    const pid = e.info.providerId;
    const node = pid ? ctx.cluster.nodeByProviderID(pid) : undefined;
    if (node) {
      if (node.info.deletionTimestamp === undefined)
        await ctx.kube.delete('Node', node.info.name).catch(ignoreNotFound);
      return requeueAfter(INSTANCE_POLL_MS);
    }
    const current = ctx.cluster.nodeClaim(name) ?? e;
    if (!(await this.instanceGone(current))) return requeueAfter(INSTANCE_POLL_MS);
    await removeFinalizer(ctx, current);
    this.terminatingSince.delete(name);
    recordTerminated(ctx, current);
    return done;
  }

  /** true once the instance is gone. */
  private async instanceGone(e: NodeClaimEntry): Promise<boolean> {
    const ctx = this.ctx;
    const pid = e.info.providerId;
    if (!pid) return true;
    const name = e.info.name;
    if (!this.terminatingSince.has(name)) {
      try {
        await ctx.cloudProvider.delete(pid);
      } catch (err) {
        if (isNodeClaimNotFound(err)) return true;
        if (isInstanceNotOwned(err)) return notOwned(ctx, e, err.message);
        throw new Error(`terminating instance ${pid} of nodeclaim ${name}`, { cause: err });
      }
      this.terminatingSince.set(name, ctx.clock.now());
      await markInstanceTerminating(ctx, e);
    }
    try {
      await ctx.cloudProvider.get(pid);
      return false;
    } catch (err) {
      if (isNodeClaimNotFound(err)) {
        ctx.metrics.instanceTerminationDuration.observe(
          { nodepool: e.info.nodePoolName ?? '' },
          (ctx.clock.now() - this.terminatingSince.get(name)!) / 1000,
        );
        return true;
      }
      throw err;
    }
  }
}

/** The termination deadline annotation (deletion time + terminationGracePeriod), once, with its warning. */
async function writeDeadline(ctx: ControllerContext, e: NodeClaimEntry): Promise<void> {
  const tgp = e.info.terminationGracePeriod;
  if (
    tgp === undefined ||
    e.info.annotations[TERMINATION_TIMESTAMP_ANNOTATION] ||
    e.info.deletionTimestamp === undefined
  )
    return;
  const at = toKubeTime(e.info.deletionTimestamp + tgp);
  ctx.cluster.applyNodeClaim(
    await ctx.kube.patch('NodeClaim', e.info.name, {
      metadata: { annotations: { [TERMINATION_TIMESTAMP_ANNOTATION]: at } },
    }),
  );
  const node = e.info.providerId ? ctx.cluster.nodeByProviderID(e.info.providerId) : undefined;
  for (const t of [targetOf(e.obj, 'NodeClaim'), ...(node ? [targetOf(node.obj, 'Node')] : [])]) {
    ctx.events.publish({
      involved: t,
      type: 'Warning',
      reason: 'TerminationGracePeriodExpiring',
      message: `All pods will be deleted by ${at}`,
    });
  }
}

/** InstanceTerminating=True on the NodeClaim (disruption budgets stop counting the node). */
async function markInstanceTerminating(ctx: ControllerContext, e: NodeClaimEntry): Promise<void> {
  const name = e.info.name;
  const conds = withCondition(conditionsOf(e.obj), 'InstanceTerminating', 'True', ctx.clock.now());
  const rv = e.obj.metadata.resourceVersion;
  // Informational; a conflict is not worth failing over.
  await ctx.kube.patchStatus('NodeClaim', name, { conditions: conds }, rv ? { resourceVersion: rv } : {}).then(
    (o) => ctx.cluster.applyNodeClaim(o),
    (err: unknown) => ctx.log.debug({ nodeclaim: name, err: String(err) }, 'could not mark InstanceTerminating'),
  );
}

/** The NodeClaim names an instance that is not this cluster's: it goes without terminating it. */
function notOwned(ctx: ControllerContext, e: NodeClaimEntry, why: string): true {
  ctx.events.publish({
    involved: targetOf(e.obj, 'NodeClaim'),
    type: 'Warning',
    reason: 'InstanceNotOwned',
    message: `Not terminating the instance of NodeClaim ${e.info.name}: ${why}`,
    dedupeValues: ['InstanceNotOwned', e.obj.metadata.uid ?? e.info.name],
  });
  ctx.log.warn(
    { nodeclaim: e.info.name, providerID: e.info.providerId, why },
    "finalizing a nodeclaim without terminating an instance that is not this cluster's",
  );
  return true;
}

async function removeFinalizer(ctx: ControllerContext, e: NodeClaimEntry): Promise<void> {
  const m = e.obj.metadata;
  await ctx.kube
    .patch('NodeClaim', e.info.name, {
      metadata: {
        resourceVersion: m.resourceVersion,
        finalizers: (m.finalizers ?? []).filter((f) => f !== TERMINATION_FINALIZER),
      },
    })
    .catch(ignoreNotFound);
}

/** The terminated NodeClaim's metrics and log line. */
function recordTerminated(ctx: ControllerContext, e: NodeClaimEntry): void {
  const labels = e.info.labels;
  ctx.metrics.nodeClaimsTerminated.inc({
    nodepool: e.info.nodePoolName ?? '',
    capacity_type: labels['karpenter.sh/capacity-type'] ?? '',
    zone: labels['topology.kubernetes.io/zone'] ?? '',
  });
  ctx.metrics.nodeClaimTerminationDuration.observe(
    { nodepool: e.info.nodePoolName ?? '' },
    (ctx.clock.now() - (e.info.deletionTimestamp ?? ctx.clock.now())) / 1000,
  );
  ctx.log.info(
    { providerID: e.info.providerId, ...(e.info.nodeName ? { node: e.info.nodeName } : {}) },
    'deleted nodeclaim',
  );
}
