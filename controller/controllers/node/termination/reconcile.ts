// node.termination: the Node finalizer (docs/karpenter/disruption.md §5.6).
// 1. Ownership (ownership.ts): a Node whose providerID a NodeClaim records for another Node is released at
//    once, with an InstanceNotOwned warning; nothing else here is done to it.
// 2. Delete the node's own NodeClaim if nobody has yet.
// 3. A NotReady node whose instance is already gone: release it at once.
// 4. Taint karpenter.sh/disrupted:NoSchedule and exclude it from load balancers.
// 5. Drain (drain.ts), requeueing every second while pods remain; then wait out the 5 s minimum drain.
// 6. Only for a Node its NodeClaim owns: delete the instance the NodeClaim records and poll every 5 s until
//    it is gone (an instance the cloud provider says is not this cluster's is left alone, with a warning).
// 7. Remove the finalizer.
// Volume detachment (step 6 upstream) is not modelled: the simulator has no CSI attachments.
import { isInstanceNotOwned, isNodeClaimNotFound } from '../../../cloudprovider/types.ts';
import { targetOf } from '../../../operator/events.ts';
import { ignoreNotFound } from '../../../operator/kube.ts';
import { done, requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import { cpuCount, linearScaleReconciles, NODE_TERMINATION_RECONCILES } from '../../../operator/reconciles.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { NodeClaimEntry, NodeEntry } from '../../../state/statenode.ts';
import type { ControllerContext } from '../../context.ts';
import { TERMINATION_FINALIZER, TERMINATION_TIMESTAMP_ANNOTATION } from '../../keys.ts';
import { newDrainer } from './drainer.ts';
import { ownershipOf } from './ownership.ts';
import { STATE_NODES } from '../../reads.ts';

const DRAIN_REQUEUE_MS = 1_000;
const MIN_DRAIN_MS = 5_000;
const INSTANCE_POLL_MS = 5_000;

export function newNodeTermination(ctx: ControllerContext): Controller {
  const terminator = new NodeTerminator(ctx);
  return {
    name: 'node.termination',
    reads: STATE_NODES,
    // Karpenter's: draining many nodes at once, each waiting on its evictions (operator/reconciles.ts).
    concurrency: linearScaleReconciles(cpuCount(ctx.options.cpuRequests), NODE_TERMINATION_RECONCILES),
    reconcile: (name) => terminator.reconcile(name),
    register(enqueue) {
      for (const n of ctx.cluster.allNodes()) if (n.info.deletionTimestamp !== undefined) enqueue(n.info.name);
      return ctx.cluster.subscribe((c) => {
        if (c.kind === 'Node' && c.type === 'upsert' && c.obj.metadata.deletionTimestamp) enqueue(c.name);
        if (c.kind === 'Pod') {
          const node = (c.obj.spec as { nodeName?: string } | undefined)?.nodeName;
          if (node && ctx.cluster.node(node)?.info.deletionTimestamp !== undefined) enqueue(node);
        }
      });
    },
  };
}

/** The finalizer's steps for each terminating Node, and when each Node's drain began and its instance was deleted. */
class NodeTerminator {
  private readonly drainStarted = new Map<string, number>();
  private readonly instanceDeleted = new Map<string, number>();
  private readonly drainer: ReturnType<typeof newDrainer>;

  constructor(private readonly ctx: ControllerContext) {
    this.drainer = newDrainer(ctx);
  }

  async reconcile(name: string): Promise<ReconcileResult> {
    const ctx = this.ctx;
    const n = ctx.cluster.node(name);
    if (
      !n ||
      n.info.deletionTimestamp === undefined ||
      !(n.obj.metadata.finalizers ?? []).includes(TERMINATION_FINALIZER)
    ) {
      this.forget(name);
      return done;
    }
    const owner = ownershipOf(ctx.cluster, n);
    if (owner.kind === 'foreign')
      return this.releaseNotOwned(
        n,
        `its providerID ${n.info.providerId} is the instance of NodeClaim ${owner.claim.info.name}, whose node is ${owner.claim.info.nodeName}`,
      );
    const claim = owner.kind === 'owned' ? owner.claim : undefined;
    if (claim && claim.info.deletionTimestamp === undefined)
      await ctx.kube.delete('NodeClaim', claim.info.name).catch(ignoreNotFound);
    const pid = n.info.providerId;
    if (!n.info.ready && pid && !(await exists(ctx, pid))) return this.release(n);
    const draining = await this.drainStep(ctx.cluster.node(name) ?? n, claim);
    if (draining) return draining;
    if (claim?.info.providerId) {
      const terminating = await this.terminateStep(ctx.cluster.node(name) ?? n, claim.info.providerId);
      if (terminating) return terminating;
    }
    return this.release(ctx.cluster.node(name) ?? n);
  }

  private forget(name: string): void {
    this.drainStarted.delete(name);
    this.instanceDeleted.delete(name);
  }

  /** Taint, drain, and the minimum drain time; a requeue while pods remain or the time is not up. */
  private async drainStep(n: NodeEntry, claim: NodeClaimEntry | undefined): Promise<ReconcileResult | undefined> {
    const name = n.info.name;
    const ts = claim?.info.annotations[TERMINATION_TIMESTAMP_ANNOTATION];
    const deadline = ts ? Date.parse(ts) : undefined;
    await this.drainer.taint(n);
    const now = this.ctx.clock.now();
    if (!this.drainStarted.has(name)) this.drainStarted.set(name, now);
    const reason = claim ? disruptionReason(claim) : undefined;
    const waiting = await this.drainer.drain(
      this.ctx.cluster.node(name) ?? n,
      deadline,
      reason ?? 'Forceful Termination',
    );
    if (waiting > 0) return requeueAfter(DRAIN_REQUEUE_MS);
    const drainedFor = now - this.drainStarted.get(name)!;
    return drainedFor < MIN_DRAIN_MS ? requeueAfter(MIN_DRAIN_MS - drainedFor) : undefined;
  }

  /** Deletes the NodeClaim's instance once and polls until it is gone; a requeue while it is there. */
  private async terminateStep(n: NodeEntry, pid: string): Promise<ReconcileResult | undefined> {
    const ctx = this.ctx;
    const name = n.info.name;
    if (!this.instanceDeleted.has(name)) {
      ctx.metrics.nodesDrained.inc({ nodepool: n.info.nodePoolName ?? '' });
      try {
        await ctx.cloudProvider.delete(pid);
      } catch (err) {
        if (isInstanceNotOwned(err)) return this.releaseNotOwned(n, err.message);
        if (!isNodeClaimNotFound(err)) throw new Error(`terminating instance ${pid} of node ${name}`, { cause: err });
      }
      this.instanceDeleted.set(name, ctx.clock.now());
    }
    return (await exists(ctx, pid)) ? requeueAfter(INSTANCE_POLL_MS) : undefined;
  }

  private async removeFinalizer(n: NodeEntry): Promise<void> {
    const m = n.obj.metadata;
    await this.ctx.kube
      .patch('Node', n.info.name, {
        metadata: {
          resourceVersion: m.resourceVersion,
          finalizers: (m.finalizers ?? []).filter((f) => f !== TERMINATION_FINALIZER),
        },
      })
      .catch(ignoreNotFound);
    this.forget(n.info.name);
  }

  private async release(n: NodeEntry): Promise<ReconcileResult> {
    const ctx = this.ctx;
    await this.removeFinalizer(n);
    const now = ctx.clock.now();
    const pool = n.info.nodePoolName ?? '';
    ctx.metrics.nodesTerminated.inc({ nodepool: pool, zone: n.info.labels['topology.kubernetes.io/zone'] ?? '' });
    ctx.metrics.nodeTerminationDuration.observe({ nodepool: pool }, (now - (n.info.deletionTimestamp ?? now)) / 1000);
    ctx.metrics.nodeLifetime.observe({ nodepool: pool }, (now - (n.info.creationTimestamp ?? now)) / 1000);
    ctx.log.info(claimOf(ctx, n), 'deleted node');
    return done;
  }

  /** The Node goes, and no instance is terminated on its account. */
  private async releaseNotOwned(n: NodeEntry, why: string): Promise<ReconcileResult> {
    const message = `Not terminating an instance for node ${n.info.name}: ${why}. The Node is finalized without it.`;
    this.ctx.events.publish({
      involved: targetOf(n.obj, 'Node'),
      type: 'Warning',
      reason: 'InstanceNotOwned',
      message,
      dedupeValues: ['InstanceNotOwned', n.obj.metadata.uid ?? n.info.name],
    });
    this.ctx.log.warn(
      { node: n.info.name, providerID: n.info.providerId, why },
      'finalizing a node without terminating an instance it does not own',
    );
    await this.removeFinalizer(n);
    return done;
  }
}

/** The node's NodeClaim for log lines (Karpenter's node termination logs it with every line). */
function claimOf(ctx: ControllerContext, n: NodeEntry): { nodeclaim?: string } {
  const c = n.info.providerId ? ctx.cluster.nodeClaimByProviderID(n.info.providerId) : undefined;
  return c ? { nodeclaim: c.info.name } : {};
}

/** The reason of the NodeClaim's DisruptionReason condition, when it is True. */
function disruptionReason(claim: NodeClaimEntry): string | undefined {
  const status = claim.obj.status;
  if (!status) return undefined;
  return ((status['conditions'] ?? []) as Array<{ type: string; status: string; reason?: string }>).find(
    (c) => c.type === 'DisruptionReason' && c.status === 'True',
  )?.reason;
}

/** The instance is still there (the cloud provider's get answers). */
async function exists(ctx: ControllerContext, pid: string): Promise<boolean> {
  try {
    await ctx.cloudProvider.get(pid);
    return true;
  } catch (err) {
    if (isNodeClaimNotFound(err)) return false;
    throw err;
  }
}
