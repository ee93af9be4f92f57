// Disruption budgets (spec/disruption.md §3.1-§3.2): per NodePool and reason, the fewest disruptions any
// active budget allows (percentages of the pool's initialized nodes, rounded up), less the nodes already
// disrupting (not Ready, deleting or marked). A pool with an invalid budget allows nothing (fail closed);
// a pool without budgets is unlimited.
import { parseCron, scheduleActive, type DisruptionReason, type NodePool, type StateNode } from '../../../engine/index.ts';

export const UNLIMITED = Number.MAX_SAFE_INTEGER;

/** Allowed disruptions before subtracting the disrupting nodes; 0 when any budget is invalid. */
export function allowedDisruptions(pool: NodePool, reason: DisruptionReason, numNodes: number, now: number): number {
  const budgets = pool.disruption.budgets;
  if (!budgets.length) return UNLIMITED;
  let allowed = UNLIMITED;
  for (const b of budgets) {
    const pct = /^(\d{1,3})%$/.exec(b.nodes);
    const n = /^\d+$/.test(b.nodes) ? Number(b.nodes) : pct && Number(pct[1]) <= 100 ? Math.ceil((Number(pct[1]) * numNodes) / 100) : NaN;
    if (Number.isNaN(n)) return 0;
    if (b.schedule !== undefined && !parseCron(b.schedule).ok) return 0;
    if (b.reasons && !b.reasons.includes(reason)) continue;
    const active = b.schedule === undefined || b.duration === undefined || scheduleActive(b.schedule, b.duration, now);
    if (active) allowed = Math.min(allowed, n);
  }
  return allowed;
}

/** Allowed disruptions left per pool for the reason (mapping value = max(allowed - disrupting, 0)). */
export function budgetMap(pools: readonly NodePool[], nodes: readonly StateNode[], reason: DisruptionReason, now: number, report?: (pool: string, allowed: number, numNodes: number) => void): Map<string, number> {
  const out = new Map<string, number>();
  for (const pool of pools) {
    const mine = nodes.filter((n) => n.managed && n.hasNodeClaim && n.initialized && !n.instanceTerminating && n.nodePoolName === pool.name);
    const disrupting = mine.filter((n) => !n.ready || n.markedForDeletion || n.deleting).length;
    const allowed = allowedDisruptions(pool, reason, mine.length, now);
    report?.(pool.name, allowed, mine.length);
    out.set(pool.name, Math.max(allowed - disrupting, 0));
  }
  return out;
}
