// The provisioner (a singleton): pending pods open a batch window; while it is open their pods are shipped to
// the engine's warm model ahead of the decision (preload.ts); when it closes and cluster state is synced, it
// snapshots the cluster, asks engine.provision where the pods go, nominates the existing and in-flight nodes
// that will take pods, creates the planned NodeClaims (create.ts: several at once, each written into cluster
// state at once, to beat informer lag), and tells every pod what happened with an event: Nominated, or
// FailedScheduling naming the constraint that failed in each NodePool.
//
// 1. Not synced -> try again in 1 s (a NodeClaim is mid-launch, or informers have not listed).
// 2. No provisionable pods -> done.
// 3. Plan; nominate; create the new NodeClaims, each after its NodePool's limits are re-checked.
// 4. Publish the failures' events; update the scheduler metrics.
import { randomUUID } from 'node:crypto';
import { incompatibleNodePools, type Pod, type ProvisionPlan, type Snapshot } from '../../../engine/index.ts';
import { findCondition } from '../../operator/conditions.ts';
import { targetOf } from '../../operator/events.ts';
import { failedSchedulingEvent } from './failed.ts';
import { nominatedEvent } from './nominated.ts';
import type { KubeObject } from '../../operator/kube.ts';
import { done, requeueAfter, type ReconcileResult } from '../../operator/result.ts';
import type { Controller } from '../../operator/runtime.ts';
import { nominationWindow, type Change } from '../../state/cluster.ts';
import { observeBufferPlan } from '../capacitybuffer/provisioning.ts';
import { recordSchedulingPass } from '../metrics/scheduler.ts';
import { buildSnapshot } from '../../state/snapshot.ts';
import type { ControllerContext } from '../context.ts';
import { Batcher } from './batcher.ts';
import { PendingPreloader, type AheadAtClose } from './preload.ts';
import { createNodeClaims } from './create.ts';
import { EVERY_KIND } from '../reads.ts';
import { forEachInChunks } from '../../operator/chunks.ts';
import type { Event } from '../../operator/events.ts';

/** Pods whose events (and log lines) a decision publishes per turn of the event loop. */
const PER_TURN = 500;

export interface Provisioner extends Controller {
  /** Opens (or extends) the batch window, as a pending pod does. */
  trigger(): void;
  /** The last plan, for the simulator and tests. */
  lastPlan(): ProvisionPlan | undefined;
  /** How the last decision got its plan (undefined before the first), for the simulator and the benchmarks. */
  lastDecision(): DecisionAccount | undefined;
}

/** How a decision got its plan. */
export interface DecisionAccount {
  /** What the decision found of the solve ahead when it had taken its snapshot (preload.ts). */
  readonly ahead: AheadAtClose;
  /** How long its engine call waited behind the model's earlier calls (a solve ahead, a preload, a disruption pass), ms. */
  readonly queuedMs?: number;
}

/** Changes that can make a provisioning pass worthwhile. */
export function triggers(c: Change): boolean {
  const o = c.obj;
  switch (c.kind) {
    case 'Pod': {
      if (c.type === 'delete') return false;
      const spec = (o.spec ?? {}) as { nodeName?: string };
      const conds = ((o.status ?? {})['conditions'] ?? []) as Array<{
        type?: string;
        status?: string;
        reason?: string;
      }>;
      return (
        !spec.nodeName &&
        !o.metadata.deletionTimestamp &&
        conds.some((x) => x.type === 'PodScheduled' && x.status === 'False' && x.reason === 'Unschedulable')
      );
    }
    case 'Node':
    case 'NodeClaim':
      return c.type === 'upsert' && Boolean(o.metadata.deletionTimestamp) && !c.old?.metadata.deletionTimestamp;
    case 'ResourceSlice':
    case 'DeviceClass':
      // Devices published (a node's driver came up) or a class changed: pending DRA pods may fit now.
      return c.type === 'upsert';
    case 'ResourceClaim':
      // A claim created after its pod (the ResourceClaim controller makes one from the pod's template): the pod
      // failed with "claim not found" in the last pass and may fit now. Status writes (allocation) are not news.
      return c.type === 'upsert' && !c.old;
    case 'NodePool':
    case 'EC2NodeClass':
      // A new or changed spec, or a readiness flip; status-only writes (usage counts) are not news.
      return (
        c.type === 'upsert' &&
        (!c.old ||
          o.metadata.generation !== c.old.metadata.generation ||
          findCondition(o, 'Ready')?.status !== findCondition(c.old, 'Ready')?.status)
      );
    default:
      return false;
  }
}

