// Multi-node consolidation (docs/karpenter/disruption.md §2.4): the largest prefix of the ratio-ordered, budget-filtered
// candidates (at least two) that can go at once, deleted or replaced by one cheaper node, found by binary
// search under a deadline.
import { fromLabels } from '../scheduling/requirements.ts';
import { approvalMessage, evaluateBalancedMove, movesOf, nodePoolTotals, type BalancedEvaluation } from './balanced.ts';
import { budgetExplanation } from './budgets.ts';
import { computeConsolidation } from './consolidation.ts';
import type { MethodInput, MethodOutput } from './method.ts';
import { claimOptions, claimRequirements, filterByPrice, unmetMinValues, withOptions } from './pricing.ts';
import type { ModelCaches } from '../model/caches.ts';
import { offeringAllowed } from '../model/templates.ts';
import type { Snapshot } from '../domain/types.ts';
import type { Candidate, Command, Explanation } from './types.ts';

/**
 * Never replace several nodes by one node of a type being removed unless it is strictly cheaper than the
 * cheapest such node: drop every option whose worst-case launch price is not below that price. Returns the
 * command with the remaining options, or undefined when none remain or minValues fails.
 */
function filterOutSameInstanceType(
  s: Snapshot,
  candidates: readonly Candidate[],
  cmd: Command,
  caches?: ModelCaches,
): Command | undefined {
  const claim = cmd.replacements[0];
  if (!claim) return cmd;
  const prices = new Map<string, number>();
  for (const c of candidates) {
    if (!c.instanceType) continue;
    const labels = fromLabels(c.node.labels);
    let cheapest: number | undefined;
    for (const o of c.instanceType.offerings) {
      if (!offeringAllowed(labels, { ...o, available: true })) continue;
      if (cheapest === undefined || o.price < cheapest) cheapest = o.price;
    }
    if (cheapest === undefined) continue;
    const cur = prices.get(c.instanceType.name);
    if (cur === undefined || cheapest < cur) prices.set(c.instanceType.name, cheapest);
  }
  let maxPrice = Infinity;
  for (const o of claim.instanceTypes) {
    const p = prices.get(o.name);
    if (p !== undefined) maxPrice = Math.min(maxPrice, p);
  }
  if (maxPrice === Infinity) return cmd;
  const reqs = claimRequirements(claim);
  const kept = filterByPrice(reqs, claimOptions(claim, s.instanceTypes, caches), maxPrice);
  if (!kept.length || unmetMinValues(reqs, kept)) return undefined;
  const replacement = withOptions(claim, reqs, kept);
  return { ...cmd, replacements: [replacement], savingsPerHour: cmd.savingsPerHour + claim.price - replacement.price };
}

export async function multiNode({ s, candidates, all, budgets, r }: MethodInput): Promise<MethodOutput> {
  const { kept, explanations, constrained } = withinBudgets(s, candidates, budgets);
  if (kept.length < 2) return { commands: [], explanations, consolidated: !constrained };
  const found = await search(s, kept, nodePoolTotals(s, all, r.poolCosts), r);
  if (found.best) {
    const approvals = new Map([...found.best.ev.perPool].map(([pool, sc]) => [pool, approvalMessage(sc, r.k)]));
    const moves = movesOf(found.best.prefix, found.best.ev, 'approved');
    return {
      commands: [found.best.cmd],
      explanations,
      consolidated: false,
      timedOut: found.timedOut,
      approvals,
      moves,
    };
  }
  // Rejections are counted once, for the last (smallest) window Balanced scoring turned down.
  const moves = found.rejected ? movesOf(found.rejected.prefix, found.rejected.ev, 'rejected') : [];
  return { commands: [], explanations, consolidated: !constrained && !found.timedOut, timedOut: found.timedOut, moves };
}

/** The candidates in order, as far as each pool's budget goes (the kept list respects every pool's budget). */
function withinBudgets(
  s: Snapshot,
  candidates: readonly Candidate[],
  budgets: MethodInput['budgets'],
): { kept: Candidate[]; explanations: Explanation[]; constrained: boolean } {
  const left = new Map([...budgets].map(([k, v]) => [k, v.available]));
  const kept: Candidate[] = [];
  const explanations: Explanation[] = [];
  let constrained = false;
  for (const c of candidates) {
    const n = left.get(c.nodePool.name) ?? 0;
    if (n <= 0) {
      constrained = true;
      const pb = budgets.get(c.nodePool.name);
      if (pb) explanations.push(budgetExplanation(c.node.name, pb, s.now, pb.available - n));
      continue;
    }
    left.set(c.nodePool.name, n - 1);
    kept.push(c);
  }
  return { kept, explanations, constrained };
}

interface Found {
  readonly best?: { readonly cmd: Command; readonly prefix: readonly Candidate[]; readonly ev: BalancedEvaluation };
  /** The last prefix Balanced scoring rejected (a valid move otherwise). */
  readonly rejected?: { readonly prefix: readonly Candidate[]; readonly ev: BalancedEvaluation };
  readonly timedOut: boolean;
}

/** Binary search for the largest prefix (at least two nodes) that consolidates, under the deadline. */
async function search(
  s: Snapshot,
  kept: readonly Candidate[],
  totals: ReturnType<typeof nodePoolTotals>,
  r: MethodInput['r'],
): Promise<Found> {
  const max = Math.min(kept.length, r.multiNodeCap);
  let lo = 1;
  // Karpenter's bound: with more candidates than the cap the prefix can reach cap + 1 nodes (§2.4).
  let hi = kept.length <= max ? kept.length - 1 : max;
  let best: Found['best'];
  let rejected: Found['rejected'];
  const start = r.elapsedMs();
  while (lo <= hi) {
    if (r.elapsedMs() - start >= r.multiNodeTimeoutMs)
      return { ...(best ? { best } : {}), ...(rejected ? { rejected } : {}), timedOut: true };
    const mid = Math.floor((lo + hi) / 2);
    const prefix = kept.slice(0, mid + 1);
    const out = await computeConsolidation(s, prefix, { ...r.sim, method: 'multi' });
    let cmd = out.kind === 'command' ? out.command : undefined;
    if (cmd && cmd.kind === 'replace') cmd = filterOutSameInstanceType(s, prefix, cmd, r.caches);
    if (cmd) {
      const ev = evaluateBalancedMove(prefix, cmd.savingsPerHour, totals, r.k);
      if (!ev.approved && ev.perPool.size > 0) {
        rejected = { prefix, ev };
        cmd = undefined;
      } else {
        best = { cmd, prefix, ev };
      }
    }
    if (cmd) lo = mid + 1;
    else hi = mid - 1;
  }
  return { ...(best ? { best } : {}), ...(rejected ? { rejected } : {}), timedOut: false };
}
