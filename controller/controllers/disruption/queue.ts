// disruption.queue: the orchestration queue (docs/karpenter/disruption.md §5.7). start() runs Karpenter's
// StartCommand: mark the candidates disrupted (taint + DisruptionReason), create the replacements, nominate
// the destinations, only then mark the candidates for deletion in cluster state (earlier, the provisioner
// would launch capacity for their pods a second time), and enqueue the command. Each reconcile waits for
// the replacements to initialize (1 s polls) and then deletes the candidates' NodeClaims, all at once;
// termination drains them.
//
// A command fails when a replacement disappears before initializing or when it outlives its timeout
// (engine.commandTimeoutMs). A failed command leaves nothing behind: the candidates lose the taint and the
// condition and are unmarked, and the replacements that never initialized are deleted. Other errors are
// retried with the work queue's backoff; one command's failure never touches another.
import { randomUUID } from 'node:crypto';
import {
  commandString,
  commandTimeoutMs,
  type Command,
  type DecisionCandidate,
  type Snapshot,
} from '../../../engine/index.ts';
import { isTrue } from '../../operator/conditions.ts';
import { targetOf } from '../../operator/events.ts';
import { ignoreNotFound } from '../../operator/kube.ts';
import { instanceTypeList } from '../../operator/logger.ts';
import { done, requeueAfter, type ReconcileResult } from '../../operator/result.ts';
import { errText, type Controller } from '../../operator/runtime.ts';
import { nominationWindow } from '../../state/cluster.ts';
import { nominatedEvent } from '../provisioning/nominated.ts';
import type { ControllerContext } from '../context.ts';
import { markDisrupted } from './marks.ts';
import { createReplacements, deleteNodeClaims, destinations } from './replacements.ts';
import { EVERY_KIND } from '../reads.ts';

const QUEUE_POLL_MS = 1_000;

interface QueuedCommand {
  readonly id: string;
  readonly command: Command;
  /** The candidates that were marked (a pure delete goes on with the ones that could be). */
  readonly candidates: readonly DecisionCandidate[];
  readonly replacements: ReadonlyArray<{ readonly name: string; initialized: boolean }>;
  readonly startedAt: number;
  /** Candidates whose NodeClaim delete call succeeded. */
  readonly deleted: Set<string>;
}

export interface OrchestrationQueue extends Controller {
  /** Starts a command; throws (having undone its marks) when it cannot start. */
  start(cmd: Command, snapshot: Snapshot): Promise<QueuedCommand>;
  /** providerIDs of every candidate of a queued command. */
  providerIds(): Set<string>;
  commands(): readonly QueuedCommand[];
}

class Unrecoverable extends Error {
  override name = 'Unrecoverable';
}

export function newOrchestrationQueue(ctx: ControllerContext): OrchestrationQueue {
  const queue = new CommandQueue(ctx);
  return {
    name: 'disruption.queue',
    reads: EVERY_KIND,
    concurrency: 100,
    reconcile: (id) => queue.reconcile(id),
    start: (cmd, snapshot) => queue.start(cmd, snapshot),
    providerIds: () => queue.providerIds(),
    commands: () => queue.commands(),
    register(add) {
      queue.enqueue = add;
      return () => {};
    },
  };
}

/** The commands in flight, by id: started, reconciled until their candidates are deleted, or failed and undone. */
class CommandQueue {
  private readonly queued = new Map<string, QueuedCommand>();
  /** The work queue's add (register sets it). */
  enqueue: (id: string) => void = () => {};

  constructor(private readonly ctx: ControllerContext) {}

  providerIds(): Set<string> {
    const out = new Set<string>();
    for (const q of this.queued.values()) for (const p of pidsOf(q.candidates)) out.add(p);
    return out;
  }

  commands(): readonly QueuedCommand[] {
    return [...this.queued.values()];
  }

