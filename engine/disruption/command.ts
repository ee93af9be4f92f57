// Turning a simulation into a command: which pods move where, the savings, and the metric labels.
import type { DisruptionReason } from '../domain/types.ts';
import { podKey } from '../scheduling/pods.ts';
import type { NewNodeClaimPlan, ProvisionPlan } from '../model/types.ts';
import { describeCandidate } from './candidates.ts';
import { estimatedSavings } from './pricing.ts';
import type { Candidate, Command, ConsolidationType, MethodName, PodMove } from './types.ts';

const CONSOLIDATION_TYPE: Readonly<Record<MethodName, ConsolidationType>> = {
  emptiness: 'empty',
  single: 'single',
  multi: 'multi',
  repack: 'repack',
  drift: '',
  'static-drift': '',
};

/** Where each candidate pod lands in the plan: an existing node or `replacement:<i>` (by pod uid). */
function podMoves(
  candidates: readonly Candidate[],
  plan: ProvisionPlan | undefined,
  replacements: readonly NewNodeClaimPlan[],
): PodMove[] {
  const dest = new Map<string, string>();
  if (plan) for (const [node, uids] of plan.existing) for (const u of uids) dest.set(u, node);
  replacements.forEach((r, i) => {
    const to = `replacement:${i}`;
    for (const u of r.pods) dest.set(u, to);
  });
  const out: PodMove[] = [];
  for (const c of candidates) {
    for (const p of c.reschedulablePods) {
      const to = dest.get(p.uid);
      if (to !== undefined) out.push({ uid: p.uid, pod: podKey(p), from: c.node.name, to });
    }
  }
  return out;
}

export function makeCommand(
  reason: DisruptionReason,
  method: MethodName,
  candidates: readonly Candidate[],
  replacements: readonly NewNodeClaimPlan[],
  plan?: ProvisionPlan,
): Command {
  const kind = replacements.length ? 'replace' : 'delete';
  return {
    kind,
    reason,
    method,
    candidates: candidates.map(describeCandidate),
    replacements,
    savingsPerHour: estimatedSavings(
      candidates.map((c) => c.price),
      replacements,
    ),
    podsMoved: podMoves(candidates, plan, replacements),
    metricLabels: { decision: kind, reason: reason.toLowerCase(), consolidation_type: CONSOLIDATION_TYPE[method] },
  };
}

/** Karpenter's Command.String(): "delete: [a, b]" or "replace: [a] -> [1 replacement]". */
export function commandString(c: Pick<Command, 'kind' | 'candidates' | 'replacements'> | { kind: 'noop' }): string {
  if (c.kind === 'noop') return 'no-op: []';
  const names = `[${c.candidates.map((x) => x.name).join(', ')}]`;
  if (c.kind === 'delete') return `delete: ${names}`;
  const n = c.replacements.length;
  return `replace: ${names} -> [${n} replacement${n === 1 ? '' : 's'}]`;
}

/**
 * How long the orchestration queue gives a command before failing it (docs/karpenter/disruption.md §5.7):
 * 80 ms per queued command, clamped to [10 min, 1 h].
 */
export function commandTimeoutMs(queuedCommands: number): number {
  return Math.min(3600_000, Math.max(600_000, 80 * queuedCommands));
}
