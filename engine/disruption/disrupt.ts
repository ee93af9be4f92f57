// engine.disrupt: one loop of the disruption controller (docs/karpenter/disruption.md §1.2 steps 5-6) over a snapshot.
// The methods run in order and the first that yields a command wins; every node not disrupted gets a reason.
// The caller owns the loop state (consolidated markers, previously unseen pools) and passes it back in.
import type { DisruptionReason, Snapshot } from '../domain/types.ts';
import { budgetMapping } from './budgets.ts';
import { bySavingsRatio, candidateSet, type CandidateSet } from './candidates.ts';
import { drift } from './drift.ts';
import { emptiness } from './emptiness.ts';
import { methodFilter } from './filters.ts';
import { resolve, type MethodInput, type MethodOutput, type Resolved } from './method.ts';
import { multiNode } from './multinode.ts';
import { planRepack } from './repack.ts';
import { singleNode } from './singlenode.ts';
import { staticDrift } from './staticdrift.ts';
import type {
  Candidate,
  ConsolidationMove,
  Decision,
  DisruptMetrics,
  DisruptOptions,
  DisruptResult,
  Explanation,
  ExplanationCode,
  LoopState,
  MethodName,
} from './types.ts';
import { methodsFor } from './types.ts';
import { explanation } from './words.ts';

function reasonOf(m: MethodName): DisruptionReason {
  if (m === 'emptiness') return 'Empty';
  if (m === 'drift' || m === 'static-drift') return 'Drifted';
  return 'Underutilized';
}

const CONSOLIDATING: ReadonlySet<MethodName> = new Set(['emptiness', 'multi', 'single', 'repack']);
/** Method-filter results that only say "this method is not for this node"; a later, specific reason wins. */
const WEAK: ReadonlySet<ExplanationCode> = new Set([
  'not-drifted',
  'not-empty',
  'left-to-emptiness',
  'static-nodepool',
]);
/** A method's settings keep the node out of it (the pool's policy, consolidateAfter, missing labels). */
const FILTER: ReadonlySet<ExplanationCode> = new Set([
  'consolidation-disabled',
  'buffer-pods',
  'not-consolidatable',
  'consolidate-after',
  'when-empty-policy',
  'instance-type-not-found',
  'missing-label',
  'already-consolidated',
]);
const CANDIDACY: ReadonlySet<ExplanationCode> = new Set([
  'already-disrupting',
  'not-managed',
  'no-node',
  'not-initialized',
  'deleting',
  'nominated',
  'node-do-not-disrupt',
  'no-nodepool-label',
  'nodepool-not-found',
  'pod-do-not-disrupt',
  'pdb-blocked',
  'pdb-multiple',
]);

/**
 * How specific a reason is: a method that evaluated the node (budget, simulation, price) says more than a
 * candidacy check, which says more than a method's filter, which says more than "not for this method".
 */
function rank(code: ExplanationCode): number {
  if (WEAK.has(code)) return 0;
  if (FILTER.has(code)) return 1;
  if (CANDIDACY.has(code)) return 2;
  return 3;
}

async function run(m: MethodName, input: MethodInput): Promise<MethodOutput> {
  switch (m) {
    case 'emptiness':
      return emptiness(input);
    case 'static-drift':
      return staticDrift(input);
    case 'drift':
      return drift(input);
    case 'multi':
      return multiNode(input);
    case 'single':
      return singleNode(input);
    case 'repack': {
      const plan = await planRepack(input.s, input.candidates, input.all, input.budgets, input.r);
      const [first, ...rest] = plan.steps.map((st) => st.command);
      return {
        commands: first ? [first] : [],
        explanations: plan.explanations,
        consolidated: !first && !plan.timedOut,
        followUps: rest,
      };
    }
  }
}

/**
 * One reason per node: the most specific; between equally specific ones, the later method's (it looked last).
 * A reason without an event keeps the event of the one it replaces: Karpenter published that event when its
 * method looked (single-node's Unconsolidatable stays even when the repack has the last word).
 */
class Reasons {
  readonly byNode = new Map<string, Explanation>();
  add(e: Explanation): void {
    const cur = this.byNode.get(e.node);
    if (cur && rank(e.code) < rank(cur.code)) return;
    this.byNode.set(e.node, !e.event && cur?.event ? { ...e, event: cur.event } : e);
  }
}

