// The global repack (beyond Karpenter): re-solve the pods of many disruptable nodes together and replace N
// nodes by M (M may be 0, 1 or several, so one big node can become two cheaper ones), when it saves money.
// repacksearch.ts decides which nodes to remove (within a deadline), repackunits.ts cuts a simulation into
// independent units and prices them, repackeval.ts evaluates candidate sets, and this file cuts the chosen layout into
// steps: each step's candidates fit every pool's budget at the time it runs (later steps are planned on the
// snapshot after the earlier ones), and the first step is the command to run now. Design: docs/disruption.md.
import type { Snapshot } from '../domain/types.ts';
import type { ModelCaches } from '../model/caches.ts';
import { provisionInput } from '../model/input.ts';
import type { NewNodeClaimPlan, ProvisionInput, ProvisionPlan } from '../model/types.ts';
import { applyCommand } from './apply.ts';
import { nodePoolTotals } from './balanced.ts';
import { budgetExplanation, budgetMapping, type PoolBudget } from './budgets.ts';
import { bySavingsRatio, managedPools, newCandidate } from './candidates.ts';
import { makeCommand } from './command.ts';
import type { Resolved } from './method.ts';
import { priceOf, Search, type Evaluation } from './repackeval.ts';
import { byWaste, searchLayout } from './repacksearch.ts';
import { claimsOf, type Unit } from './repackunits.ts';
import type { Simulation } from './simulate.ts';
import type { Candidate, Command, Explanation } from './types.ts';
import { explanation, usd } from './words.ts';

interface RepackStep {
  readonly command: Command;
  /**
   * What the step was solved against and the plan it carries out, for verifyPlan (tests check every step).
   * Built when asked: a decision carries only the command, and building these looks up every moved pod by uid
   * and copies the node list, for each step of every repack.
   */
  verification(): { readonly input: ProvisionInput; readonly plan: ProvisionPlan };
}

interface RepackPlan {
  readonly steps: readonly RepackStep[];
  readonly explanations: readonly Explanation[];
  /** Simulations run. */
  readonly evaluations: number;
  /** The search deadline fired and work was skipped (the plan may depend on the machine's load). */
  readonly timedOut: boolean;
}

const MAX_STEPS = 50;

export async function planRepack(
  s: Snapshot,
  eligible: readonly Candidate[],
  all: readonly Candidate[],
  budgets: ReadonlyMap<string, PoolBudget>,
  r: Resolved,
): Promise<RepackPlan> {
  const search = new Search(r, nodePoolTotals(s, all, r.poolCosts));
  const start = r.elapsedMs();
  // The deadline is a safety net (the search is bounded by its solves): every caller skips work when it fires.
  let cut = false;
  const late = () => {
    if (r.elapsedMs() - start < r.repackDeadlineMs) return false;
    cut = r.truncation.fired = true;
    return true;
  };
  const ordered = byWaste(eligible.filter((c) => (budgets.get(c.nodePool.name)?.available ?? 0) > 0));
  const explanations: Explanation[] = [];
  for (const c of eligible) {
    const pb = budgets.get(c.nodePool.name);
    if (pb && pb.available <= 0) explanations.push(budgetExplanation(c.node.name, pb, s.now));
  }
  if (!ordered.length) return { steps: [], explanations, evaluations: 0, timedOut: false };
  const best = await searchLayout(s, ordered, search, late);
  const smallOf = new Map((best?.small ?? []).flatMap((u) => u.candidates.map((c) => [c.node.name, u] as const)));
  const explainKept = (c: Candidate, none: string) => {
    const u = smallOf.get(c.node.name);
    if (!u) return explanations.push(explanation(c.node.name, 'no-saving-repack', none));
    const price = priceOf(u.candidates);
    const share = u.guaranteed / price;
    explanations.push(
      explanation(
        c.node.name,
        'small-saving-repack',
        `the best repack including this node (${u.candidates.length === 1 ? 'it alone' : `${u.candidates.length} nodes`}, ${usd(price)}) saves only ${(share * 100).toFixed(1)}% (${usd(u.guaranteed)}), below the minimum of ${(search.r.repackMinSavingsShare * 100).toFixed(1)}%`,
        {
          nodes: u.candidates.length,
          pricePerHour: price,
          savingsPerHour: u.guaranteed,
          share,
          minShare: search.r.repackMinSavingsShare,
        },
      ),
    );
  };
  if (!best || !best.units.length) {
    for (const c of ordered) explainKept(c, "repacking its pods with other nodes' pods finds no cheaper layout");
    return { steps: [], explanations, evaluations: search.evaluations, timedOut: cut };
  }
  const steps = await cutIntoSteps(s, best, budgets, search, late);
  const moved = new Set(steps.flatMap((st) => st.command.candidates.map((c) => c.name)));
  for (const c of ordered)
    if (!moved.has(c.node.name)) explainKept(c, 'no repack step including this node saves money within the budgets');
  return { steps, explanations, evaluations: search.evaluations, timedOut: cut };
}

function counts(cs: readonly Candidate[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const c of cs) m.set(c.nodePool.name, (m.get(c.nodePool.name) ?? 0) + 1);
  return m;
}

function available(budgets: ReadonlyMap<string, PoolBudget>): Map<string, number> {
  return new Map([...budgets].map(([k, v]) => [k, v.available]));
}

