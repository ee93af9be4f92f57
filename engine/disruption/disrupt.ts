// engine.disrupt: one loop of the disruption controller (docs/karpenter/disruption.md §1.2 steps 5-6) over a snapshot.
// The methods run in order and the first that yields a command wins; every node not disrupted gets a reason.
// The caller owns the loop state (consolidated markers, previously unseen pools) and passes it back in.
import type { DisruptionReason, Snapshot } from '../domain/types.ts';
import { budgetMapping, type PoolBudget } from './budgets.ts';
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
  const setOf = candidateSets(s, r);
  const reasons = new Reasons();
  for (const e of setOf('emptiness').rejected) reasons.add(e);
  let state: LoopState = r.state;
  const tally = new LoopTally();
  for (const m of order) {
    const set = setOf(m);
    if (unchangedSinceConsolidated(m, opts.consolidationState, state)) {
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
    const reason = reasonOf(m);
    const candidates = passingFilters(m, set, s.now, reasons);
    tally.eligible(reason, candidates.length);
    if (!candidates.length) continue;
    const budgets = budgetMapping(s, reason);
    tally.budgets(reason, budgets);
    const sorted = m === 'drift' || m === 'static-drift' ? candidates : bySavingsRatio(candidates);
    const out = await run(m, { s, candidates: sorted, all: set.all, budgets, r });
    for (const e of out.explanations) reasons.add(e);
    tally.ran(m, out);
    state = nextState(state, m, out, opts.consolidationState);
    if (!out.commands.length) continue;
    return { decision: decisionOf(s, m, out, reasons, r), state, metrics: tally.metrics() };
  }
  return {
    decision: {
      kind: 'noop',
      explanations: explainRest(s, reasons, new Set(), 'no disruption method considered it'),
      ...truncated(r),
    },
    state,
    metrics: tally.metrics(),
  };
}

/** The candidate set of a method's class (graceful or eventual), each built once, when first asked for. */
function candidateSets(s: Snapshot, r: Resolved): (m: MethodName) => CandidateSet {
  const sets = new Map<'graceful' | 'eventual', CandidateSet>();
  return (m) => {
    const cls = m === 'drift' || m === 'static-drift' ? 'eventual' : 'graceful';
    let set = sets.get(cls);
    if (!set) sets.set(cls, (set = candidateSet(s, cls, r.queued, r.caches)));
    return set;
  };
}

/** A consolidating method that found nothing to do at this consolidation state, which has not changed since. */
function unchangedSinceConsolidated(m: MethodName, version: number | undefined, state: LoopState): boolean {
  return CONSOLIDATING.has(m) && version !== undefined && state.consolidated[m] === version;
}

/** The candidates the method's filter lets through; each one it keeps out gets its reason. */
function passingFilters(m: MethodName, set: CandidateSet, now: number, reasons: Reasons): Candidate[] {
  const candidates: Candidate[] = [];
  for (const c of set.all) {
    const e = methodFilter(m, c, now);
    if (e) reasons.add(e);
    else candidates.push(c);
  }
  return candidates;
}

/** The decision of the method whose commands won: its first, the rest beside it, and every other node's reason. */
function decisionOf(s: Snapshot, m: MethodName, out: MethodOutput, reasons: Reasons, r: Resolved): Decision {
  const [first, ...concurrent] = out.commands;
  const involved = new Set(out.commands.flatMap((c) => c.candidates.map((x) => x.name)));
  return {
    ...first!,
    explanations: explainRest(s, reasons, involved, `another disruption was chosen this loop (${m})`, true),
    ...(concurrent.length ? { concurrent } : {}),
    ...(out.followUps?.length ? { followUps: out.followUps } : {}),
    ...(out.approvals?.size ? { approvals: Object.fromEntries(out.approvals) } : {}),
    ...truncated(r),
  };
}

/** What a loop reports beside its decision: eligible nodes, allowed disruptions, method timeouts, scored moves. */
class LoopTally {
  private readonly eligibleNodes: Partial<Record<DisruptionReason, number>> = {};
  private readonly allowed = new Map<string, DisruptMetrics['allowedDisruptions'][number]>();
  private readonly timeouts: Partial<Record<'single' | 'multi', number>> = {};
  private readonly moves: ConsolidationMove[] = [];

  eligible(reason: DisruptionReason, n: number): void {
    this.eligibleNodes[reason] = n;
  }

  budgets(reason: DisruptionReason, budgets: ReadonlyMap<string, PoolBudget>): void {
    for (const b of budgets.values())
      this.allowed.set(`${b.nodePool}/${reason}`, {
        nodePool: b.nodePool,
        reason,
        allowed: b.allowed,
        disrupting: b.disrupting,
      });
  }

  ran(m: MethodName, out: MethodOutput): void {
    if (out.timedOut && (m === 'single' || m === 'multi')) this.timeouts[m] = (this.timeouts[m] ?? 0) + 1;
    if (out.moves) this.moves.push(...out.moves);
  }

  metrics(): DisruptMetrics {
    return {
      eligibleNodes: this.eligibleNodes,
      allowedDisruptions: [...this.allowed.values()],
      timeouts: this.timeouts,
      ...(this.moves.length ? { consolidationMoves: this.moves } : {}),
    };
  }
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