export function newProvisioner(ctx: ControllerContext): Provisioner {
  const p = new Provisioning(ctx);
  return {
    name: 'provisioner',
    reads: EVERY_KIND,
    concurrency: 1,
    reconcile: () => p.reconcile(),
    trigger: () => p.batcher.trigger(),
    lastPlan: () => p.last,
    lastDecision: () => p.account(),
    register: (enqueue) => p.register(enqueue),
  };
}

/** The provisioner's state: the batch window, the preloader, the decision in progress and the last plan. */
class Provisioning {
  readonly batcher: Batcher;
  last: ProvisionPlan | undefined;
  private readonly preloader: PendingPreloader;
  private enqueueNow: (key: string) => void = () => {};
  /** The solve in progress, for the unfinished-work gauge. */
  private solving: { id: string; since: number } | undefined;
  /** A decision is being made: nothing is shipped or speculated meanwhile. */
  private deciding = false;
  /** When the batch window the next decision answers closed (performance.now()). */
  private closedAt: number | undefined;
  /** What the last decision found of the solve ahead. */
  private ahead: AheadAtClose | undefined;

  constructor(private readonly ctx: ControllerContext) {
    const { clock, options, engine } = ctx;
    this.batcher = new Batcher(clock, options.batchIdleDurationMs, options.batchMaxDurationMs, () => {
      this.closedAt ??= performance.now();
      this.enqueueNow('');
    });
    this.preloader = new PendingPreloader({
      clock,
      idleMs: options.batchIdleDurationMs,
      pod: (namespace, name) => ctx.cluster.workloads.pod(namespace, name)?.pod,
      ...(engine.preload ? { preload: (pods: readonly Pod[]) => engine.preload!(pods) } : {}),
      ...(engine.speculate
        ? { speculate: (why) => this.speculate(why), callOffSpeculation: () => engine.callOffSpeculation?.() }
        : {}),
      ready: () => !this.deciding && ctx.cluster.synced(),
      onError: (err) => ctx.log.debug({ err: String(err) }, 'shipping pending pods ahead of the decision failed'),
    });
    ctx.metrics.beforeScrape.push(() => {
      if (this.solving)
        ctx.metrics.unfinishedWork.set(
          { controller: 'provisioner', scheduling_id: this.solving.id },
          (performance.now() - this.solving.since) / 1000,
        );
    });
  }

  /** Pending pods (and the other triggers) open the window; its close enqueues the decision. */
  register(enqueue: (key: string) => void): () => void {
    this.enqueueNow = enqueue;
    const unsubscribe = this.ctx.cluster.subscribe((c) => {
      if (triggers(c)) {
        this.batcher.trigger();
        this.preloader.saw(c);
      } else this.preloader.changed(this.batcher.isOpen());
    });
    this.batcher.trigger();
    return () => {
      unsubscribe();
      this.batcher.stop();
      this.preloader.stop();
    };
  }

  account(): DecisionAccount | undefined {
    if (!this.ahead) return undefined;
    const queuedMs = this.ctx.engine.lastProvision?.()?.queuedMs;
    return { ahead: this.ahead, ...(queuedMs !== undefined ? { queuedMs } : {}) };
  }

  async reconcile(): Promise<ReconcileResult> {
    this.deciding = true;
    try {
      return await this.decide();
    } finally {
      this.deciding = false;
    }
  }

