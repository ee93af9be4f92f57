// What one disruption pass tells the world (docs/karpenter/disruption.md §5.9, §7.1): gauges of eligible nodes and
// of what the budgets allow, the consolidation timeouts, and Karpenter's events: DisruptionBlocked and
// Unconsolidatable on Node and NodeClaim with the engine's explanation of each node, DisruptionBlocked on a
// NodePool whose budget allows nothing, ConsolidationCandidate / ConsolidationApproved / ConsolidationRejected,
// the Balanced policy's consolidation_moves_total and consolidation_score, and the pods' do-not-disrupt events.
import {
  commandString,
  doNotDisruptEvents,
  type Command,
  type Decision,
  type DisruptResult,
  type Snapshot,
  type StateNode,
} from '../../../engine/index.ts';
import { forEachInChunks } from '../../operator/chunks.ts';
import { targetOf, type EventTarget } from '../../operator/events.ts';
import type { ControllerContext } from '../context.ts';

const usd = (x: number): string => `$${x.toFixed(2)}`;

/** The Node and NodeClaim targets of a snapshot node (either may be missing). */
function targetsOf(
  ctx: ControllerContext,
  n: Pick<StateNode, 'providerId' | 'nodeClaimName'> | undefined,
): EventTarget[] {
  if (!n) return [];
  const node = n.providerId ? ctx.cluster.nodeByProviderID(n.providerId) : undefined;
  const claim = n.nodeClaimName ? ctx.cluster.nodeClaim(n.nodeClaimName) : undefined;
  return [...(node ? [targetOf(node.obj, 'Node')] : []), ...(claim ? [targetOf(claim.obj, 'NodeClaim')] : [])];
}

/**
 * Explanations published per turn of the event loop: a pass over 5,000 nodes explains each of them, and building
 * and deduping their events in one turn held the loop for tens of ms (docs/controller-benchmark.md, "Late ticks").
 */
const EXPLANATIONS_PER_TURN = 500;

/**
 * The pass's gauges and events; true when an explanation event was held back by its dedupe although its message
 * is new (the node's reason changed within the timeout): the loop must look again rather than go quiet.
 */
export function publishPass(ctx: ControllerContext, s: Snapshot, r: DisruptResult): Promise<boolean> {
  const m = ctx.metrics;
  for (const [reason, n] of Object.entries(r.metrics.eligibleNodes))
    m.eligibleNodes.set({ reason: reason.toLowerCase() }, n ?? 0);
  const numNodes = new Map<string, number>();
  for (const n of s.nodes) {
    if (n.hasNodeClaim && n.initialized && !n.instanceTerminating && n.nodePoolName)
      numNodes.set(n.nodePoolName, (numNodes.get(n.nodePoolName) ?? 0) + 1);
  }
  for (const b of r.metrics.allowedDisruptions) {
    const labels = { nodepool: b.nodePool, reason: b.reason.toLowerCase() };
    m.allowedDisruptions.set(labels, b.allowed);
    m.nodesConsumingBudgets.set(labels, b.disrupting);
    const entry = ctx.cluster.nodePool(b.nodePool);
    if (b.allowed === 0 && entry && (numNodes.get(b.nodePool) ?? 0) > 0) {
      ctx.events.publish({
        involved: targetOf(entry.obj, 'NodePool'),
        type: 'Normal',
        reason: 'DisruptionBlocked',
        message: `No allowed disruptions for disruption reason ${b.reason} due to blocking budget`,
        // Karpenter: the NodePool's UID and the reason, for 1 min (NodePoolBlockedForDisruptionReason).
        dedupeValues: [entry.obj.metadata.uid ?? b.nodePool, b.reason],
        dedupeTimeoutMs: 60_000,
      });
    }
  }
  for (const [type, n] of Object.entries(r.metrics.timeouts))
    if (n) m.consolidationTimeouts.inc({ consolidation_type: type }, n);
  publishPodEvents(ctx, s);
  for (const mv of r.metrics.consolidationMoves ?? []) {
    m.consolidationMoves.inc({ decision: mv.decision, nodepool: mv.nodePool, policy: mv.policy });
    if (mv.score)
      m.consolidationScore.observe(
        { decision: mv.score.decision, nodepool: mv.nodePool, policy: mv.policy },
        mv.score.value,
      );
  }
  return publishExplanations(ctx, s, r);
}