  /** Karpenter's StartCommand: mark, launch, nominate, then mark for deletion in cluster state and enqueue. */
  async start(cmd: Command, snapshot: Snapshot): Promise<QueuedCommand> {
    const busy = this.providerIds();
    if (cmd.candidates.some((c) => c.providerId && busy.has(c.providerId)))
      throw new Error('candidate is being disrupted');
    const id = randomUUID();
    this.ctx.log.info({ command: commandString(cmd), ...commandLogValues(cmd) }, 'disrupting node(s)');
    const candidates = await markCandidates(this.ctx, cmd);
    const names = await launchReplacements(this.ctx, cmd, snapshot, candidates);
    nominate(this.ctx, cmd, names, snapshot);
    const q: QueuedCommand = {
      id,
      command: cmd,
      candidates,
      replacements: names.map((name) => ({ name, initialized: false })),
      startedAt: this.ctx.clock.now(),
      deleted: new Set(),
    };
    this.queued.set(id, q);
    this.ctx.cluster.markForDeletion(...pidsOf(candidates));
    countDecision(this.ctx, cmd, candidates);
    this.enqueue(id);
    return q;
  }

  async reconcile(id: string): Promise<ReconcileResult> {
    const q = this.queued.get(id);
    if (!q) return done;
    const timeout = commandTimeoutMs(this.queued.size);
    const late = (): boolean => this.ctx.clock.now() - q.startedAt > timeout;
    try {
      if (await waitOrTerminate(this.ctx, q)) {
        this.ctx.log.info({ commandId: id, command: commandString(q.command) }, 'disruption command succeeded');
        this.queued.delete(id);
        return done;
      }
      if (late())
        await this.fail(q, `timed out after ${Math.round(timeout / 1000)} s waiting for replacements to initialize`);
      return this.queued.has(id) ? requeueAfter(QUEUE_POLL_MS) : done;
    } catch (err) {
      if (err instanceof Unrecoverable || late()) {
        await this.fail(q, errText(err));
        return done;
      }
      throw err;
    }
  }

  private async fail(q: QueuedCommand, why: string): Promise<void> {
    await undoCommand(this.ctx, q, why);
    this.queued.delete(q.id);
  }
}

const labels = (c: Command) => ({
  decision: c.metricLabels.decision,
  reason: c.metricLabels.reason,
  consolidation_type: c.metricLabels.consolidation_type,
});

const pidsOf = (cands: readonly DecisionCandidate[]) => cands.flatMap((c) => (c.providerId ? [c.providerId] : []));

/**
 * Marks every candidate disrupted (taint + condition), all at once, and returns the ones marked, in the
 * command's order. A command with replacements needs them all; a pure delete goes on with the ones that could
 * be marked. When the command cannot go on, the marks made are undone and this throws.
 */
async function markCandidates(ctx: ControllerContext, cmd: Command): Promise<DecisionCandidate[]> {
  const marked: DecisionCandidate[] = [];
  const failures: unknown[] = [];
  await Promise.all(
    cmd.candidates.map(async (c) => {
      try {
        if (!c.providerId || !c.nodeClaimName) throw new Error(`candidate ${c.name} has no NodeClaim`);
        await markDisrupted(ctx, { providerId: c.providerId, nodeClaimName: c.nodeClaimName }, cmd.reason);
        marked.push(c);
      } catch (err) {
        failures.push(err);
      }
    }),
  );
  if (failures.length && (cmd.replacements.length || !marked.length)) {
    await unmark(ctx, marked);
    throw new Error(`marking ${failures.length} candidate(s) disrupted failed`, { cause: failures[0] });
  }
  return cmd.candidates.filter((c) => marked.includes(c));
}

/** Creates the command's replacement NodeClaims and returns their names; on failure unmarks the candidates and throws. */
async function launchReplacements(
  ctx: ControllerContext,
  cmd: Command,
  snapshot: Snapshot,
  candidates: readonly DecisionCandidate[],
): Promise<string[]> {
  try {
    return await createReplacements(ctx, cmd, snapshot);
  } catch (err) {
    await unmark(ctx, candidates);
    throw new Error('launching replacement nodeclaims', { cause: err });
  }
}

/** Removes the taint and the condition from candidates that are not being deleted; failures are logged, not thrown. */
async function unmark(ctx: ControllerContext, cands: readonly DecisionCandidate[]): Promise<void> {
  for (const c of cands) {
    if (!c.providerId || !c.nodeClaimName) continue;
    const node = ctx.cluster.nodeByProviderID(c.providerId);
    // A Node already being deleted keeps its taint: termination put it there for good.
    if (node?.info.deletionTimestamp !== undefined) continue;
    await markDisrupted(ctx, { providerId: c.providerId, nodeClaimName: c.nodeClaimName }, undefined).catch(
      (err: unknown) =>
        ctx.log.error(
          { nodeclaim: c.nodeClaimName, err: errText(err) },
          'removing disruption marks failed; the next disruption pass retries',
        ),
    );
  }
}