  /**
   * The decision the open window would make if it closed now, solved for the engine to keep (preload.ts): the
   * same pods and snapshot a close would take, nothing published. The decision at the close gets the kept plan
   * only if its own snapshot differs from this one in nothing but the clock.
   */
  private async speculate(why: 'pods' | 'changed'): Promise<void> {
    const ctx = this.ctx;
    if (!this.batcher.isOpen() || this.deciding || !ctx.cluster.synced()) return;
    const { all } = decisionPods(ctx);
    if (!all.length) return;
    const started = performance.now();
    const snapshot = await buildSnapshot(ctx, ctx.clock.now(), ctx.engineOptions);
    if (this.deciding) return;
    const solving = performance.now();
    await ctx.engine.speculate!(snapshot, all);
    // When each solve ahead ran against the window's close (the decision's `ahead` and `queuedMs`).
    ctx.log.debug(
      { why, pods: all.length, snapshotMs: round(solving - started), engineMs: round(performance.now() - solving) },
      'provisioning decision solved ahead',
    );
  }

  private async decide(): Promise<ReconcileResult> {
    const ctx = this.ctx;
    if (!ctx.cluster.synced()) return requeueAfter(1_000);
    this.preloader.clear();
    const phases = new DecisionPhases(this.closedAt);
    this.closedAt = undefined;
    const { pending, pods, all } = decisionPods(ctx);
    if (!all.length) return done;
    const started = performance.now();
    ctx.metrics.podTimes.seen(pending, ctx.clock.now());
    const snapshot = await buildSnapshot(ctx, ctx.clock.now(), ctx.engineOptions);
    phases.mark('snapshot');
    // Not waiting for a solve ahead whose plan this snapshot would throw away; waiting for one whose plan it takes.
    this.ahead = this.preloader.atClose();
    const plan = await this.solve(snapshot, all, pods.size);
    phases.mark('engine');
    logPlan(ctx, plan, pending, performance.now() - started);
    const nominations = nominate(ctx, snapshot, plan, pods);
    // NodeClaims first: the pass's per-pod events and metrics wait until the first create has been answered (the
    // thread would otherwise work them out while its answer waits: 10-150 ms at 10,000 pods), and reporting
    // thousands of failed pods (an event and a log line each) waits until every create settled. Per-pod events go
    // out PER_TURN pods at a time, with a turn of the event loop between (a decision can nominate or fail 10,000
    // pods at once).
    let firstCreated = (): void => {};
    const first = new Promise<void>((resolve) => (firstCreated = resolve));
    const creating = createNodeClaims(ctx, snapshot, plan, pods, () => {
      phases.mark('firstCreate');
      ctx.log.debug(
        { ...phases.ms(), pods: all.length, ahead: this.ahead, engine: ctx.engine.lastProvision?.() },
        'provisioning decision phases',
      );
      firstCreated();
    });
    await Promise.race([first, creating.catch(() => {})]);
    const publishing = forEachInChunks(nominations, PER_TURN, (e) => ctx.events.publish(e));
    recordSchedulingPass(ctx.metrics, 'provisioner', snapshot, plan, pods, ctx.clock.now());
    try {
      await creating;
    } finally {
      await publishing;
      await reportFailures(ctx, snapshot, plan, pods);
      if (ctx.options.featureGates.capacityBuffer) await observeBufferPlan(ctx, plan, snapshot);
    }
    return done;
  }

