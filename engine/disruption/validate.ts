// engine.validate (docs/karpenter/disruption.md §2.5.5): after the validation delay the controller takes a fresh
// snapshot and asks whether the command still holds: the candidates are still candidates (churn), the
// budgets still allow them (budget), and a new simulation still agrees (scheduling). Emptiness may go on
// with the nodes that are still empty; consolidation commands are all or nothing.
import type { Snapshot } from '../domain/types.ts';
import type { NewNodeClaimPlan } from '../model/types.ts';
import { budgetMapping } from './budgets.ts';
import { candidateSet } from './candidates.ts';
import { commandString, makeCommand } from './command.ts';
import { methodFilter } from './filters.ts';
import { resolve, type Resolved } from './method.ts';
import { describeErrors, simulate } from './simulate.ts';
import type { Candidate, Command, Decision, DisruptOptions, ValidationCategory, ValidationResult } from './types.ts';
import { usd2 } from './words.ts';

function failure(
  cmd: Command,
  category: ValidationCategory,
  message: string,
  failedValidations: number,
): ValidationResult {
  return {
    ok: false,
    category,
    message,
    failedValidations,
    eventMessage: `Consolidation rejected: ${commandString(cmd)}, reason: ${category} (savings: ${usd2(cmd.savingsPerHour)})`,
  };
}

/** Re-checks a command (or a decision's command) against a fresh snapshot. */
export async function validate(
  s: Snapshot,
  decision: Decision | Command,
  opts: DisruptOptions = {},
): Promise<ValidationResult> {
  if (decision.kind === 'noop') throw new Error('validate: a no-op decision has nothing to validate');
  const cmd: Command = decision;
  const r = resolve(opts);
  const eventual = cmd.method === 'drift' || cmd.method === 'static-drift';
  const still = stillCandidates(s, cmd, r, eventual);
  const n = cmd.candidates.length;
  if (cmd.method === 'emptiness') return validateEmptiness(s, cmd, still);
  if (still.length !== n) return failure(cmd, 'churn', `${n - still.length} of ${n} candidates are no longer valid`, n);
  if (eventual) return { ok: true, command: cmd };
  const overBudget = underutilizedBudgetFailure(s, cmd, still);
  if (overBudget) return overBudget;
  // The repack may have found its layout with instance types capped (to split a node); re-solve within the
  // options it planned, or an unconstrained solve packs the pods onto one dearer node and calls it stale.
  const sim = await simulate(
    cmd.method === 'repack' ? withinPlannedOptions(s, cmd) : s,
    still.map((c) => c.node),
    cmd.method === 'repack' ? r.repackSim : r.sim,
    true,
  );
  if (sim.candidateDeleting) return failure(cmd, 'churn', 'a candidate is being deleted', n);
  if (sim.errors.size) return failure(cmd, 'scheduling', `pods would not schedule: ${describeErrors(sim)}`, n);
  const claims = sim.plan.newNodeClaims;
  return cmd.method === 'repack' ? validateRepackReplacements(cmd, claims) : validateReplacement(cmd, claims);
}

/** The command's candidates that are candidates for its method in the fresh snapshot, in the command's order. */
function stillCandidates(s: Snapshot, cmd: Command, r: Resolved, eventual: boolean): Candidate[] {
  const fresh = candidateSet(s, eventual ? 'eventual' : 'graceful', r.queued, r.caches).all.filter(
    (c) => methodFilter(cmd.method, c, s.now) === undefined,
  );
  const byName = new Map(fresh.map((c) => [c.node.name, c]));
  return cmd.candidates.map((c) => byName.get(c.name)).filter((c): c is Candidate => c !== undefined);
}

