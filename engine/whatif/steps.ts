// Cuts an ordered candidate list into disruption passes: each pass takes, per NodePool, at most what the
// pool's budgets allow for the reason (recomputed per pass on the nodes left, as Karpenter recomputes
// budgets every loop). Candidates a zero budget blocks are returned with the budget's words.
import type { DisruptionReason, Snapshot } from '../domain/types.ts';
import { allowedDisruptions } from './budgets.ts';
import type { Candidate } from './candidates.ts';
import type { NodeExplanation } from './types.ts';

export interface Steps {
  readonly steps: readonly (readonly Candidate[])[];
  readonly blocked: readonly NodeExplanation[];
}

/** Nodes counted by budgets (§3.1): managed, initialized, not terminating, per NodePool; minus `gone`. */
function nodeCounts(s: Snapshot, gone: ReadonlySet<string>): Map<string, number> {
  const out = new Map<string, number>();
  for (const n of s.nodes) {
    if (!n.managed || !n.initialized || n.instanceTerminating || !n.nodePoolName || gone.has(n.name)) continue;
    out.set(n.nodePoolName, (out.get(n.nodePoolName) ?? 0) + 1);
  }
  return out;
}

export function stepsByBudget(s: Snapshot, ordered: readonly Candidate[], reason: DisruptionReason, gone: ReadonlySet<string>): Steps {
  const counts = nodeCounts(s, gone);
  const steps: Candidate[][] = [];
  let left = [...ordered];
  while (left.length > 0) {
    const room = new Map<string, number>();
    const step: Candidate[] = [];
    const rest: Candidate[] = [];
    for (const c of left) {
      const pool = c.pool.name;
      if (!room.has(pool)) room.set(pool, allowedDisruptions(c.pool, reason, counts.get(pool) ?? 0, s.now));
      const r = room.get(pool)!;
      if (r > 0) {
        step.push(c);
        room.set(pool, r - 1);
      } else rest.push(c);
    }
    if (step.length === 0) break;
    for (const c of step) counts.set(c.pool.name, (counts.get(c.pool.name) ?? 1) - 1);
    steps.push(step);
    left = rest;
  }
  const blocked = left.map((c) => ({
    node: c.node.name,
    reason: `disruption budgets of NodePool "${c.pool.name}" allow no ${reason} disruption now (${c.pool.disruption.budgets.map((b) => b.nodes + (b.schedule ? ` during "${b.schedule}"` : '')).join(', ')})`,
  }));
  return { steps, blocked };
}
