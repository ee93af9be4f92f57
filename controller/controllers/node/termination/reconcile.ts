// node.termination: the Node finalizer (spec/disruption.md §5.6).
// 1. Delete the node's NodeClaim if nobody has yet.
// 2. A NotReady node whose instance is already gone: release it at once.
// 3. Taint karpenter.sh/disrupted:NoSchedule and exclude it from load balancers.
// 4. Drain (drain.ts), requeueing every second while pods remain; then wait out the 5 s minimum drain.
// 5. Delete the instance and poll every 5 s until it is gone.
// 6. Remove the finalizer.
// Volume detachment (step 6 upstream) is not modelled: the simulator has no CSI attachments.
import { isNodeClaimNotFound } from '../../../cloudprovider/types.ts';
import { targetOf } from '../../../operator/events.ts';
import { ignoreNotFound, isNotFound, isTooManyRequests, KubeError } from '../../../operator/kube.ts';
import { done, requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { NodeEntry } from '../../../state/statenode.ts';
import type { ControllerContext } from '../../context.ts';
import { DISRUPTED_TAINT, EXCLUDE_LB_LABEL, TERMINATION_FINALIZER, TERMINATION_TIMESTAMP_ANNOTATION } from '../../keys.ts';
import { doNotDisrupt, evictionTier, forceDeletions, waitingPods } from './drain.ts';
import type { Pod } from '../../../../engine/index.ts';
import { STATE_NODES } from '../../reads.ts';

export const DRAIN_REQUEUE_MS = 1_000;
export const MIN_DRAIN_MS = 5_000;
export const INSTANCE_POLL_MS = 5_000;

type TaintJson = { key: string; value?: string; effect: string };
const podTarget = (p: Pod) => ({ kind: 'Pod', name: p.name, namespace: p.namespace, uid: p.uid, apiVersion: 'v1' });

export function newNodeTermination(ctx: ControllerContext): Controller {
  /** The node's NodeClaim for log lines (Karpenter's node termination logs it with every line). */
  const claimOf = (n: NodeEntry): { nodeclaim?: string } => {
    const c = n.info.providerId ? ctx.cluster.nodeClaimByProviderID(n.info.providerId) : undefined;
    return c ? { nodeclaim: c.info.name } : {};
  };
  const drainStarted = new Map<string, number>();
  const instanceDeleted = new Map<string, number>();

  async function taint(n: NodeEntry): Promise<void> {
    const taints = (n.obj.spec?.['taints'] ?? []) as TaintJson[];
    const has = taints.some((t) => t.key === DISRUPTED_TAINT.key && t.effect === DISRUPTED_TAINT.effect);
    if (has && n.obj.metadata.labels?.[EXCLUDE_LB_LABEL] === 'karpenter') return;
    const next = [...taints.filter((t) => t.key !== DISRUPTED_TAINT.key), { ...DISRUPTED_TAINT }];
    ctx.cluster.applyNode(await ctx.kube.patch('Node', n.info.name, { metadata: { resourceVersion: n.obj.metadata.resourceVersion, labels: { [EXCLUDE_LB_LABEL]: 'karpenter' } }, spec: { taints: next } }));
    if (!has) ctx.log.info({ ...claimOf(n), 'taint.Key': DISRUPTED_TAINT.key, 'taint.Value': '', 'taint.Effect': DISRUPTED_TAINT.effect }, 'tainted node');
  }

  /** Returns how many pods still hold the node. */
  async function drain(n: NodeEntry, deadline: number | undefined, reason: string): Promise<number> {
    const now = ctx.clock.now();
    const waiting = waitingPods(ctx.cluster.workloads.podsOn(n.info.name), now);
    if (!waiting.length) return 0;
    const forced = forceDeletions(waiting, deadline, now);
    for (const p of forced) {
      const grace = Math.max(1, Math.floor(((deadline ?? now) - now) / 1000));
      await ctx.kube.delete('Pod', p.name, { namespace: p.namespace, gracePeriodSeconds: grace, uid: p.uid }).catch(ignoreNotFound);
      ctx.metrics.podsDrained.inc({ reason: 'Forceful Termination' });
      ctx.events.publish({ involved: podTarget(p), type: 'Warning', reason: 'Disrupted', message: `Deleting the pod to accommodate the terminationTime ${new Date(deadline!).toISOString()} of the node. The pod was granted ${grace} seconds of grace-period of its ${p.terminationGracePeriodSeconds ?? 30} terminationGracePeriodSeconds. This bypasses the PDB of the pod and the do-not-disrupt annotation.` });
    }
    const rest = waiting.filter((p) => !forced.includes(p));
    for (const p of evictionTier(rest)) {
      if (doNotDisrupt(p, now)) continue;
      try {
        await ctx.kube.evict(p.namespace, p.name, p.uid);
        ctx.metrics.evictionRequests.inc({ code: '200' });
        ctx.metrics.podsDrained.inc({ reason });
        ctx.events.publish({ involved: podTarget(p), type: 'Normal', reason: 'Evicted', message: `Evicted pod: ${reason}` });
      } catch (err) {
        const code = err instanceof KubeError ? err.code : 0;
        ctx.metrics.evictionRequests.inc({ code: String(code) });
        if (isNotFound(err) || code === 409) continue;
        if (!isTooManyRequests(err)) throw new Error(`evicting pod ${p.namespace}/${p.name}`, { cause: err });
        const multiple = (err as KubeError).message.includes('multiple');
        ctx.events.publish({ involved: targetOf(n.obj, 'Node'), type: 'Warning', reason: 'FailedDraining', message: `Failed to drain node, ${multiple ? 'eviction does not support multiple PDBs' : `evicting pod ${p.namespace}/${p.name} violates a PDB`}` });
      }
    }
    ctx.events.publish({ involved: targetOf(n.obj, 'Node'), type: 'Warning', reason: 'FailedDraining', message: `Failed to drain node, ${waiting.length} pods are waiting to be evicted` });
    return waiting.length;
  }

  async function reconcile(name: string): Promise<ReconcileResult> {
    const n = ctx.cluster.node(name);
    if (!n || n.info.deletionTimestamp === undefined || !(n.obj.metadata.finalizers ?? []).includes(TERMINATION_FINALIZER)) {
      drainStarted.delete(name);
      instanceDeleted.delete(name);
      return done;
    }
    const pid = n.info.providerId;
    const claim = pid ? ctx.cluster.nodeClaimByProviderID(pid) : undefined;
    if (claim && claim.info.deletionTimestamp === undefined) await ctx.kube.delete('NodeClaim', claim.info.name).catch(ignoreNotFound);
    if (!n.info.ready && pid && !(await exists(pid))) return release(n);
    const ts = claim?.info.annotations[TERMINATION_TIMESTAMP_ANNOTATION];
    const deadline = ts ? Date.parse(ts) : undefined;
    await taint(ctx.cluster.node(name) ?? n);
    const now = ctx.clock.now();
    if (!drainStarted.has(name)) drainStarted.set(name, now);
    const reason = claim?.obj.status && ((claim.obj.status['conditions'] ?? []) as Array<{ type: string; status: string; reason?: string }>).find((c) => c.type === 'DisruptionReason' && c.status === 'True')?.reason;
    const waiting = await drain(ctx.cluster.node(name) ?? n, deadline, reason ?? 'Forceful Termination');
    if (waiting > 0) return requeueAfter(DRAIN_REQUEUE_MS);
    const drainedFor = now - drainStarted.get(name)!;
    if (drainedFor < MIN_DRAIN_MS) return requeueAfter(MIN_DRAIN_MS - drainedFor);
    if (pid) {
      if (!instanceDeleted.has(name)) {
        ctx.metrics.nodesDrained.inc({ nodepool: n.info.nodePoolName ?? '' });
        try {
          await ctx.cloudProvider.delete(pid);
        } catch (err) {
          if (!isNodeClaimNotFound(err)) throw new Error(`terminating instance ${pid} of node ${name}`, { cause: err });
        }
        instanceDeleted.set(name, now);
      }
      if (await exists(pid)) return requeueAfter(INSTANCE_POLL_MS);
    }
    return release(ctx.cluster.node(name) ?? n);
  }

  async function exists(pid: string): Promise<boolean> {
    try {
      await ctx.cloudProvider.get(pid);
      return true;
    } catch (err) {
      if (isNodeClaimNotFound(err)) return false;
      throw err;
    }
  }

  async function release(n: NodeEntry): Promise<ReconcileResult> {
    const m = n.obj.metadata;
    await ctx.kube.patch('Node', n.info.name, { metadata: { resourceVersion: m.resourceVersion, finalizers: (m.finalizers ?? []).filter((f) => f !== TERMINATION_FINALIZER) } }).catch(ignoreNotFound);
    drainStarted.delete(n.info.name);
    instanceDeleted.delete(n.info.name);
    const now = ctx.clock.now();
    const pool = n.info.nodePoolName ?? '';
    ctx.metrics.nodesTerminated.inc({ nodepool: pool, zone: n.info.labels['topology.kubernetes.io/zone'] ?? '' });
    ctx.metrics.nodeTerminationDuration.observe({ nodepool: pool }, (now - (n.info.deletionTimestamp ?? now)) / 1000);
    ctx.metrics.nodeLifetime.observe({ nodepool: pool }, (now - (n.info.creationTimestamp ?? now)) / 1000);
    ctx.log.info(claimOf(n), 'deleted node');
    return done;
  }

  return {
    name: 'node.termination',
    reads: STATE_NODES,
    reconcile,
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