  /** engine.provision with the scheduling metrics around it; the plan becomes the last plan. */
  private async solve(snapshot: Snapshot, all: Pod[], podCount: number): Promise<ProvisionPlan> {
    const { metrics, engine, log } = this.ctx;
    const schedulingId = randomUUID();
    metrics.queueDepth.set({ controller: 'provisioner', scheduling_id: schedulingId }, podCount);
    const end = metrics.schedulingDuration.startTimer({ controller: 'provisioner' });
    this.solving = { id: schedulingId, since: performance.now() };
    let plan: ProvisionPlan;
    try {
      plan = await engine.provision(snapshot, all, { clock: () => performance.now() });
    } finally {
      end();
      this.solving = undefined;
      metrics.queueDepth.remove({ controller: 'provisioner', scheduling_id: schedulingId });
      metrics.unfinishedWork.remove({ controller: 'provisioner', scheduling_id: schedulingId });
    }
    this.last = plan;
    const speculative = engine.lastProvision?.()?.speculative;
    if (speculative) metrics.speculativePlans.inc({ outcome: speculative });
    if (plan.truncated) {
      metrics.solverTruncated.inc({ controller: 'provisioner' });
      log.warn(
        { pods: podCount },
        'the improvement phase hit its wall-clock safety net; this plan may differ from one made on an idle machine',
      );
    }
    return plan;
  }
}

/**
 * Where a decision's time went, ms, for its debug log line: from the batch window's close (or the decision's
 * start, when no window closed) to the snapshot taken, the engine's plan back, and the first NodeClaim created.
 */
class DecisionPhases {
  private readonly start: number;
  private readonly startedAt = performance.now();
  private last: number;
  private readonly out: Record<string, number> = {};

  constructor(closedAt: number | undefined) {
    this.start = closedAt ?? this.startedAt;
    this.last = this.startedAt;
    this.out['waitedMs'] = round(this.startedAt - this.start);
  }

  mark(phase: string): void {
    const t = performance.now();
    this.out[`${phase}Ms`] = round(t - this.last);
    this.last = t;
  }

  ms(): Record<string, number> {
    return { ...this.out, totalMs: round(this.last - this.start) };
  }
}

const round = (ms: number): number => Math.round(ms * 10) / 10;

/** The pods a decision now would place: the provisionable ones by uid, then the capacity buffers' virtual ones. */
function decisionPods(ctx: ControllerContext): { pending: Pod[]; pods: Map<string, Pod>; all: Pod[] } {
  const pending = ctx.cluster.provisionablePods();
  // CapacityBuffer virtual pods are scheduled with the real ones, so their room is launched; never bound.
  const virtual = ctx.cluster.workloads.buffers.virtualPods();
  const pods = new Map(pending.map((p) => [p.uid, p]));
  return { pending, pods, all: pending.length || virtual.length ? [...pods.values(), ...virtual] : [] };
}

/**
 * Existing and in-flight nodes that take pods become non-candidates for the nomination window (at once); the
 * events that tell their pods where they go are returned, in plan order, for the caller to publish.
 */
function nominate(ctx: ControllerContext, snapshot: Snapshot, plan: ProvisionPlan, pods: Map<string, Pod>): Event[] {
  const until = ctx.clock.now() + nominationWindow(ctx.options.batchMaxDurationMs);
  const byName = plan.existing.size ? new Map(snapshot.nodes.map((n) => [n.name, n])) : undefined;
  const events: Event[] = [];
  for (const [nodeName, uids] of plan.existing) {
    const sn = byName?.get(nodeName);
    if (!sn) continue;
    // Capacity-buffer virtual pods (not in `pods`) nominate nothing: they come back every pass, and a node
    // nominated for them would never become a disruption candidate.
    if (sn.providerId && uids.some((uid) => pods.has(uid))) ctx.cluster.nominate(sn.providerId, until);
    const to = { nodeClaim: sn.nodeClaimName, node: sn.hasNode ? sn.name : undefined };
    for (const uid of uids) {
      const p = pods.get(uid);
      if (p && p.nodeName === undefined) events.push(nominatedEvent(p, to));
    }
  }
  return events;
}

