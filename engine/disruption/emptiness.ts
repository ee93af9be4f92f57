// Emptiness (docs/karpenter/disruption.md §2.2): delete every empty, consolidatable node the budgets allow, in one
// command that may span pools. No simulation: empty nodes have nothing to move.
import { budgetExplanation } from './budgets.ts';
import { makeCommand } from './command.ts';
import type { MethodInput, MethodOutput } from './method.ts';
import type { Candidate, Explanation } from './types.ts';

export function emptiness({ s, candidates, budgets }: MethodInput): MethodOutput {
  const left = new Map([...budgets].map(([k, v]) => [k, v.available]));
  const taken: Candidate[] = [];
  const explanations: Explanation[] = [];
  let constrained = false;
  for (const c of candidates) {
    if (!c.empty) continue;
    const pool = c.nodePool.name;
    const n = left.get(pool) ?? 0;
    if (n <= 0) {
      constrained = true;
      const pb = budgets.get(pool);
      if (pb) explanations.push(budgetExplanation(c.node.name, pb, s.now, pb.available - n));
      continue;
    }
    left.set(pool, n - 1);
    taken.push(c);
  }
  if (!taken.length) return { commands: [], explanations, consolidated: !constrained };
  return { commands: [makeCommand('Empty', 'emptiness', taken, [])], explanations, consolidated: false };
}
