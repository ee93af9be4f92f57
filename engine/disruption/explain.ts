// engine.explainNode: "what would you do with node X, and why?". The node goes through
// the same checks a disruption loop applies to it alone: candidacy, the method filter, the budget, the
// Balanced pre-filter, and the single-node simulation, and the first thing that stops it is the answer.
import type { NodePool, Snapshot, StateNode } from '../domain/types.ts';
import { couldApprove, evaluateBalancedMove, nodePoolTotals } from './balanced.ts';
import { budgetExplanation, budgetMapping } from './budgets.ts';
import { candidateSet, managedPools, newCandidate } from './candidates.ts';
import { makeCommand } from './command.ts';
import { computeConsolidation } from './consolidation.ts';
import { consolidationFilter, driftFilter, emptinessFilter } from './filters.ts';
import { resolve, type Resolved } from './method.ts';
import { describeErrors, simulate } from './simulate.ts';
import type { Candidate, Command, DisruptOptions, Explanation } from './types.ts';
import { explanation, usd } from './words.ts';

export type NodeReport =
  | { readonly node: string; readonly disruptable: false; readonly explanation: Explanation }
  | { readonly node: string; readonly disruptable: true; readonly command: Command; readonly message: string };

const kept = (e: Explanation): NodeReport => ({ node: e.node, disruptable: false, explanation: e });

function would(cmd: Command): NodeReport {
  const what =
    cmd.kind === 'delete'
      ? 'deleted'
      : `replaced by ${cmd.replacements[0]?.instanceTypes[0]?.name ?? 'a new node'}${cmd.replacements.length > 1 ? ` and ${cmd.replacements.length - 1} more` : ''}`;
  return {
    node: cmd.candidates[0]!.name,
    disruptable: true,
    command: cmd,
    message: `would be ${what} (${cmd.reason}), saving ${usd(cmd.savingsPerHour)}, moving ${cmd.podsMoved.length} pods`,
  };
}

export async function explainNode(s: Snapshot, name: string, opts: DisruptOptions = {}): Promise<NodeReport> {
  const node = s.nodes.find((n) => n.name === name);
  if (!node) throw new Error(`explainNode: the snapshot has no node named "${name}"`);
  const r = resolve(opts);
  const pools = managedPools(s);
  if (
    node.conditions.drifted &&
    node.nodePoolName !== undefined &&
    pools.get(node.nodePoolName)?.replicas === undefined
  )
    return explainDrifted(s, node, pools, r);
  const c = newCandidate(s, node, 'graceful', pools, r.queued, r.caches);
  if (!c.ok) return kept(c.explanation);
  return c.candidate.empty ? explainEmpty(s, c.candidate) : explainUnderutilized(s, c.candidate, r);
}

/** A drifted node of a dynamic pool: drift's candidacy, filter and budget, then whether its pods schedule elsewhere. */
async function explainDrifted(
  s: Snapshot,
  node: StateNode,
  pools: ReadonlyMap<string, NodePool>,
  r: Resolved,
): Promise<NodeReport> {
  const name = node.name;
  const c = newCandidate(s, node, 'eventual', pools, r.queued, r.caches);
  if (!c.ok) return kept(c.explanation);
  const f = driftFilter(c.candidate);
  if (f) return kept(f);
  const pb = budgetMapping(s, 'Drifted').get(c.candidate.nodePool.name);
  if (!pb || pb.available <= 0)
    return kept(
      budgetExplanation(
        name,
        pb ?? {
          nodePool: c.candidate.nodePool.name,
          reason: 'Drifted',
          numNodes: 0,
          disrupting: 0,
          allowed: 0,
          available: 0,
        },
        s.now,
      ),
    );
  const sim = await simulate(s, [node], r.sim, false);
  if (sim.errors.size)
    return kept(
      explanation(
        name,
        'pods-would-not-schedule',
        `drifted, but its pods would not schedule elsewhere: ${describeErrors(sim)}`,
      ),
    );
  return would(makeCommand('Drifted', 'drift', [c.candidate], sim.plan.newNodeClaims, sim.plan));
}

/** An empty candidate: emptiness's filter and its pool's Empty budget. */
function explainEmpty(s: Snapshot, cand: Candidate): NodeReport {
  const f = emptinessFilter(cand, s.now);
  if (f) return kept(f);
  const pb = budgetMapping(s, 'Empty').get(cand.nodePool.name)!;
  if (pb.available <= 0) return kept(budgetExplanation(cand.node.name, pb, s.now));
  return would(makeCommand('Empty', 'emptiness', [cand], []));
}

/**
 * A candidate with pods: consolidation's filter, its pool's Underutilized budget, the Balanced pre-filter, the
 * single-node simulation, and the Balanced score of the move it finds.
 */
async function explainUnderutilized(s: Snapshot, cand: Candidate, r: Resolved): Promise<NodeReport> {
  const name = cand.node.name;
  const f = consolidationFilter(cand, s.now);
  if (f) return kept(f);
  const pb = budgetMapping(s, 'Underutilized').get(cand.nodePool.name)!;
  if (pb.available <= 0) return kept(budgetExplanation(name, pb, s.now));
  const totals = nodePoolTotals(s, candidateSet(s, 'graceful', r.queued, r.caches).all, r.poolCosts);
  if (!couldApprove(cand, totals, r.k)) {
    return kept(
      explanation(
        name,
        'balanced-rejected',
        `even deleting it (saving ${usd(cand.price)}) would not reach the Balanced threshold ${(1 / r.k).toFixed(2)}`,
      ),
    );
  }
  const out = await computeConsolidation(s, [cand], { ...r.sim, method: 'single' });
  if (out.kind === 'noop') {
    const ev =
      out.why.eventMessage !== undefined
        ? { reason: 'Unconsolidatable' as const, message: out.why.eventMessage }
        : undefined;
    return kept(explanation(name, out.why.code, out.why.message, { ...out.why.data }, ev));
  }
  const ev = evaluateBalancedMove([cand], out.command.savingsPerHour, totals, r.k);
  if (!ev.approved && ev.perPool.size > 0) {
    const sc = ev.perPool.get(cand.nodePool.name)!;
    return kept(
      explanation(name, 'balanced-rejected', `Balanced score ${sc.score.toFixed(2)} is below ${(1 / r.k).toFixed(2)}`, {
        score: sc.score,
      }),
    );
  }
  return would(out.command);
}
