// Drift (docs/karpenter/disruption.md §4.3): replace drifted nodes one at a time, oldest drift first and empty nodes
// before others. The simulation may ask for several new nodes (drift, unlike consolidation, can split a
// node), and no price rule applies. A node whose pods would not all schedule is skipped, not fatal.
import type { Snapshot } from '../domain/types.ts';
import { budgetExplanation } from './budgets.ts';
import { makeCommand } from './command.ts';
import type { MethodInput, MethodOutput } from './method.ts';
import { describeErrors, simulate } from './simulate.ts';
import type { Candidate, Explanation } from './types.ts';
import { explanation } from './words.ts';

/** Oldest Drifted transition first, then (stably) nodes with nothing to reschedule before the rest. */
function driftOrder(cs: readonly Candidate[]): Candidate[] {
  const byAge = cs
    .map((c, i) => ({ c, i, t: c.node.conditions.drifted?.since ?? 0 }))
    .sort((a, b) => a.t - b.t || a.i - b.i)
    .map((x) => x.c);
  return [
    ...byAge.filter((c) => c.reschedulablePods.length === 0),
    ...byAge.filter((c) => c.reschedulablePods.length > 0),
  ];
}

export async function drift({ s, candidates, budgets, r }: MethodInput): Promise<MethodOutput> {
  const explanations: Explanation[] = [];
  for (const c of driftOrder(candidates)) {
    const pb = budgets.get(c.nodePool.name);
    if (!pb || pb.available <= 0) {
      if (pb) explanations.push(budgetExplanation(c.node.name, pb, s.now));
      continue;
    }
    const sim = await simulate(s, [c.node], r.sim, false);
    if (sim.candidateDeleting) continue;
    if (sim.errors.size) {
      explanations.push(blockedBySimulation(s, c, describeErrors(sim)));
      continue;
    }
    const cmd = makeCommand('Drifted', 'drift', [c], sim.plan.newNodeClaims, sim.plan);
    return { commands: [cmd], explanations, consolidated: false };
  }
  return { commands: [], explanations, consolidated: false };
}

function blockedBySimulation(_s: Snapshot, c: Candidate, errs: string): Explanation {
  return explanation(
    c.node.name,
    'pods-would-not-schedule',
    `drifted, but its pods would not schedule elsewhere: ${errs}`,
    {},
    {
      reason: 'DisruptionBlocked',
      message: `Not all pods would schedule, ${errs}`,
    },
  );
}
