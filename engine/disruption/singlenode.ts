// Single-node consolidation (docs/karpenter/disruption.md §2.3): candidates one at a time, interleaved across pools so
// every pool gets a turn before the deadline; the first node that can be deleted or replaced by one cheaper
// node (and that Balanced pools approve) is the command.
import { interleave } from './candidates.ts';
import { approvalMessage, couldApprove, evaluateBalancedMove, movesOf, nodePoolTotals } from './balanced.ts';
import { budgetExplanation } from './budgets.ts';
import { computeConsolidation } from './consolidation.ts';
import type { MethodInput, MethodOutput } from './method.ts';
import type { ConsolidationMove, Explanation } from './types.ts';
import { explanation, usd } from './words.ts';

export async function singleNode({ s, candidates, all, budgets, r }: MethodInput): Promise<MethodOutput> {
  const ordered = interleave(candidates, r.state.previouslyUnseenPools);
  const totals = nodePoolTotals(s, all, r.poolCosts);
  const explanations: Explanation[] = [];
  // Every move computed and scored (Karpenter counts them before validation, Balanced or not).
  const moves: ConsolidationMove[] = [];
  const seen = new Set<string>();
  let constrained = false;
  const start = r.elapsedMs();
  for (const c of ordered) {
    if (r.elapsedMs() - start >= r.singleNodeTimeoutMs) {
      const unseenPools = [...new Set(ordered.map((x) => x.nodePool.name))].filter((p) => !seen.has(p));
      for (const x of ordered.slice(ordered.indexOf(c)))
        explanations.push(
          explanation(x.node.name, 'timeout', 'single-node consolidation ran out of time before reaching this node'),
        );
      return { commands: [], explanations, consolidated: false, timedOut: true, unseenPools, moves };
    }
    seen.add(c.nodePool.name);
    const pb = budgets.get(c.nodePool.name);
    if (!pb || pb.available <= 0) {
      constrained = true;
      if (pb) explanations.push(budgetExplanation(c.node.name, pb, s.now));
      continue;
    }
    if (!couldApprove(c, totals, r.k)) {
      explanations.push(
        explanation(
          c.node.name,
          'balanced-rejected',
          `even deleting it (saving ${usd(c.price)}) would not reach the Balanced threshold ${(1 / r.k).toFixed(2)}`,
          { k: r.k },
        ),
      );
      continue;
    }
    const out = await computeConsolidation(s, [c], { ...r.sim, method: 'single' });
    if (out.kind === 'noop') {
      const ev =
        out.why.eventMessage !== undefined
          ? { reason: 'Unconsolidatable' as const, message: out.why.eventMessage }
          : undefined;
      explanations.push(explanation(c.node.name, out.why.code, out.why.message, { ...out.why.data }, ev));
      continue;
    }
    const ev = evaluateBalancedMove([c], out.command.savingsPerHour, totals, r.k);
    moves.push(...movesOf([c], ev, ev.approved ? 'approved' : 'rejected'));
    if (!ev.approved && ev.perPool.size > 0) {
      const sc = ev.perPool.get(c.nodePool.name)!;
      explanations.push(
        explanation(
          c.node.name,
          'balanced-rejected',
          `Balanced score ${sc.score.toFixed(2)} is below ${(1 / r.k).toFixed(2)} (saves ${usd(out.command.savingsPerHour)}, ${(sc.savingsFraction * 100).toFixed(1)}% of the pool's cost, for ${(sc.disruptionFraction * 100).toFixed(1)}% of its disruption)`,
          { score: sc.score, k: r.k },
        ),
      );
      continue;
    }
    const approvals = new Map([...ev.perPool].map(([p, sc]) => [p, approvalMessage(sc, r.k)]));
    return { commands: [out.command], explanations, consolidated: false, unseenPools: [], approvals, moves };
  }
  return { commands: [], explanations, consolidated: !constrained, unseenPools: [], moves };
}
