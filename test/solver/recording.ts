// A solver that keeps every problem it was given and the plan it returned, so a test can hand the plans a decision
// was made from to the verifier (engine/verify): the provisioning plan of a what-if, the simulation behind a
// consolidation command. It solves with the solver it wraps and changes nothing.
import type { NewNodeClaimPlan, ProvisionInput, ProvisionPlan, ProvisionSolver } from '../../engine/model/types.ts';

export interface Solved {
  readonly input: ProvisionInput;
  readonly plan: ProvisionPlan;
}

export class RecordingSolver implements ProvisionSolver {
  readonly name: string;
  readonly solved: Solved[] = [];

  constructor(private readonly inner: ProvisionSolver) {
    this.name = `recording ${inner.name}`;
  }

  async solve(input: ProvisionInput): Promise<ProvisionPlan> {
    const plan = await this.inner.solve(input);
    this.solved.push({ input, plan });
    return plan;
  }
}

const podSet = (c: NewNodeClaimPlan) => [...c.pods].sort().join(',');

/** A consolidation command as the verifier takes it: what it was decided against, and the plan it carries out. */
interface CommandCheck {
  readonly input: ProvisionInput;
  readonly plan: ProvisionPlan;
  /** The simulation the command came from. */
  readonly simulation: Solved;
  /** The simulation decided this command alone (single- and multi-node), or several (a repack step's units). */
  readonly whole: boolean;
}

/**
 * The plan a consolidation command carries out, from the last solve that simulated removing nodes and made NodeClaims
 * holding exactly the pods of each of its replacements:
 *
 * - the simulation made just those NodeClaims (Karpenter's single- and multi-node consolidation: the replacements are
 *   its NodeClaims with their options narrowed by the price rules): the simulation with the replacements as its new
 *   NodeClaims (verifyReplacements);
 * - it made more (the global repack: a step carries out some of the units of one simulation): the simulation cut down
 *   to the command's pods (its replacements' and its candidates'), where they land, and its candidates alone marked
 *   for deletion.
 */
export function commandCheck(
  solved: readonly Solved[],
  cmd: { readonly candidates: readonly string[]; readonly replacements: readonly NewNodeClaimPlan[] },
): CommandCheck | undefined {
  const want = cmd.replacements.map(podSet);
  for (let i = solved.length - 1; i >= 0; i--) {
    const s = solved[i]!;
    if (!s.input.nodes.some((n) => n.markedForDeletion)) continue;
    const got = s.plan.newNodeClaims.map(podSet);
    if (got.length === want.length && got.every((g, k) => g === want[k]))
      return { input: s.input, plan: { ...s.plan, newNodeClaims: cmd.replacements }, simulation: s, whole: true };
    if (want.length && want.every((w) => got.includes(w))) return { ...stepOf(s, cmd), simulation: s, whole: false };
  }
  return undefined;
}

function stepOf(
  s: Solved,
  cmd: { readonly candidates: readonly string[]; readonly replacements: readonly NewNodeClaimPlan[] },
): { input: ProvisionInput; plan: ProvisionPlan } {
  const leaving = new Set(cmd.candidates);
  const uids = new Set(cmd.replacements.flatMap((c) => c.pods));
  for (const n of s.input.nodes) if (leaving.has(n.name)) for (const p of n.pods) uids.add(p.uid);
  const existing = new Map<string, string[]>();
  for (const [node, placed] of s.plan.existing) {
    const ours = placed.filter((u) => uids.has(u));
    if (ours.length) existing.set(node, ours);
  }
  const input: ProvisionInput = {
    ...s.input,
    pods: s.input.pods.filter((p) => uids.has(p.uid)),
    nodes: s.input.nodes.map((n) =>
      n.markedForDeletion && !n.deleting && !leaving.has(n.name) ? { ...n, markedForDeletion: false } : n,
    ),
  };
  const plan: ProvisionPlan = {
    existing,
    newNodeClaims: cmd.replacements,
    unschedulable: [],
    ignored: [],
    costPerHour: cmd.replacements.reduce((a, c) => a + c.price, 0),
  };
  return { input, plan };
}