function fitsBudget(cs: readonly Candidate[], left: Map<string, number>): boolean {
  for (const [pool, n] of counts(cs)) if (n > (left.get(pool) ?? 0)) return false;
  return true;
}

/** One command (and, on demand, its verification input/plan) from units of one simulation. */
function stepOf(s: Snapshot, units: readonly Unit[], sim: Simulation): RepackStep {
  const cands = units.flatMap((u) => u.candidates);
  const claims: NewNodeClaimPlan[] = units.flatMap(claimsOf);
  const command = makeCommand('Underutilized', 'repack', cands, claims, sim.plan);
  return { command, verification: () => verificationOf(s, cands, claims, command, sim) };
}

/** The input a step's command was solved against (its candidates marked) and the plan it carries out. */
function verificationOf(
  s: Snapshot,
  cands: readonly Candidate[],
  claims: readonly NewNodeClaimPlan[],
  command: Command,
  sim: Simulation,
): { input: ProvisionInput; plan: ProvisionPlan } {
  const names = new Set(cands.map((c) => c.node.name));
  const uids = new Set([...claims.flatMap((k) => k.pods), ...command.podsMoved.map((m) => m.uid)]);
  const pods = [...uids].map((u) => sim.pods.get(u)!).filter(Boolean);
  const nodes = s.nodes.map((n) => (names.has(n.name) ? { ...n, markedForDeletion: true } : n));
  const input = provisionInput({ ...s, nodes }, pods, {
    consolidation: sim.input.consolidation ?? { blockedDestinations: new Set(), movedPods: new Set() },
  });
  const existing = new Map<string, string[]>();
  for (const m of command.podsMoved) {
    if (m.to.startsWith('replacement:')) continue;
    const uids = existing.get(m.to);
    if (uids) uids.push(m.uid);
    else existing.set(m.to, [m.uid]);
  }
  const plan: ProvisionPlan = {
    existing,
    newNodeClaims: claims,
    unschedulable: [],
    ignored: [],
    costPerHour: claims.reduce((a, k) => a + k.price, 0),
  };
  return { input, plan };
}

/**
 * Cuts the chosen layout into steps within budgets: units that fit go first (grouped while the budgets of
 * the moment allow), each planned against the snapshot after the previous step; a unit larger than a
 * pool's budget is re-solved in budget-sized chunks of its candidates.
 */
async function cutIntoSteps(
  s: Snapshot,
  best: Evaluation,
  budgets: ReadonlyMap<string, PoolBudget>,
  search: Search,
  late: () => boolean,
): Promise<RepackStep[]> {
  const steps: RepackStep[] = [];
  let working = s;
  let pending = [...best.units].sort((a, b) => b.savings / b.disruption - a.savings / a.disruption);
  const oversized: Candidate[] = [];
  while (pending.length && steps.length < MAX_STEPS) {
    const left = available(steps.length ? budgetMapping(working, 'Underutilized') : budgets);
    const take: Unit[] = [];
    for (const u of pending) {
      if (!fitsBudget(u.candidates, left)) continue;
      for (const [pool, n] of counts(u.candidates)) left.set(pool, left.get(pool)! - n);
      take.push(u);
    }
    if (!take.length) break;
    pending = pending.filter((u) => !take.includes(u));
    const step = stepOf(working, take, best.sim);
    steps.push(step);
    // The snapshot after the step, only when a later step is planned on it.
    if (pending.length) working = applyCommand(working, step.command);
  }
  for (const u of pending) oversized.push(...u.candidates);
  let rest = bySavingsRatio(oversized);
  while (rest.length && steps.length < MAX_STEPS && !late()) {
    const left = available(steps.length ? budgetMapping(working, 'Underutilized') : budgets);
    const chunk: Candidate[] = [];
    for (const c of rest) {
      const n = left.get(c.nodePool.name) ?? 0;
      if (n <= 0) continue;
      left.set(c.nodePool.name, n - 1);
      chunk.push(c);
    }
    if (!chunk.length) break;
    rest = rest.filter((c) => !chunk.includes(c));
    const fresh = refresh(working, chunk, search.r.caches);
    // The rest of the layout's nodes go in later steps: pods moved now must not land on them (and move twice).
    const later = new Set(rest.map((c) => c.node.name));
    const ev = fresh.length ? await search.evaluateMovable(working, fresh, Infinity, later) : undefined;
    if (!ev || !ev.units.length) continue;
    const step = stepOf(working, ev.units, ev.sim);
    steps.push(step);
    if (rest.length) working = applyCommand(working, step.command);
  }
  return steps;
}

/**
 * The candidates as they are in the working snapshot: earlier steps may have moved pods onto them, so their
 * pods and costs are rebuilt; nodes that are gone or no longer candidates are dropped.
 */
function refresh(working: Snapshot, cs: readonly Candidate[], caches: ModelCaches): Candidate[] {
  const byName = new Map(working.nodes.map((n) => [n.name, n]));
  const pools = managedPools(working);
  const out: Candidate[] = [];
  for (const c of cs) {
    const n = byName.get(c.node.name);
    const r = n && newCandidate(working, n, 'graceful', pools, undefined, caches);
    if (r?.ok) out.push(r.candidate);
  }
  return out;
}
