// The Balanced consolidation policy (docs/karpenter/disruption.md §2.6): a move is worth it when the share of the
// pool's cost it saves is at least 1/k of the share of the pool's disruption cost it causes.
//
//   score = (savings / pool cost) / (move disruption / pool disruption)      approve iff score >= 1/k
//
// Only pools with consolidationPolicy Balanced are scored; other pools in the same move pass.
import type { Snapshot } from '../domain/types.ts';
import { isActive, isOwnedByDaemonSet } from '../scheduling/pods.ts';
import { evictionCost } from './pods.ts';
import type { Candidate, ConsolidationMove } from './types.ts';

export const DEFAULT_K = 2;
const EPS = 1e-9;

export interface PoolTotals {
  readonly totalCost: number;
  readonly totalDisruptionCost: number;
}

/**
 * Per pool: the cost (the cost tracker's figure when positive, else Σ candidate prices) and the disruption
 * cost of every node (a candidate's RescheduleDisruptionCost, else 1 + Σ positive eviction costs of its
 * non-DaemonSet pods). `all` are the candidates before the method filter.
 */
export function nodePoolTotals(
  s: Snapshot,
  all: readonly Candidate[],
  poolCosts?: ReadonlyMap<string, number>,
): Map<string, PoolTotals> {
  const byNode = new Map(all.map((c) => [c.node.name, c]));
  const cost = new Map<string, number>();
  for (const c of all) {
    const p = Number.isFinite(c.price) ? c.price : 0;
    cost.set(c.nodePool.name, (cost.get(c.nodePool.name) ?? 0) + p);
  }
  const disruption = new Map<string, number>();
  for (const n of s.nodes) {
    if (n.nodePoolName === undefined) continue;
    const c = byNode.get(n.name);
    let d = c?.disruptionCost;
    if (d === undefined) {
      d = 1;
      for (const p of n.pods) if (isActive(p) && !isOwnedByDaemonSet(p)) d += Math.max(0, evictionCost(p));
    }
    disruption.set(n.nodePoolName, (disruption.get(n.nodePoolName) ?? 0) + d);
  }
  const out = new Map<string, PoolTotals>();
  for (const pool of s.nodePools) {
    if (!cost.has(pool.name) && !disruption.has(pool.name)) continue;
    const tracked = poolCosts?.get(pool.name);
    out.set(pool.name, {
      totalCost: tracked !== undefined && tracked > 0 ? tracked : (cost.get(pool.name) ?? 0),
      totalDisruptionCost: disruption.get(pool.name) ?? 0,
    });
  }
  return out;
}

/** The score of a move with these savings and this disruption against the pool totals. */
export function scoreMove(savings: number, disruption: number, totals: PoolTotals): number {
  if (!(totals.totalCost > 0) || !(totals.totalDisruptionCost > 0) || !(savings > 0) || Number.isNaN(savings)) return 0;
  const df = disruption / totals.totalDisruptionCost;
  if (df <= 0) return Infinity;
  return savings / totals.totalCost / df;
}

export function approves(score: number, k: number): boolean {
  return score >= 1 / k - EPS;
}

interface PoolScore {
  readonly score: number;
  readonly approved: boolean;
  readonly savings: number;
  readonly disruption: number;
  readonly savingsFraction: number;
  readonly disruptionFraction: number;
}

export interface BalancedEvaluation {
  readonly approved: boolean;
  /** Balanced pools only. */
  readonly perPool: ReadonlyMap<string, PoolScore>;
}

/**
 * Scores a move (its candidates and estimated savings) per Balanced pool: a move spanning pools gives each
 * pool the share of the savings its candidates' prices make up. Every Balanced pool must approve.
 */
export function evaluateBalancedMove(
  candidates: readonly Candidate[],
  savings: number,
  totals: ReadonlyMap<string, PoolTotals>,
  k = DEFAULT_K,
): BalancedEvaluation {
  const perPool = new Map<string, PoolScore>();
  if (candidates.length === 0) return { approved: false, perPool };
  const price = (c: Candidate) => (Number.isFinite(c.price) ? c.price : 0);
  const totalPrice = candidates.reduce((a, c) => a + price(c), 0);
  let approved = true;
  const pools = new Map<string, Candidate[]>();
  for (const c of candidates) {
    const cs = pools.get(c.nodePool.name);
    if (cs) cs.push(c);
    else pools.set(c.nodePool.name, [c]);
  }
  for (const [pool, cs] of pools) {
    if (cs[0]!.nodePool.disruption.consolidationPolicy !== 'Balanced') continue;
    const share = totalPrice > 0 ? cs.reduce((a, c) => a + price(c), 0) / totalPrice : cs.length / candidates.length;
    const poolSavings = savings * share;
    const disruption = cs.reduce((a, c) => a + c.disruptionCost, 0);
    const t = totals.get(pool);
    const score = t ? scoreMove(poolSavings, disruption, t) : 0;
    const ok = approves(score, k);
    approved &&= ok;
    perPool.set(pool, {
      score,
      approved: ok,
      savings: poolSavings,
      disruption,
      savingsFraction: t && t.totalCost > 0 ? poolSavings / t.totalCost : 0,
      disruptionFraction: t && t.totalDisruptionCost > 0 ? disruption / t.totalDisruptionCost : 0,
    });
  }
  return { approved, perPool };
}

/** Single-node pre-filter: could deleting this candidate alone reach the threshold? Unknown pools pass. */
export function couldApprove(c: Candidate, totals: ReadonlyMap<string, PoolTotals>, k = DEFAULT_K): boolean {
  if (c.nodePool.disruption.consolidationPolicy !== 'Balanced') return true;
  const t = totals.get(c.nodePool.name);
  if (!t || !(t.totalCost > 0)) return true;
  return approves(scoreMove(c.price, c.disruptionCost, t), k);
}

/** The ConsolidationApproved event text. */
export function approvalMessage(s: PoolScore, k = DEFAULT_K): string {
  const score = Number.isFinite(s.score) ? s.score.toFixed(2) : '+Inf';
  return `score ${score} >= threshold ${(1 / k).toFixed(2)} (k: ${k}, savings ${(s.savingsFraction * 100).toFixed(1)}%, disruption ${(s.disruptionFraction * 100).toFixed(1)}%)`;
}

/**
 * Karpenter's consolidation_moves_total / consolidation_score for a scored move: one entry per pool of the
 * candidates with the move's decision, and for Balanced pools the pool's own score and verdict.
 */
export function movesOf(
  candidates: readonly Candidate[],
  ev: BalancedEvaluation,
  decision: 'approved' | 'rejected',
): ConsolidationMove[] {
  const pools = new Map<string, Candidate>();
  for (const c of candidates) if (!pools.has(c.nodePool.name)) pools.set(c.nodePool.name, c);
  return [...pools].map(([nodePool, c]) => {
    const sc = ev.perPool.get(nodePool);
    return {
      decision,
      nodePool,
      policy: c.nodePool.disruption.consolidationPolicy,
      ...(sc
        ? { score: { value: sc.score, decision: sc.approved ? ('approved' as const) : ('rejected' as const) } }
        : {}),
    };
  });
}