/** Destination nodes become non-candidates for the nomination window; moved pods hear where they go. */
function nominate(ctx: ControllerContext, cmd: Command, names: readonly string[], snapshot: Snapshot): void {
  const until = ctx.clock.now() + nominationWindow(ctx.options.batchMaxDurationMs);
  for (const d of destinations(cmd, names, snapshot)) {
    if (d.providerId) ctx.cluster.nominate(d.providerId, until);
    ctx.events.publish(nominatedEvent(d.pod, { nodeClaim: d.nodeClaim, node: d.node }));
  }
}

/** The decision counters of a started command: one decision, and one per NodePool its candidates come from. */
function countDecision(ctx: ControllerContext, cmd: Command, candidates: readonly DecisionCandidate[]): void {
  ctx.metrics.disruptionDecisions.inc(labels(cmd));
  for (const pool of new Set(candidates.map((c) => c.nodePool)))
    ctx.metrics.disruptionDecisionsByNodePool.inc({ nodepool: pool, ...labels(cmd) });
}

/** true once every replacement is initialized and every candidate's NodeClaim has been deleted. */
async function waitOrTerminate(ctx: ControllerContext, q: QueuedCommand): Promise<boolean> {
  if (!(await replacementsInitialized(ctx, q))) return false;
  // All at once, as Karpenter's workqueue.ParallelizeUntil with a worker per candidate: one after another,
  // each delete waited its turn in the client's rate limiter behind every other controller's requests.
  const failures: unknown[] = [];
  await Promise.all(q.candidates.map((c) => terminate(ctx, q, c).catch((err: unknown) => void failures.push(err))));
  if (failures.length) throw failures[0];
  return true;
}

/**
 * Looks at every replacement not yet initialized (with its events) and records the ones that are; true when
 * none is left waiting. Throws Unrecoverable when a replacement is gone or being deleted.
 */
async function replacementsInitialized(ctx: ControllerContext, q: QueuedCommand): Promise<boolean> {
  const reason = q.command.reason;
  let waiting = false;
  for (const r of q.replacements) {
    if (r.initialized) continue;
    const claim = ctx.cluster.nodeClaim(r.name)?.obj ?? (await ctx.kube.find('NodeClaim', r.name));
    if (!claim) throw new Unrecoverable(`replacement ${r.name} was deleted`);
    if (claim.metadata.deletionTimestamp)
      throw new Unrecoverable(`replacement ${r.name} is being deleted before it initialized`);
    ctx.events.publish({
      involved: targetOf(claim, 'NodeClaim'),
      type: 'Normal',
      reason: 'DisruptionLaunching',
      message: `Launching NodeClaim: ${reason}`,
    });
    if (!isTrue(claim, 'Initialized')) {
      ctx.events.publish({
        involved: targetOf(claim, 'NodeClaim'),
        type: 'Normal',
        reason: 'DisruptionWaitingReadiness',
        message: 'Waiting on readiness to continue disruption',
      });
      waiting = true;
      continue;
    }
    r.initialized = true;
  }
  return !waiting;
}

/** Deletes a candidate's NodeClaim (termination drains it), with its events and metrics; once per candidate. */
async function terminate(ctx: ControllerContext, q: QueuedCommand, c: DecisionCandidate): Promise<void> {
  if (!c.nodeClaimName || q.deleted.has(c.nodeClaimName)) return;
  const reason = q.command.reason;
  const node = c.providerId ? ctx.cluster.nodeByProviderID(c.providerId) : undefined;
  const claim = ctx.cluster.nodeClaim(c.nodeClaimName);
  await ctx.kube.delete('NodeClaim', c.nodeClaimName).catch(ignoreNotFound);
  q.deleted.add(c.nodeClaimName);
  if (node)
    ctx.events.publish({
      involved: targetOf(node.obj, 'Node'),
      type: 'Normal',
      reason: 'DisruptionTerminating',
      message: `Disrupting Node: ${reason}`,
    });
  if (claim)
    ctx.events.publish({
      involved: targetOf(claim.obj, 'NodeClaim'),
      type: 'Normal',
      reason: 'DisruptionTerminating',
      message: `Disrupting NodeClaim: ${reason}`,
    });
  const m = disruptedLabels(ctx, reason, c, claim?.info.terminationGracePeriod);
  ctx.metrics.nodeClaimsDisrupted.inc(m);
  ctx.metrics.podsDisruptionInitiated.inc(m, c.reschedulablePods);
}

