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

const podTarget = (p: { name: string; namespace: string; uid: string }) => ({
  kind: 'Pod',
  name: p.name,
  namespace: p.namespace,
  uid: p.uid,
  apiVersion: 'v1',
});

export function newOrchestrationQueue(ctx: ControllerContext): OrchestrationQueue {
  const log = ctx.log;
  const queued = new Map<string, QueuedCommand>();
  let enqueue: (id: string) => void = () => {};

  const labels = (c: Command) => ({
    decision: c.metricLabels.decision,
    reason: c.metricLabels.reason,
    consolidation_type: c.metricLabels.consolidation_type,
  });
  const pidsOf = (cands: readonly DecisionCandidate[]) => cands.flatMap((c) => (c.providerId ? [c.providerId] : []));

  function providerIds(): Set<string> {
    const out = new Set<string>();
    for (const q of queued.values()) for (const p of pidsOf(q.candidates)) out.add(p);
    return out;
  }

  async function unmark(cands: readonly DecisionCandidate[]): Promise<void> {
    for (const c of cands) {
      if (!c.providerId || !c.nodeClaimName) continue;
      const node = ctx.cluster.nodeByProviderID(c.providerId);
      // A Node already being deleted keeps its taint: termination put it there for good.
      if (node?.info.deletionTimestamp !== undefined) continue;
      await markDisrupted(ctx, { providerId: c.providerId, nodeClaimName: c.nodeClaimName }, undefined).catch(
        (err: unknown) =>
          log.error(
            { nodeclaim: c.nodeClaimName, err: errText(err) },
            'removing disruption marks failed; the next disruption pass retries',
          ),
      );
    }
  }

  async function start(cmd: Command, snapshot: Snapshot): Promise<QueuedCommand> {
    const busy = providerIds();
    if (cmd.candidates.some((c) => c.providerId && busy.has(c.providerId)))
      throw new Error('candidate is being disrupted');
    const id = randomUUID();
    log.info({ command: commandString(cmd), ...commandLogValues(cmd) }, 'disrupting node(s)');
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
      await unmark(marked);
      throw new Error(`marking ${failures.length} candidate(s) disrupted failed`, { cause: failures[0] });
    }
    const candidates = cmd.candidates.filter((c) => marked.includes(c));
    let names: string[];
    try {
      names = await createReplacements(ctx, cmd, snapshot);
    } catch (err) {
      await unmark(candidates);
      throw new Error('launching replacement nodeclaims', { cause: err });
    }
    nominate(cmd, names, snapshot);
    const q: QueuedCommand = {
      id,
      command: cmd,
      candidates,
      replacements: names.map((name) => ({ name, initialized: false })),
      startedAt: ctx.clock.now(),
      deleted: new Set(),
    };
    queued.set(id, q);
    ctx.cluster.markForDeletion(...pidsOf(candidates));
    ctx.metrics.disruptionDecisions.inc(labels(cmd));
    for (const pool of new Set(candidates.map((c) => c.nodePool)))
      ctx.metrics.disruptionDecisionsByNodePool.inc({ nodepool: pool, ...labels(cmd) });
    enqueue(id);
    return q;
  }

  /** Destination nodes become non-candidates for the nomination window; moved pods hear where they go. */
  function nominate(cmd: Command, names: readonly string[], snapshot: Snapshot): void {
    const until = ctx.clock.now() + nominationWindow(ctx.options.batchMaxDurationMs);
    for (const d of destinations(cmd, names, snapshot)) {
      if (d.providerId) ctx.cluster.nominate(d.providerId, until);
      const where = [d.nodeClaim ? `nodeclaim/${d.nodeClaim}` : '', d.node ? `node/${d.node}` : '']
        .filter(Boolean)
        .join(', ');
      ctx.events.publish({
        involved: podTarget(d.pod),
        type: 'Normal',
        reason: 'Nominated',
        message: `Pod should schedule on: ${where}`,
        dedupeValues: [d.pod.uid, where],
      });
    }
  }

  /** Deletes a candidate's NodeClaim (termination drains it), with its events and metrics; once per candidate. */
  async function terminate(q: QueuedCommand, c: DecisionCandidate): Promise<void> {
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
    const pool = ctx.cluster.nodePool(c.nodePool)?.pool;
    const tgp = claim?.info.terminationGracePeriod;
    const m = {
      reason: reason.toLowerCase(),
      nodepool: c.nodePool,
      capacity_type: c.capacityType ?? '',
      consolidation_policy: reason === 'Drifted' ? '' : (pool?.disruption.consolidationPolicy ?? ''),
      termination_mode: tgp === undefined ? 'graceful' : tgp > 0 ? 'eventual' : 'forceful',
    };
    ctx.metrics.nodeClaimsDisrupted.inc(m);
    ctx.metrics.podsDisruptionInitiated.inc(m, c.reschedulablePods);
  }

  /** true once every replacement is initialized and every candidate's NodeClaim has been deleted. */
  async function waitOrTerminate(q: QueuedCommand): Promise<boolean> {
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
    if (waiting) return false;
    // All at once, as Karpenter's workqueue.ParallelizeUntil with a worker per candidate: one after another,
    // each delete waited its turn in the client's rate limiter behind every other controller's requests.
    const failures: unknown[] = [];
    await Promise.all(q.candidates.map((c) => terminate(q, c).catch((err: unknown) => void failures.push(err))));
    if (failures.length) throw failures[0];
    return true;
  }

  async function fail(q: QueuedCommand, why: string): Promise<void> {
    const uninitialized = q.replacements.filter((r) => !r.initialized).map((r) => r.name);
    ctx.metrics.disruptionQueueFailures.inc(labels(q.command), uninitialized.length);
    log.error(
      { commandId: q.id, command: commandString(q.command), why },
      'disruption command failed; undoing its marks',
    );
    await unmark(q.candidates.filter((c) => !c.nodeClaimName || !q.deleted.has(c.nodeClaimName)));
    ctx.cluster.unmarkForDeletion(
      ...pidsOf(q.candidates.filter((c) => !c.nodeClaimName || !q.deleted.has(c.nodeClaimName))),
    );
    await deleteNodeClaims(ctx, uninitialized).catch((err: unknown) =>
      log.error(
        { err: errText(err), replacements: uninitialized },
        'deleting replacements that never initialized failed',
      ),
    );
    for (const c of q.candidates) {
      const node = c.providerId ? ctx.cluster.nodeByProviderID(c.providerId) : undefined;
      const claim = c.nodeClaimName ? ctx.cluster.nodeClaim(c.nodeClaimName) : undefined;
      const message = `Disruption command failed (${why}); the node is no longer disrupted`;
      for (const t of [node && targetOf(node.obj, 'Node'), claim && targetOf(claim.obj, 'NodeClaim')]) {
        if (t) ctx.events.publish({ involved: t, type: 'Warning', reason: 'DisruptionFailed', message });
      }
    }
    queued.delete(q.id);
  }

  async function reconcile(id: string): Promise<ReconcileResult> {
    const q = queued.get(id);
    if (!q) return done;
    const timeout = commandTimeoutMs(queued.size);
    const late = (): boolean => ctx.clock.now() - q.startedAt > timeout;
    try {
      if (await waitOrTerminate(q)) {
        log.info({ commandId: id, command: commandString(q.command) }, 'disruption command succeeded');
        queued.delete(id);
        return done;
      }
      if (late())
        await fail(q, `timed out after ${Math.round(timeout / 1000)} s waiting for replacements to initialize`);
      return queued.has(id) ? requeueAfter(QUEUE_POLL_MS) : done;
    } catch (err) {
      if (err instanceof Unrecoverable || late()) {
        await fail(q, errText(err));
        return done;
      }
      throw err;
    }
  }

  return {
    name: 'disruption.queue',
    reads: EVERY_KIND,
    concurrency: 100,
    reconcile,
    start,
    providerIds,
    commands: () => [...queued.values()],
    register(add) {
      enqueue = add;
      return () => {};
    },
  };
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
