// The seam between the disruption loop and the methods that decide what to disrupt. Today the only
// method is emptiness.ts (delete empty nodes); the disruption engine (engine.disrupt: drift, single/multi
// consolidation, the global repack) plugs in as more DisruptionMethods, and `replace` commands carry the
// NodeClaims to launch before the candidates go.
import type { DisruptionReason, NewNodeClaimPlan, NodePool, StateNode } from '../../../engine/index.ts';

export interface Candidate {
  readonly node: StateNode;
  readonly providerId: string;
  readonly nodeClaimName: string;
  readonly nodePool: NodePool;
  /** $/h of the node's offering (0 when unknown). */
  readonly price: number;
}

export type Command =
  | { readonly decision: 'delete'; readonly reason: DisruptionReason; readonly consolidationType: string; readonly candidates: readonly Candidate[] }
  | { readonly decision: 'replace'; readonly reason: DisruptionReason; readonly consolidationType: string; readonly candidates: readonly Candidate[]; readonly replacements: readonly NewNodeClaimPlan[] };

/** Allowed disruptions left per NodePool, for the reason being evaluated (budgets.ts). */
export type BudgetMap = Map<string, number>;

export interface MethodInput {
  readonly now: number;
  /** Candidates that passed the common checks (spec/disruption.md §1.3 steps 1-9). */
  readonly candidates: readonly Candidate[];
  readonly budgets: (reason: DisruptionReason) => BudgetMap;
}

export interface DisruptionMethod {
  readonly reason: DisruptionReason;
  /** '' for emptiness and drift; 'single' | 'multi' for consolidation. */
  readonly consolidationType: string;
  /**
   * At most one command per loop, computed from fresh state. `constrained` says a budget held some
   * candidate back (so the cluster must not be remembered as consolidated).
   */
  compute(input: MethodInput): Promise<{ readonly command?: Command; readonly constrained?: boolean }>;
  /**
   * Re-checks a command after the validation delay against fresh candidates; returns what is still valid
   * (possibly fewer candidates), or undefined to drop it.
   */
  validate(input: MethodInput, command: Command): Promise<Command | undefined>;
  /** Remembers that the cluster at this consolidation state had nothing to do (the consolidated short-cut). */
  readonly skipWhenConsolidated: boolean;
}
