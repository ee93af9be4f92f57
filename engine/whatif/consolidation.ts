// The seam between what-if and consolidation. A ConsolidationPlanner takes a snapshot and answers with the
// commands it would run, in order (budgets already applied), and why every node it keeps stays. The disruption
// engine fills it (disruption-planner.ts: the controller's decisions, loop after loop).
import type { Pod, Snapshot } from '../domain/types.ts';
import type { NewNodeClaimPlan, ProvisionPlan } from '../model/types.ts';
import type { NodeExplanation } from './types.ts';

export interface ConsolidationCommand {
  readonly kind: 'delete' | 'replace';
  /** Names of the nodes that go. */
  readonly candidates: readonly string[];
  /** NodeClaims launched before the candidates go (empty for delete). */
  readonly replacements: readonly NewNodeClaimPlan[];
  /** Σ candidate prices − Σ replacement prices, $/h. */
  readonly savingsPerHour: number;
  readonly podsMoved: number;
  readonly reason: string;
  /** Names for the replacements (same order), when the planner names them (so later commands can refer to them). */
  readonly replacementNames?: readonly string[];
  /**
   * Moved pods that land on nodes other than this command's replacements (node name -> pod uids): nodes
   * that stay, or replacements named by earlier commands. Pods of a replacement that are not on this
   * command's candidates are not moved by this command.
   */
  readonly onExisting?: ReadonlyMap<string, readonly string[]>;
}

export interface ConsolidationPlan {
  /** In execution order; each command is one disruption pass. */
  readonly commands: readonly ConsolidationCommand[];
  /** One line per node that stays: why it is not disrupted. */
  readonly kept: readonly NodeExplanation[];
  /** The snapshot after every command, when the planner carried them out (replacements as launched nodes). */
  readonly final?: Snapshot;
  /** A decision of the plan was cut by the improvement phase's wall-clock safety net. */
  readonly truncated?: true;
}

/** Progress of a long plan: commands decided so far, and how many more the current plan foresees. */
export interface PlanProgress {
  readonly done: number;
  readonly planned: number;
}

export interface ConsolidationPlanner {
  readonly name: string;
  /** `name` gives new nodes names unique in the run (planners that name replacements use it). */
  plan(
    s: Snapshot,
    opts: {
      readonly exact: boolean;
      readonly name?: (nodePool: string) => string;
      readonly onProgress?: (p: PlanProgress) => void;
    },
  ): Promise<ConsolidationPlan>;
}

/** How what-if places pending pods (the provisioning solver). */
export type ProvisionFn = (
  s: Snapshot,
  pods: readonly Pod[],
  opts: { readonly exact: boolean },
) => Promise<ProvisionPlan>;