/**
 * DisruptionBlocked and Unconsolidatable on the Node and NodeClaim of each node the pass explains, a bounded number
 * per turn; true when news was held back.
 */
async function publishExplanations(ctx: ControllerContext, s: Snapshot, r: DisruptResult): Promise<boolean> {
  let heldNews = 0;
  const byName = new Map(s.nodes.map((n) => [n.name, n]));
  await forEachInChunks(r.decision.explanations, EXPLANATIONS_PER_TURN, (e) => {
    if (!e.event) return;
    const n = byName.get(e.node);
    if (!n?.managed) return;
    // Karpenter dedupes these on the object's UID alone, not the message (Unconsolidatable for 15 min, DisruptionBlocked
    // for the default 2 min; pkg/controllers/disruption/events/events.go): a node whose reason changes from pass to pass
    // (not initialized, then nominated, then a pod's do-not-disrupt) is told once per timeout, not once per reason.
    const events = targetsOf(ctx, n).map((t) => ({
      involved: t,
      type: 'Normal' as const,
      reason: e.event!.reason,
      message: e.event!.message,
      dedupeValues: [t.uid ?? `${t.kind}/${t.name}`],
    }));
    heldNews += ctx.events.publishAll(events).heldNews;
  });
  return heldNews > 0;
}

/** ConsolidationCandidate on the candidates of a consolidation replace; ConsolidationApproved on Balanced pools. */
export function publishDecision(ctx: ControllerContext, s: Snapshot, d: Exclude<Decision, { kind: 'noop' }>): void {
  if (d.kind === 'replace' && d.reason === 'Underutilized') {
    const message = `Consolidation candidate: ${commandString(d)} (savings: ${usd(d.savingsPerHour)})`;
    for (const c of d.candidates)
      for (const t of targetsOf(
        ctx,
        s.nodes.find((n) => n.name === c.name),
      ))
        ctx.events.publish({ involved: t, type: 'Normal', reason: 'ConsolidationCandidate', message });
  }
  for (const [pool, message] of Object.entries(d.approvals ?? {})) {
    // Karpenter: a single-node move is approved on its Node and NodeClaim, a multi-node move on each NodePool.
    const targets =
      d.method === 'single'
        ? d.candidates.flatMap((c) =>
            targetsOf(
              ctx,
              s.nodes.find((n) => n.name === c.name),
            ),
          )
        : [ctx.cluster.nodePool(pool)?.obj].flatMap((o) => (o ? [targetOf(o, 'NodePool')] : []));
    for (const t of targets)
      ctx.events.publish({
        involved: t,
        type: 'Normal',
        reason: 'ConsolidationApproved',
        message,
        dedupeValues: [t.uid ?? `${t.kind}/${t.name}`],
      });
  }
}

/** A consolidation that failed validation: ConsolidationRejected on each candidate (not for emptiness or drift). */
export function publishRejected(ctx: ControllerContext, s: Snapshot, cmd: Command, eventMessage: string): void {
  if (cmd.method === 'emptiness' || cmd.method === 'drift' || cmd.method === 'static-drift') return;
  for (const c of cmd.candidates) {
    const n = s.nodes.find((x) => x.name === c.name) ?? {
      ...(c.providerId ? { providerId: c.providerId } : {}),
      ...(c.nodeClaimName ? { nodeClaimName: c.nodeClaimName } : {}),
    };
    for (const t of targetsOf(ctx, n))
      ctx.events.publish({ involved: t, type: 'Normal', reason: 'ConsolidationRejected', message: eventMessage });
  }
}

/** DoNotDisruptUntil, DoNotDisruptGracePeriodElapsed and InvalidDoNotDisruptAnnotation on the pods the pass checked. */
function publishPodEvents(ctx: ControllerContext, s: Snapshot): void {
  for (const e of doNotDisruptEvents(s)) {
    const p = e.pod;
    ctx.events.publish({
      involved: { kind: 'Pod', name: p.name, namespace: p.namespace, uid: p.uid, apiVersion: 'v1' },
      type: e.type,
      reason: e.reason,
      message: e.message,
      dedupeValues: e.dedupeValues,
    });
  }
}
