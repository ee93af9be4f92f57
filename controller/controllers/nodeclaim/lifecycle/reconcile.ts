// nodeclaim.lifecycle (docs/karpenter/disruption.md §5.4). For every live NodeClaim:
// 1. add the termination finalizer first (never launch without it);
// 2. launch -> register -> initialize -> liveness, each acting only when its turn has come (liveness also
//    when a step before it failed);
// 3. write what changed: metadata, then status (conditions, providerID, capacity, nodeName).
// Node changes requeue the NodeClaim with the same providerID, so registration and initialization follow
// the kubelet without polling. A NodeClaim this controller deleted (no capacity, its class not ready, timed
// out) is left alone until the watch shows the deletion: a reconcile in between must not launch it again.
import { conditionsOf, sameConditions } from '../../../operator/conditions.ts';
import type { KubeObject } from '../../../operator/kube.ts';
import { done, minResult, requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import { cpuCount, linearScaleReconciles, NODECLAIM_LIFECYCLE_RECONCILES } from '../../../operator/reconciles.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { NodeClaimEntry } from '../../../state/statenode.ts';
import type { ControllerContext } from '../../context.ts';
import { TERMINATION_FINALIZER } from '../../keys.ts';
import { condition, draftOf, setCondition, type Draft, type Step } from './draft.ts';
import { initialize } from './initialization.ts';
import { Launcher } from './launch.ts';
import { liveness } from './liveness.ts';
import { register } from './registration.ts';
import { CLAIMS_AND_NODES } from '../../reads.ts';

const DEPENDENTS = ['Launched', 'Registered', 'Initialized'] as const;

/** Ready = True once Launched, Registered and Initialized all are; else Unknown, naming the first that is not. */
function setReady(d: Draft, now: number): void {
  const notReady = DEPENDENTS.find((t) => condition(d, t)?.status !== 'True');
  if (notReady) setCondition(d, 'Ready', 'Unknown', now, `${notReady}NotTrue`, `${notReady} is not True`);
  else setCondition(d, 'Ready', 'True', now);
}

/** Writes what the steps changed: labels and annotations, then status (conditions, providerID, capacity, nodeName). */
async function write(ctx: ControllerContext, d: Draft): Promise<void> {
  const m = d.obj.metadata;
  const labelsChanged = JSON.stringify(d.labels) !== JSON.stringify(m.labels ?? {});
  const annotationsChanged = JSON.stringify(d.annotations) !== JSON.stringify(m.annotations ?? {});
  let latest: KubeObject | undefined;
  if (labelsChanged || annotationsChanged) {
    latest = await ctx.kube.patch('NodeClaim', d.info.name, {
      metadata: { labels: d.labels, annotations: d.annotations },
    });
  }
  const { conditions: _c, ...oldRest } = d.obj.status ?? {};
  const { conditions: _d, ...newRest } = d.status;
  if (JSON.stringify(oldRest) !== JSON.stringify(newRest) || !sameConditions(conditionsOf(d.obj), d.conditions)) {
    const rv = latest?.metadata.resourceVersion ?? m.resourceVersion;
    latest = await ctx.kube.patchStatus(
      'NodeClaim',
      d.info.name,
      { ...newRest, conditions: d.conditions },
      rv ? { resourceVersion: rv } : {},
    );
  }
  if (latest) ctx.cluster.applyNodeClaim(latest);
}

/** The NodeClaim with the termination finalizer, added first if missing (never launch without it). */
async function withFinalizer(ctx: ControllerContext, entry: NodeClaimEntry): Promise<NodeClaimEntry | undefined> {
  const m = entry.obj.metadata;
  if ((m.finalizers ?? []).includes(TERMINATION_FINALIZER)) return entry;
  ctx.cluster.applyNodeClaim(
    await ctx.kube.patch('NodeClaim', entry.info.name, {
      metadata: { resourceVersion: m.resourceVersion, finalizers: [...(m.finalizers ?? []), TERMINATION_FINALIZER] },
    }),
  );
  return ctx.cluster.nodeClaim(entry.info.name);
}

/**
 * Launch, register, initialize, liveness on the draft, in turn: their steps, or 'deleted' once one deleted the
 * NodeClaim. When one throws, liveness still runs and what changed is written before the error goes on.
 */
async function runSteps(ctx: ControllerContext, launcher: Launcher, d: Draft): Promise<Step[] | 'deleted'> {
  const steps: Step[] = [];
  try {
    for (const sub of [
      (x: Draft) => launcher.reconcile(x),
      (x: Draft) => register(ctx, x),
      (x: Draft) => initialize(ctx, x),
      (x: Draft) => liveness(ctx, x),
    ]) {
      const step = await sub(d);
      if (step.kind === 'deleted') return 'deleted';
      steps.push(step);
    }
  } catch (err) {
    // Liveness runs whatever failed before it, as Karpenter's sub-reconcilers all run: a launch that keeps
    // failing (a silent EC2 endpoint, a template EC2 refuses) ends when the launch timeout deletes the
    // NodeClaim, instead of holding cluster state unsynced (a NodeClaim without providerID) for good.
    if ((await liveness(ctx, d)).kind === 'deleted') return 'deleted';
    await write(ctx, d).catch(() => undefined);
    throw err;
  }
  return steps;
}

/** One lifecycle pass over a live NodeClaim that has its finalizer: the steps, Ready, then the write. */
async function lifecycle(
  ctx: ControllerContext,
  launcher: Launcher,
  entry: NodeClaimEntry,
): Promise<ReconcileResult | 'deleted'> {
  const d = draftOf(entry.obj, entry.info);
  const now = ctx.clock.now();
  for (const t of DEPENDENTS) if (!condition(d, t)) setCondition(d, t, 'Unknown', now);
  const steps = await runSteps(ctx, launcher, d);
  if (steps === 'deleted') return 'deleted';
  setReady(d, now);
  await write(ctx, d);
  return minResult(
    ...steps.map((s) => (s.kind === 'stop' && s.requeueMs !== undefined ? requeueAfter(s.requeueMs) : done)),
  );
}

/** Every live NodeClaim now, then each one on its own changes and on its Node's (no polling for the kubelet). */
function watchClaims(ctx: ControllerContext, enqueue: (name: string) => void): () => void {
  for (const c of ctx.cluster.nodeClaims()) enqueue(c.info.name);
  return ctx.cluster.subscribe((c) => {
    if (c.kind === 'NodeClaim' && c.type === 'upsert' && !c.obj.metadata.deletionTimestamp) enqueue(c.name);
    if (c.kind === 'Node') {
      const pid = (c.obj.spec as { providerID?: string } | undefined)?.providerID;
      const claim = pid ? ctx.cluster.nodeClaimByProviderID(pid) : undefined;
      if (claim && !claim.info.deletionTimestamp) enqueue(claim.info.name);
    }
  });
}

export function newNodeClaimLifecycle(ctx: ControllerContext): Controller {
  const launcher = new Launcher(ctx, ctx.cloudProvider);
  /** NodeClaims (name -> uid) this controller deleted whose deletion cluster state has not shown yet. */
  const deleting = new Map<string, string>();

  async function reconcile(name: string): Promise<ReconcileResult> {
    const found = ctx.cluster.nodeClaim(name);
    if (!found) {
      deleting.delete(name);
      return done;
    }
    const uid = found.obj.metadata.uid ?? name;
    if (found.info.deletionTimestamp) {
      launcher.forget(uid);
      deleting.delete(name);
      return done;
    }
    if (deleting.get(name) === uid) return done;
    const entry = await withFinalizer(ctx, found);
    if (!entry) return done;
    const r = await lifecycle(ctx, launcher, entry);
    if (r !== 'deleted') return r;
    // A step deleted the NodeClaim: remember it until cluster state shows the deletion.
    deleting.set(name, uid);
    return done;
  }

  return {
    name: 'nodeclaim.lifecycle',
    reads: [...CLAIMS_AND_NODES, 'ResourceSlice'],
    // Karpenter's: a launch or a registration does not wait behind a thousand others (operator/reconciles.ts).
    concurrency: linearScaleReconciles(cpuCount(ctx.options.cpuRequests), NODECLAIM_LIFECYCLE_RECONCILES),
    reconcile,
    register: (enqueue) => watchClaims(ctx, enqueue),
  };
}