export async function disrupt(s: Snapshot, opts: DisruptOptions = {}): Promise<DisruptResult> {
  const r = resolve(opts);
  const order = opts.methods ?? methodsFor(opts.repack);
  const sets = new Map<'graceful' | 'eventual', CandidateSet>();
  const setOf = (m: MethodName) => {
    const cls = m === 'drift' || m === 'static-drift' ? 'eventual' : 'graceful';
    let set = sets.get(cls);
    if (!set) sets.set(cls, (set = candidateSet(s, cls, r.queued, r.caches)));
    return set;
  };
  const reasons = new Reasons();
  for (const e of setOf('emptiness').rejected) reasons.add(e);
  let state: LoopState = r.state;
  const eligible: Partial<Record<DisruptionReason, number>> = {};
  const allowed = new Map<string, DisruptMetrics['allowedDisruptions'][number]>();
  const timeouts: Partial<Record<'single' | 'multi', number>> = {};
  const moves: ConsolidationMove[] = [];
  const metrics = (): DisruptMetrics => ({
    eligibleNodes: eligible,
    allowedDisruptions: [...allowed.values()],
    timeouts,
    ...(moves.length ? { consolidationMoves: moves } : {}),
  });
  for (const m of order) {
    const set = setOf(m);
    const reason = reasonOf(m);
    if (
      CONSOLIDATING.has(m) &&
      opts.consolidationState !== undefined &&
      state.consolidated[m] === opts.consolidationState
    ) {
      for (const c of set.all)
        reasons.add(
          explanation(
            c.node.name,
            'already-consolidated',
            'nothing changed since consolidation last found nothing to do',
          ),
        );
      continue;
    }
    const candidates: Candidate[] = [];
    for (const c of set.all) {
      const e = methodFilter(m, c, s.now);
      if (e) reasons.add(e);
      else candidates.push(c);
    }
    eligible[reason] = candidates.length;
    if (!candidates.length) continue;
    const budgets = budgetMapping(s, reason);
    for (const b of budgets.values())
      allowed.set(`${b.nodePool}/${reason}`, {
        nodePool: b.nodePool,
        reason,
        allowed: b.allowed,
        disrupting: b.disrupting,
      });
    const sorted = m === 'drift' || m === 'static-drift' ? candidates : bySavingsRatio(candidates);
    const out = await run(m, { s, candidates: sorted, all: set.all, budgets, r });
    for (const e of out.explanations) reasons.add(e);
    if (out.timedOut && (m === 'single' || m === 'multi')) timeouts[m] = (timeouts[m] ?? 0) + 1;
    if (out.moves) moves.push(...out.moves);
    state = nextState(state, m, out, opts.consolidationState);
    const [first, ...concurrent] = out.commands;
    if (!first) continue;
    const involved = new Set(out.commands.flatMap((c) => c.candidates.map((x) => x.name)));
    const decision: Decision = {
      ...first,
      explanations: explainRest(s, reasons, involved, `another disruption was chosen this loop (${m})`, true),
      ...(concurrent.length ? { concurrent } : {}),
      ...(out.followUps?.length ? { followUps: out.followUps } : {}),
      ...(out.approvals?.size ? { approvals: Object.fromEntries(out.approvals) } : {}),
      ...truncated(r),
    };
    return { decision, state, metrics: metrics() };
  }
  return {
    decision: {
      kind: 'noop',
      explanations: explainRest(s, reasons, new Set(), 'no disruption method considered it'),
      ...truncated(r),
    },
    state,
    metrics: metrics(),
  };
}

/** `truncated: true` when a wall-clock safety net fired during the call (Decision.truncated). */
function truncated(r: Resolved): { truncated?: true } {
  return r.truncation.fired ? { truncated: true } : {};
}

function nextState(state: LoopState, m: MethodName, out: MethodOutput, version: number | undefined): LoopState {
  let next = state;
  if (out.consolidated && version !== undefined && CONSOLIDATING.has(m))
    next = { ...next, consolidated: { ...next.consolidated, [m]: version } };
  if (out.unseenPools) next = { ...next, previouslyUnseenPools: out.unseenPools };
  return next;
}

/**
 * One explanation per node not in the decision; nodes no method reasoned about get `fallback` (as do nodes
 * with only a "not for this method" reason, when a decision was made before other methods looked at them).
 */
function explainRest(
  s: Snapshot,
  reasons: Reasons,
  involved: ReadonlySet<string>,
  fallback: string,
  decided = false,
): Explanation[] {
  const out: Explanation[] = [];
  for (const n of s.nodes) {
    if (involved.has(n.name)) continue;
    const e = reasons.byNode.get(n.name);
    out.push(e && !(decided && WEAK.has(e.code)) ? e : explanation(n.name, 'not-evaluated', fallback));
  }
  return out;
}
