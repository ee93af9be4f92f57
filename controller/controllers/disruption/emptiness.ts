// Emptiness (spec/disruption.md §1.4, §2.2), the one disruption method until the disruption engine
// lands: delete Consolidatable nodes that run no reschedulable pod, dearest first, within each NodePool's
// budget for reason Empty, under every consolidation policy (not when consolidateAfter is Never).
import { isActive, isMirrorPod, isOwnedByDaemonSet, type Pod, type StateNode } from '../../../engine/index.ts';
import type { Candidate, Command, DisruptionMethod, MethodInput } from './types.ts';

/** A pod that would need a new home if the node went away. */
export const reschedulable = (p: Pod): boolean => (isActive(p) || (p.deletionTimestamp !== undefined && p.owner?.kind === 'StatefulSet')) && !isOwnedByDaemonSet(p) && !isMirrorPod(p);

export const isEmpty = (n: StateNode): boolean => !n.pods.some(reschedulable);

const eligible = (c: Candidate): boolean => c.nodePool.disruption.consolidateAfter !== null && c.nodePool.replicas === undefined && isEmpty(c.node) && c.node.conditions.consolidatable === true;

function pick(input: MethodInput, from: readonly Candidate[]): { chosen: Candidate[]; constrained: boolean } {
  const budget = input.budgets('Empty');
  const chosen: Candidate[] = [];
  let constrained = false;
  for (const c of [...from].sort((a, b) => b.price - a.price)) {
    const left = budget.get(c.nodePool.name) ?? 0;
    if (left <= 0) {
      constrained = true;
      continue;
    }
    budget.set(c.nodePool.name, left - 1);
    chosen.push(c);
  }
  return { chosen, constrained };
}

export const emptiness: DisruptionMethod = {
  reason: 'Empty',
  consolidationType: '',
  skipWhenConsolidated: true,
  async compute(input) {
    const { chosen, constrained } = pick(input, input.candidates.filter(eligible));
    if (!chosen.length) return { constrained };
    const command: Command = { decision: 'delete', reason: 'Empty', consolidationType: '', candidates: chosen };
    return { command, constrained };
  },
  async validate(input, command) {
    const still = new Set(command.candidates.map((c) => c.providerId));
    const { chosen } = pick(input, input.candidates.filter((c) => still.has(c.providerId) && eligible(c)));
    return chosen.length ? { ...command, candidates: chosen } : undefined;
  },
};
