// disruption: the singleton loop (docs/karpenter/disruption.md §1.2) over the disruption engine.
//
// Each pass, once cluster state is synced:
// 1. Remove disruption marks that no queued command owns (cleanup.ts).
// 2. A decision waiting out its validation delay (15 s for consolidation; drift is not re-simulated, as in
//    Karpenter, so it waits 0) is checked against a fresh snapshot with engine.validate and handed to the
//    orchestration queue. A failed validation lets the methods after the failed one run at once.
// 3. Otherwise, if the cluster changed since the last pass that found nothing (or a budget held something
//    back, or 5 minutes passed: the consolidation-state refresh), engine.disrupt runs the production
//    methods in order, then the global repack as --consolidation-repack says, skipping nodes already in a
//    queued command. Its decision waits for validation; its explanations become events.
// The loop polls every 10 s; a pass that started or validated a command runs again at once.
import { performance } from 'node:perf_hooks';
import {
  INITIAL_LOOP_STATE,
  methodsFor,
  type Command,
  type Decision,
  type EngineDisruptOptions,
  type LoopState,
  type MethodName,
  type Snapshot,
  type ValidationResult,
} from '../../../engine/index.ts';
import { requeueAfter, type ReconcileResult } from '../../operator/result.ts';
import { errText, type Controller } from '../../operator/runtime.ts';
import { buildSnapshot } from '../../state/snapshot.ts';
import type { ControllerContext } from '../context.ts';
import { cleanStaleMarks } from './cleanup.ts';
import type { OrchestrationQueue } from './queue.ts';
import { publishDecision, publishPass, publishRejected } from './report.ts';
import { EVERY_KIND } from '../reads.ts';

const POLL_MS = 10_000;
const VALIDATION_DELAY_MS = 15_000;

type Acting = Exclude<Decision, { kind: 'noop' }>;

export interface DisruptionLoop extends Controller {
  /** The decision waiting for its validation, if any (tests and the simulator). */
  pending(): Acting | undefined;
  /** The last decision engine.disrupt returned (with every node's explanation). */
  lastDecision(): Decision | undefined;
  readonly queue: OrchestrationQueue;
}

interface DisruptionLoopOptions {
  readonly queue: OrchestrationQueue;
  /** Engine methods in order (default: Karpenter's production order, then the repack per the options). */
  readonly methods?: readonly MethodName[];
}

/** Consolidation waits Karpenter's 15 s before re-checking; drift has no validator upstream. */
const validationDelay = (m: MethodName): number => (m === 'drift' || m === 'static-drift' ? 0 : VALIDATION_DELAY_MS);

/** Starts a validated command; a failure to start is logged (the queue has undone its marks). */
async function startCommand(
  ctx: ControllerContext,
  queue: OrchestrationQueue,
  cmd: Command,
  s: Snapshot,
): Promise<void> {
  try {
    await queue.start(cmd, s);
  } catch (err) {
    ctx.log.error({ command: cmd.kind, reason: cmd.reason, err: errText(err) }, 'starting a disruption command failed');
  }
}

/** karpenter_voluntary_disruption_decision_evaluation_duration_seconds, labelled by what was decided. */
function observeEvaluation(ctx: ControllerContext, d: Decision, started: number): void {
  ctx.metrics.decisionEvaluationDuration.observe(
    d.kind === 'noop'
      ? { reason: '', consolidation_type: '' }
      : { reason: d.metricLabels.reason, consolidation_type: d.metricLabels.consolidation_type },
    (performance.now() - started) / 1000,
  );
}

function reportTruncated(ctx: ControllerContext, d: Decision): void {
  ctx.metrics.solverTruncated.inc({ controller: 'disruption' });
  ctx.log.warn(
    d.kind === 'noop' ? { decision: 'noop' } : { decision: d.kind, method: d.method },
    "a wall-clock safety net cut this disruption decision's search short; it may differ from one made on an idle machine",
  );
}

function logDecided(ctx: ControllerContext, d: Acting, delay: number): void {
  ctx.log.info(
    {
      method: d.method,
      decision: d.kind,
      reason: d.reason,
      candidates: d.candidates.map((c) => c.name),
      replacements: d.replacements.length,
      savingsPerHour: d.savingsPerHour,
      validateInMs: delay,
    },
    'disruption decided; validating',
  );
}

/** What the loop carries from one pass to the next. */
interface LoopMemory {
  /** The engine's state between passes (consolidation's timeouts, the repack's history). */
  state: LoopState;
  /** The decision waiting for its validation, and when it is due. */
  pending: { decision: Acting; at: number } | undefined;
  last: Decision | undefined;
  /** After a failed validation: run the methods after this one next. */
  resumeAfter: MethodName | undefined;
  /** The change key of the last pass that found nothing to do, unless a budget held something back. */
  quietAt: string | undefined;
}

/** One disruption loop's context: what it reads, where its commands go, the methods it runs, what it remembers. */
interface Loop {
  readonly ctx: ControllerContext;
  readonly queue: OrchestrationQueue;
  readonly order: readonly MethodName[];
  readonly mem: LoopMemory;
}

function engineOptions(loop: Loop, queued: ReadonlySet<string>): EngineDisruptOptions {
  const { ctx } = loop;
  return {
    state: loop.mem.state,
    consolidationState: ctx.cluster.consolidationState(),
    queued,
    // Karpenter's method deadlines are wall time (the engine worker's), whatever clock the controller runs on.
    deadlines: true,
    repack: ctx.options.consolidationRepack,
    repackMinSavingsShare: ctx.options.consolidationRepackMinSavings,
  };
}

