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

export function newDisruption(ctx: ControllerContext, opts: DisruptionLoopOptions): DisruptionLoop {
  const { queue } = opts;
  const order = opts.methods ?? methodsFor(ctx.options.consolidationRepack);
  let state: LoopState = INITIAL_LOOP_STATE;
  let pending: { decision: Acting; at: number } | undefined;
  let last: Decision | undefined;
  /** After a failed validation: run the methods after this one next. */
  let resumeAfter: MethodName | undefined;
  /** The change key of the last pass that found nothing to do, unless a budget held something back. */
  let quietAt: string | undefined;
  ctx.metrics.consolidationTimeouts.inc({ consolidation_type: 'single' }, 0);
  ctx.metrics.consolidationTimeouts.inc({ consolidation_type: 'multi' }, 0);

  const engineOptions = (queued: ReadonlySet<string>): EngineDisruptOptions => ({
    state,
    consolidationState: ctx.cluster.consolidationState(),
    queued,
    // Karpenter's method deadlines are wall time (the engine worker's), whatever clock the controller runs on.
    deadlines: true,
    repack: ctx.options.consolidationRepack,
    repackMinSavingsShare: ctx.options.consolidationRepackMinSavings,
  });
  const snapshot = (): Promise<Snapshot> => buildSnapshot(ctx, ctx.clock.now(), ctx.engineOptions);
  const changeKey = (): string =>
    `${ctx.cluster.version}/${ctx.cluster.consolidationState()}/${queue.commands().length}`;

  async function validatePending(p: { decision: Acting }): Promise<void> {
    const s = await snapshot();
    const queued = queue.providerIds();
    const cmds: Command[] = [p.decision, ...(p.decision.concurrent ?? [])];
    for (const cmd of cmds) {
      const r = await ctx.engine.validate(s, cmd, engineOptions(queued));
      if (r.ok) {
        await startCommand(ctx, queue, r.command, s);
        continue;
      }
      ctx.metrics.failedValidations.inc(
        { consolidation_type: cmd.metricLabels.consolidation_type },
        r.failedValidations,
      );
      ctx.log.info(
        { command: cmd.kind, method: cmd.method, category: r.category, why: r.message },
        'disruption command no longer valid; dropped',
      );
      publishRejected(ctx, s, cmd, r.eventMessage);
      resumeAfter = cmd.method;
    }
  }

  async function decide(): Promise<ReconcileResult> {
    const key = changeKey();
    if (resumeAfter === undefined && key === quietAt) return requeueAfter(POLL_MS);
    const s = await snapshot();
    const methods = resumeAfter === undefined ? order : order.slice(order.indexOf(resumeAfter) + 1);
    resumeAfter = undefined;
    const started = performance.now();
    const r = await ctx.engine.disrupt(s, { ...engineOptions(queue.providerIds()), methods });
    state = r.state;
    last = r.decision;
    const d = r.decision;
    observeEvaluation(ctx, d, started);
    // Karpenter builds its candidates (and publishes their events, deduped on the object alone) every 10 s poll:
    // a pass whose news for a node was held back by that dedupe is not quiet, so the node hears it once it ends.
    const newsHeld = publishPass(ctx, s, r);
    if (d.truncated) reportTruncated(ctx, d);
    if (d.kind === 'noop') {
      // A search the clock cut short has not shown there is nothing to do: look again at the next poll.
      const heldBack = d.explanations.some((e) => e.code === 'budget');
      quietAt = heldBack || d.truncated || newsHeld ? undefined : key;
      return requeueAfter(POLL_MS);
    }
    quietAt = undefined;
    publishDecision(ctx, s, d);
    const delay = validationDelay(d.method);
    pending = { decision: d, at: ctx.clock.now() + delay };
    logDecided(ctx, d, delay);
    return requeueAfter(delay);
  }

  async function reconcile(): Promise<ReconcileResult> {
    if (!ctx.cluster.synced()) return requeueAfter(1_000);
    await cleanStaleMarks(ctx, queue.providerIds());
    if (pending) {
      const now = ctx.clock.now();
      if (now < pending.at) return requeueAfter(pending.at - now);
      const p = pending;
      pending = undefined;
      await validatePending(p);
      return requeueAfter(0);
    }
    return decide();
  }

  return {
    name: 'disruption',
    reads: EVERY_KIND,
    concurrency: 1,
    reconcile,
    queue,
    pending: () => pending?.decision,
    lastDecision: () => last,
    register(enqueue) {
      enqueue('');
      return () => {};
    },
  };
}
