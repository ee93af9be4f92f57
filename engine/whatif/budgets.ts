// Disruption budgets (docs/spec/disruption.md §3): how many nodes of a NodePool a disruption reason may
// take at once. Used by the provisional planner to cut its plan into the steps budgets allow.
import { parseCron, scheduleActive } from '../disruption/cron.ts';
import type { DisruptionReason, NodePool } from '../domain/types.ts';

/** Nodes the pool may disrupt now for `reason`, given `numNodes` initialized nodes; Infinity when unlimited. */
export function allowedDisruptions(pool: NodePool, reason: DisruptionReason, numNodes: number, now: number): number {
  let allowed = Infinity;
  for (const b of pool.disruption.budgets) {
    const n = /^(\d+)$/.exec(b.nodes);
    const pct = /^(\d+)%$/.exec(b.nodes);
    if (!n && !(pct && Number(pct[1]) <= 100)) return 0; // fail closed (§3.1.4)
    let active = true;
    if (b.schedule !== undefined) {
      const cron = parseCron(b.schedule);
      if (!cron.ok) return 0;
      active = scheduleActive(cron.schedule, b.duration ?? 0, now);
    }
    if (!active || (b.reasons && !b.reasons.includes(reason))) continue;
    const value = n ? Number(n[1]) : Math.ceil((Number(pct![1]) * numNodes) / 100);
    allowed = Math.min(allowed, value);
  }
  return allowed;
}

/** Which budget rule binds, in words, for explanations. */
export function budgetNote(pool: NodePool, reason: DisruptionReason, numNodes: number, now: number): string {
  const a = allowedDisruptions(pool, reason, numNodes, now);
  return a === Infinity ? `NodePool ${pool.name} has no budget limit` : `NodePool ${pool.name}'s budgets allow ${a} of ${numNodes} node(s) at a time for ${reason}`;
}