/** The labels of nodeclaims_disrupted_total and pods_disruption_initiated_total for a deleted candidate. */
function disruptedLabels(
  ctx: ControllerContext,
  reason: Command['reason'],
  c: DecisionCandidate,
  tgp: number | undefined,
) {
  const pool = ctx.cluster.nodePool(c.nodePool)?.pool;
  return {
    reason: reason.toLowerCase(),
    nodepool: c.nodePool,
    capacity_type: c.capacityType ?? '',
    consolidation_policy: reason === 'Drifted' ? '' : (pool?.disruption.consolidationPolicy ?? ''),
    termination_mode: tgp === undefined ? 'graceful' : tgp > 0 ? 'eventual' : 'forceful',
  };
}

/**
 * A failed command leaves nothing behind: candidates not yet deleted lose their marks and are unmarked for
 * deletion, replacements that never initialized are deleted, and every candidate hears why.
 */
async function undoCommand(ctx: ControllerContext, q: QueuedCommand, why: string): Promise<void> {
  const uninitialized = q.replacements.filter((r) => !r.initialized).map((r) => r.name);
  ctx.metrics.disruptionQueueFailures.inc(labels(q.command), uninitialized.length);
  ctx.log.error(
    { commandId: q.id, command: commandString(q.command), why },
    'disruption command failed; undoing its marks',
  );
  const kept = q.candidates.filter((c) => !c.nodeClaimName || !q.deleted.has(c.nodeClaimName));
  await unmark(ctx, kept);
  ctx.cluster.unmarkForDeletion(...pidsOf(kept));
  await deleteNodeClaims(ctx, uninitialized).catch((err: unknown) =>
    ctx.log.error(
      { err: errText(err), replacements: uninitialized },
      'deleting replacements that never initialized failed',
    ),
  );
  publishFailed(ctx, q, why);
}

/** DisruptionFailed on every candidate's Node and NodeClaim. */
function publishFailed(ctx: ControllerContext, q: QueuedCommand, why: string): void {
  const message = `Disruption command failed (${why}); the node is no longer disrupted`;
  for (const c of q.candidates) {
    const node = c.providerId ? ctx.cluster.nodeByProviderID(c.providerId) : undefined;
    const claim = c.nodeClaimName ? ctx.cluster.nodeClaim(c.nodeClaimName) : undefined;
    for (const t of [node && targetOf(node.obj, 'Node'), claim && targetOf(claim.obj, 'NodeClaim')]) {
      if (t) ctx.events.publish({ involved: t, type: 'Warning', reason: 'DisruptionFailed', message });
    }
  }
}

/** The command as Karpenter's "disrupting node(s)" line describes it (Command.LogValues). */
function commandLogValues(cmd: Command): Record<string, unknown> {
  const ct = (r: Command['replacements'][number]): string => {
    const types = new Set(
      r.requirements.find((q) => q.key === 'karpenter.sh/capacity-type' && q.operator === 'In')?.values ?? [
        'on-demand',
      ],
    );
    return types.has('reserved') ? 'reserved' : types.has('spot') ? 'spot' : 'on-demand';
  };
  return {
    decision: cmd.kind,
    'disrupted-node-count': cmd.candidates.length,
    'replacement-node-count': cmd.replacements.length,
    'pod-count': cmd.candidates.reduce((a, c) => a + c.reschedulablePods, 0),
    'disrupted-nodes': cmd.candidates.map((c) => ({
      Node: { name: c.name },
      NodeClaim: { name: c.nodeClaimName ?? '' },
      'instance-type': c.instanceType ?? '',
      'capacity-type': c.capacityType ?? '',
    })),
    'replacement-nodes': cmd.replacements.map((r) => ({
      'capacity-type': ct(r),
      ...(cmd.replacements.length === 1
        ? { 'instance-types': instanceTypeList(r.instanceTypes.map((o) => o.name)) }
        : {}),
    })),
  };
}