/** Karpenter's lines for a plan: the pods found, the new NodeClaims and the in-flight nodes they fit on. */
function logPlan(ctx: ControllerContext, plan: ProvisionPlan, pending: readonly Pod[], ms: number): void {
  const log = ctx.log;
  if (plan.newNodeClaims.length) {
    log.info({ Pods: podList(pending), duration: `${ms.toFixed(3)}ms` }, 'found provisionable pod(s)');
    log.info(
      { nodeclaims: plan.newNodeClaims.length, pods: plan.newNodeClaims.reduce((a, nc) => a + nc.pods.length, 0) },
      'computed new nodeclaim(s) to fit pod(s)',
    );
  }
  if (plan.existing.size)
    log.info(
      { nodes: plan.existing.size, pods: [...plan.existing.values()].reduce((a, uids) => a + uids.length, 0) },
      'computed unready node(s) will fit pod(s)',
    );
}

/** NodePools that take no part in provisioning, and why (guide §13: "describe the NodePool"). */
function notReadyPools(ctx: ControllerContext): string {
  const out: string[] = [];
  for (const e of ctx.cluster.nodePools()) {
    if (e.pool?.ready) continue;
    const ready = findCondition(e.obj, 'Ready');
    const nodeClass = findCondition(e.obj, 'NodeClassReady');
    const why = e.errors.length
      ? e.errors.join('; ')
      : [ready?.message, nodeClass?.status !== 'True' ? nodeClass?.message : undefined].filter(Boolean).join(': ') ||
        'readiness not yet known';
    out.push(`${e.obj.metadata.name} (${why})`);
  }
  return out.length ? `; NodePools not ready: ${out.join(', ')}` : '';
}

/** NoCompatibleInstanceTypes on each NodePool whose own requirements leave it no instance type (Karpenter's scheduler events). */
function reportIncompatiblePools(ctx: ControllerContext, snapshot: Snapshot): void {
  for (const { nodePool, minValues } of incompatibleNodePools(snapshot)) {
    const obj = ctx.cluster.nodePool(nodePool)?.obj;
    if (!obj) continue;
    const message = `NodePool requirements filtered out all compatible available instance types${minValues ? ' due to minValues incompatibility' : ''}`;
    ctx.events.publish({
      involved: targetOf(obj, 'NodePool'),
      type: 'Warning',
      reason: 'NoCompatibleInstanceTypes',
      message,
      dedupeValues: [obj.metadata.uid ?? nodePool],
    });
  }
}

/** FailedScheduling (and a log line) for each pod the plan could not place, PER_TURN pods a turn; the unschedulable-pods gauge. */
async function reportFailures(
  ctx: ControllerContext,
  snapshot: Snapshot,
  plan: ProvisionPlan,
  pods: Map<string, Pod>,
): Promise<void> {
  const log = ctx.log;
  const failures = [...plan.unschedulable, ...plan.ignored];
  if (plan.unschedulable.length) reportIncompatiblePools(ctx, snapshot);
  const notReady = failures.length ? notReadyPools(ctx) : '';
  ctx.metrics.unschedulablePods.set({ controller: 'provisioner' }, plan.unschedulable.length);
  await forEachInChunks(failures, PER_TURN, (e) => {
    const p = pods.get(e.uid);
    if (!p) return;
    // Waiting for reserved capacity other NodeClaims of this plan hold: retried next round, no event (Karpenter
    // skips ReservedOfferingErrors too).
    if (e.reservedOffering) {
      log.info({ pod: `${p.namespace}/${p.name}`, reason: e.reason }, 'pod waits for reserved capacity');
      return;
    }
    const reason = `${e.reason}${notReady}`;
    ctx.events.publish(failedSchedulingEvent(p, reason));
    log.info(
      { pod: `${p.namespace}/${p.name}`, reason: e.reason, perNodePool: e.perNodePool },
      'could not schedule pod',
    );
  });
}

/** Pods as Karpenter lists them in a log line: the first five `namespace/name`, then "and N other(s)". */
function podList(pods: readonly Pod[]): string {
  const head = pods
    .slice(0, 5)
    .map((p) => `${p.namespace}/${p.name}`)
    .join(', ');
  return pods.length > 5 ? `${head} and ${pods.length - 5} other(s)` : head;
}

export type { KubeObject };