const snapshot = (ctx: ControllerContext): Promise<Snapshot> => buildSnapshot(ctx, ctx.clock.now(), ctx.engineOptions);

/** What a quiet pass is keyed on: cluster state, the consolidation state and the queue's length. */
const changeKey = ({ ctx, queue }: Loop): string =>
  `${ctx.cluster.version}/${ctx.cluster.consolidationState()}/${queue.commands().length}`;

/** A command that failed validation: counted, logged, its nodes told, and the methods after it run next. */
function dropInvalid(loop: Loop, s: Snapshot, cmd: Command, r: Extract<ValidationResult, { ok: false }>): void {
  const { ctx } = loop;
  ctx.metrics.failedValidations.inc({ consolidation_type: cmd.metricLabels.consolidation_type }, r.failedValidations);
  ctx.log.info(
    { command: cmd.kind, method: cmd.method, category: r.category, why: r.message },
    'disruption command no longer valid; dropped',
  );
  publishRejected(ctx, s, cmd, r.eventMessage);
  loop.mem.resumeAfter = cmd.method;
}

/** Checks the decision (and its concurrent commands) against a fresh snapshot; starts the valid ones. */
async function validatePending(loop: Loop, decision: Acting): Promise<void> {
  const { ctx, queue } = loop;
  const s = await snapshot(ctx);
  const queued = queue.providerIds();
  const cmds: Command[] = [decision, ...(decision.concurrent ?? [])];
  for (const cmd of cmds) {
    const r = await ctx.engine.validate(s, cmd, engineOptions(loop, queued));
    if (r.ok) await startCommand(ctx, queue, r.command, s);
    else dropInvalid(loop, s, cmd, r);
  }
}

/** The methods this pass runs: all of them, or those after the one whose command failed validation. */
function methodsToRun({ order, mem }: Loop): readonly MethodName[] {
  const methods = mem.resumeAfter === undefined ? order : order.slice(order.indexOf(mem.resumeAfter) + 1);
  mem.resumeAfter = undefined;
  return methods;
}

/** Runs the methods on a fresh snapshot; a decision waits out its validation delay, nothing found may go quiet. */
async function decide(loop: Loop): Promise<ReconcileResult> {
  const { ctx, queue, mem } = loop;
  const key = changeKey(loop);
  if (mem.resumeAfter === undefined && key === mem.quietAt) return requeueAfter(POLL_MS);
  const s = await snapshot(ctx);
  const methods = methodsToRun(loop);
  const started = performance.now();
  const r = await ctx.engine.disrupt(s, { ...engineOptions(loop, queue.providerIds()), methods });
  mem.state = r.state;
  mem.last = r.decision;
  const d = r.decision;
  observeEvaluation(ctx, d, started);
  // Karpenter builds its candidates (and publishes their events, deduped on the object alone) every 10 s poll:
  // a pass whose news for a node was held back by that dedupe is not quiet, so the node hears it once it ends.
  const newsHeld = await publishPass(ctx, s, r);
  if (d.truncated) reportTruncated(ctx, d);
  if (d.kind === 'noop') {
    // A search the clock cut short has not shown there is nothing to do: look again at the next poll.
    const heldBack = d.explanations.some((e) => e.code === 'budget');
    mem.quietAt = heldBack || d.truncated || newsHeld ? undefined : key;
    return requeueAfter(POLL_MS);
  }
  mem.quietAt = undefined;
  publishDecision(ctx, s, d);
  const delay = validationDelay(d.method);
  mem.pending = { decision: d, at: ctx.clock.now() + delay };
  logDecided(ctx, d, delay);
  return requeueAfter(delay);
}

/** One pass: wait for sync, clean stale marks, then validate the pending decision when due, or decide. */
async function pass(loop: Loop): Promise<ReconcileResult> {
  const { ctx, queue, mem } = loop;
  if (!ctx.cluster.synced()) return requeueAfter(1_000);
  await cleanStaleMarks(ctx, queue.providerIds());
  const p = mem.pending;
  if (!p) return decide(loop);
  const now = ctx.clock.now();
  if (now < p.at) return requeueAfter(p.at - now);
  mem.pending = undefined;
  await validatePending(loop, p.decision);
  return requeueAfter(0);
}

export function newDisruption(ctx: ControllerContext, opts: DisruptionLoopOptions): DisruptionLoop {
  const { queue } = opts;
  const loop: Loop = {
    ctx,
    queue,
    order: opts.methods ?? methodsFor(ctx.options.consolidationRepack),
    mem: { state: INITIAL_LOOP_STATE, pending: undefined, last: undefined, resumeAfter: undefined, quietAt: undefined },
  };
  ctx.metrics.consolidationTimeouts.inc({ consolidation_type: 'single' }, 0);
  ctx.metrics.consolidationTimeouts.inc({ consolidation_type: 'multi' }, 0);
  return {
    name: 'disruption',
    reads: EVERY_KIND,
    concurrency: 1,
    reconcile: () => pass(loop),
    queue,
    pending: () => loop.mem.pending?.decision,
    lastDecision: () => loop.mem.last,
    register(enqueue) {
      enqueue('');
      return () => {};
    },
  };
}