/** Emptiness goes on with the candidates still empty that their pools' Empty budgets still allow. */
function validateEmptiness(s: Snapshot, cmd: Command, still: readonly Candidate[]): ValidationResult {
  const n = cmd.candidates.length;
  if (!still.length) return failure(cmd, 'churn', `${n} candidates are no longer valid`, n);
  const left = new Map([...budgetMapping(s, 'Empty')].map(([k, v]) => [k, v.available]));
  const kept = still.filter((c) => {
    const b = left.get(c.nodePool.name) ?? 0;
    if (b <= 0) return false;
    left.set(c.nodePool.name, b - 1);
    return true;
  });
  if (!kept.length) return failure(cmd, 'budget', 'no candidate fits its nodepool budget any more', n);
  return { ok: true, command: kept.length === n ? cmd : makeCommand('Empty', 'emptiness', kept, []) };
}

/** The failure for the first candidate its pool's Underutilized budget no longer allows, if any. */
function underutilizedBudgetFailure(
  s: Snapshot,
  cmd: Command,
  still: readonly Candidate[],
): ValidationResult | undefined {
  const left = new Map([...budgetMapping(s, 'Underutilized')].map(([k, v]) => [k, v.available]));
  for (const c of still) {
    const b = left.get(c.nodePool.name) ?? 0;
    if (b <= 0)
      return failure(
        cmd,
        'budget',
        `nodepool ${c.nodePool.name} has no Underutilized budget left for ${c.node.name}`,
        cmd.candidates.length,
      );
    left.set(c.nodePool.name, b - 1);
  }
  return undefined;
}

/** A repack holds while the pods need no more new nodes than it planned, at no higher price. */
function validateRepackReplacements(cmd: Command, claims: readonly NewNodeClaimPlan[]): ValidationResult {
  const planned = cmd.replacements.reduce((a, k) => a + k.price, 0);
  const now = claims.reduce((a, k) => a + k.price, 0);
  if (claims.length > cmd.replacements.length || now > planned + 1e-9) {
    return failure(
      cmd,
      'scheduling',
      `the pods now need ${claims.length} new nodes at ${now.toFixed(4)} $/h; the plan had ${cmd.replacements.length} at ${planned.toFixed(4)} $/h`,
      cmd.candidates.length,
    );
  }
  return { ok: true, command: cmd };
}

/**
 * A consolidation holds while the pods need what it planned: nothing new for a delete, else one new node whose
 * options still include every planned instance type.
 */
function validateReplacement(cmd: Command, claims: readonly NewNodeClaimPlan[]): ValidationResult {
  const n = cmd.candidates.length;
  if (claims.length === 0) {
    return cmd.replacements.length === 0
      ? { ok: true, command: cmd }
      : failure(cmd, 'scheduling', 'the pods now fit without a replacement; a cheaper delete is possible', n);
  }
  if (claims.length > 1) return failure(cmd, 'scheduling', `the pods now need ${claims.length} new nodes`, n);
  const planned = cmd.replacements[0];
  if (!planned) return failure(cmd, 'scheduling', 'the pods now need a new node', n);
  const options = new Set(claims[0]!.instanceTypes.map((o) => o.name));
  const missing = planned.instanceTypes.filter((o) => !options.has(o.name));
  if (missing.length)
    return failure(
      cmd,
      'scheduling',
      `the planned instance types no longer all fit (${missing
        .slice(0, 3)
        .map((o) => o.name)
        .join(', ')})`,
      n,
    );
  return { ok: true, command: cmd };
}

/** The snapshot with each replacement pool's instance types limited to the command's planned options. */
function withinPlannedOptions(s: Snapshot, cmd: Command): Snapshot {
  const planned = new Map<string, Set<string>>();
  for (const k of cmd.replacements) {
    const names = planned.get(k.nodePool) ?? new Set<string>();
    for (const o of k.instanceTypes) names.add(o.name);
    planned.set(k.nodePool, names);
  }
  if (!planned.size) return s;
  const instanceTypes = new Map(
    [...s.instanceTypes].map(([pool, its]) => {
      const names = planned.get(pool);
      return [pool, names ? its.filter((it) => names.has(it.name)) : its] as const;
    }),
  );
  return { ...s, instanceTypes };
}
