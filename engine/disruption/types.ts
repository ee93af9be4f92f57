// The disruption engine's data: candidates, commands, decisions, explanations and the state that persists
// between loops. Everything is plain readonly data; the functions that produce it live beside this file.
import type { ConsolidationPolicy, DisruptionReason, InstanceType, NodePool, Pod, StateNode } from '../domain/types.ts';
import type { ModelCaches } from '../model/caches.ts';
import type { NewNodeClaimPlan, ProvisionSolver } from '../model/types.ts';

/** The methods, named as Karpenter's metric labels and logs name them (plus our global repack). */
export type MethodName = 'emptiness' | 'static-drift' | 'drift' | 'multi' | 'single' | 'repack';

/** Karpenter's production order (docs/karpenter/disruption.md §1.1). At most one method acts per loop. */
const PRODUCTION_ORDER: readonly MethodName[] = ['emptiness', 'static-drift', 'drift', 'multi', 'single'];

/** The method list for a repack option: Karpenter's order, with the repack after it, instead of its consolidation, or not at all. */
export function methodsFor(repack: 'after' | 'only' | 'off' = 'after'): readonly MethodName[] {
  if (repack === 'off') return PRODUCTION_ORDER;
  if (repack === 'only') return ['static-drift', 'drift', 'repack'];
  return [...PRODUCTION_ORDER, 'repack'];
}

/**
 * The order Karpenter's own test harness uses (StaticDrift, Drift, Emptiness, Multi, Single): offered so a
 * test can reproduce an upstream expectation that depends on it (docs/karpenter/disruption.md §1.1).
 */
export const HARNESS_ORDER: readonly MethodName[] = ['static-drift', 'drift', 'emptiness', 'multi', 'single'];

/** graceful: respects PDBs and do-not-disrupt; eventual: a terminationGracePeriod lets blocked nodes through. */
export type DisruptionClass = 'graceful' | 'eventual';

export interface Candidate {
  readonly node: StateNode;
  readonly nodePool: NodePool;
  /** The pool's instance type named by the node's instance-type label, when it resolves. */
  readonly instanceType?: InstanceType;
  readonly zone?: string;
  readonly capacityType?: string;
  /** Price of the node's own offering (zone and capacity type), regardless of availability; 0 if unknown. */
  readonly price: number;
  /** Pods that must move if the node goes (active or terminating StatefulSet; not DaemonSet, not mirror). */
  readonly reschedulablePods: readonly Pod[];
  /** RescheduleDisruptionCost: 1 + Σ max(0, evictionCost) over the reschedulable pods. */
  readonly disruptionCost: number;
  /** IsEmpty: no reschedulable pod has a positive eviction cost. */
  readonly empty: boolean;
}

/** The candidate as a decision reports it. */
export interface DecisionCandidate {
  readonly name: string;
  readonly nodeClaimName?: string;
  readonly providerId?: string;
  readonly nodePool: string;
  readonly instanceType?: string;
  readonly capacityType?: string;
  readonly zone?: string;
  readonly price: number;
  readonly reschedulablePods: number;
  readonly disruptionCost: number;
}

/** Where a pod goes: an existing node's name, or `replacement:<i>` for the i-th replacement of the command. */
export interface PodMove {
  readonly uid: string;
  /** namespace/name */
  readonly pod: string;
  readonly from: string;
  readonly to: string;
}

export type ConsolidationType = 'empty' | 'single' | 'multi' | 'repack' | '';

/** One command for the orchestration queue: taint, launch the replacements, wait, delete the candidates. */
export interface Command {
  readonly kind: 'delete' | 'replace';
  readonly reason: DisruptionReason;
  readonly method: MethodName;
  readonly candidates: readonly DecisionCandidate[];
  readonly replacements: readonly NewNodeClaimPlan[];
  /** §2.5.4: Σ candidate prices − Σ cheapest available offering of each replacement's first option. */
  readonly savingsPerHour: number;
  readonly podsMoved: readonly PodMove[];
  /** Labels of voluntary_disruption_decisions_total for this command. */
  readonly metricLabels: {
    readonly decision: 'delete' | 'replace';
    readonly reason: string;
    readonly consolidation_type: ConsolidationType;
  };
}

export type ExplanationCode =
  | 'already-disrupting'
  | 'not-managed'
  | 'no-node'
  | 'not-initialized'
  | 'deleting'
  | 'nominated'
  | 'node-do-not-disrupt'
  | 'no-nodepool-label'
  | 'nodepool-not-found'
  | 'pod-do-not-disrupt'
  | 'pdb-blocked'
  | 'pdb-multiple'
  | 'static-nodepool'
  | 'consolidation-disabled'
  | 'buffer-pods'
  | 'not-consolidatable'
  | 'consolidate-after'
  | 'when-empty-policy'
  | 'instance-type-not-found'
  | 'missing-label'
  | 'not-empty'
  | 'left-to-emptiness'
  | 'not-drifted'
  | 'budget'
  | 'pods-would-not-schedule'
  | 'needs-multiple-nodes'
  | 'no-cheaper-replacement'
  | 'spot-to-spot-disabled'
  | 'spot-to-spot-flexibility'
  | 'min-values'
  | 'balanced-rejected'
  | 'candidate-deleting'
  | 'not-evaluated'
  | 'timeout'
  | 'already-consolidated'
  | 'static-limits'
  | 'no-saving-repack'
  | 'small-saving-repack';

/** Why a node is not disrupted: data for tools, words for people, and the event Karpenter would publish. */
export interface Explanation {
  readonly node: string;
  readonly code: ExplanationCode;
  readonly message: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly event?: { readonly reason: 'DisruptionBlocked' | 'Unconsolidatable'; readonly message: string };
}

/** A command plus, for the global repack, the later steps (each within the budgets of its time). */
export type Decision =
  | { readonly kind: 'noop'; readonly explanations: readonly Explanation[]; readonly truncated?: true }
  | (Command & {
      readonly explanations: readonly Explanation[];
      /**
       * A wall-clock safety net fired while deciding: a simulation's improvement phase (ProvisionPlan.truncated)
       * or the repack's search deadline. Every search is budgeted by work, so the same snapshot gives the same
       * decision on any machine, except when this is set. Absent otherwise. Karpenter's own method timeouts
       * (single- and multi-node) are its semantics, not a safety net: DisruptMetrics.timeouts counts them.
       */
      readonly truncated?: true;
      /** Static drift: further commands to start in the same loop. */
      readonly concurrent?: readonly Command[];
      /** Repack: the next steps, to run after this one completes (re-planned by later loops). */
      readonly followUps?: readonly Command[];
      /** Balanced pools that approved the move: pool -> ConsolidationApproved event message. */
      readonly approvals?: Readonly<Record<string, string>>;
    });

/** State that persists between loops; passed in and returned, never hidden. */
export interface LoopState {
  /** Per method: the cluster consolidation state at which it last concluded "nothing to do" (§2.1). */
  readonly consolidated: Readonly<Partial<Record<MethodName, number>>>;
  /** Single-node: pools not reached before the last timeout; they go first next time (§1.5). */
  readonly previouslyUnseenPools: readonly string[];
}

export const INITIAL_LOOP_STATE: LoopState = { consolidated: {}, previouslyUnseenPools: [] };

export interface DisruptOptions {
  /** The provisioning solver used for simulations. Default: a wasm solver in the calling thread. */
  readonly solver?: ProvisionSolver;
  /**
   * What the call may remember per input object (node starts, templates, pod classes, candidates' pods) and
   * find from earlier calls over the same objects: a warm cluster model's caches. Default: the call's own.
   */
  readonly caches?: ModelCaches;
  /** The solver the repack uses (default `solver`). */
  readonly repackSolver?: ProvisionSolver;
  readonly state?: LoopState;
  /** The cluster's consolidation-state timestamp (§6.4); without it the "consolidated" short-circuit is off. */
  readonly consolidationState?: number;
  /** Provider ids (or node names) already part of a queued command. */
  readonly queued?: ReadonlySet<string>;
  /** Extra well-known label keys (tests with the fake provider's labels). */
  readonly wellKnownLabels?: ReadonlySet<string>;
  /** A monotonic millisecond counter for deadlines; without it nothing times out. */
  readonly elapsedMs?: () => number;
  /** Default 180 000 (Karpenter's 3 minutes). */
  readonly singleNodeTimeoutMs?: number;
  /** Default 60 000 (Karpenter's 1 minute). */
  readonly multiNodeTimeoutMs?: number;
  /** Multi-node candidate cap, default 100. */
  readonly multiNodeCap?: number;
  /** 'after' (default): when Karpenter's methods find nothing; 'only': instead of them; 'off'. */
  readonly repack?: 'after' | 'only' | 'off';
  /** The repack's search deadline (default 10 000 ms of elapsedMs). */
  readonly repackDeadlineMs?: number;
  /** A repack step must save more than this, $/h (default 0). */
  readonly repackMinSavingsPerHour?: number;
  /**
   * A repack unit must save at least this share of the price of the nodes it replaces, counted at the worst
   * launch price of its replacements (default 0.05): moving hundreds of nodes' pods to save a few cents is
   * churn no user wants. 0 keeps every saving unit.
   */
  readonly repackMinSavingsShare?: number;
  /** Methods to run, in order (default PRODUCTION_ORDER, then the repack per `repack`). */
  readonly methods?: readonly MethodName[];
  /** The cluster-cost tracker's $/h per NodePool, for Balanced scoring (§2.6). */
  readonly poolCosts?: ReadonlyMap<string, number>;
  /** Balanced k (threshold 1/k), default 2. */
  readonly balancedK?: number;
}

export interface DisruptResult {
  readonly decision: Decision;
  readonly state: LoopState;
  /** Gauges the controller publishes: eligible nodes per reason and budget figures per pool and reason. */
  readonly metrics: DisruptMetrics;
}

/** One scored consolidation move of one pool (Karpenter's consolidation_moves_total and consolidation_score). */
export interface ConsolidationMove {
  readonly decision: 'approved' | 'rejected';
  readonly nodePool: string;
  readonly policy: ConsolidationPolicy;
  /** Balanced pools only: the pool's score and whether it met the threshold. */
  readonly score?: { readonly value: number; readonly decision: 'approved' | 'rejected' };
}

export interface DisruptMetrics {
  readonly eligibleNodes: Readonly<Partial<Record<DisruptionReason, number>>>;
  readonly allowedDisruptions: readonly {
    readonly nodePool: string;
    readonly reason: DisruptionReason;
    readonly allowed: number;
    readonly disrupting: number;
  }[];
  /** Consolidation timeouts per type this call (consolidation_timeouts_total). */
  readonly timeouts: Readonly<Partial<Record<'single' | 'multi', number>>>;
  /** Consolidation moves scored this call (single-node: every computed move; multi-node: the chosen or last rejected one). */
  readonly consolidationMoves?: readonly ConsolidationMove[];
}

export type ValidationCategory = 'churn' | 'budget' | 'scheduling' | 'unknown';

export type ValidationResult =
  | { readonly ok: true; readonly command: Command }
  | {
      readonly ok: false;
      readonly category: ValidationCategory;
      readonly message: string;
      /** What failed_validations_total grows by. */
      readonly failedValidations: number;
      /** Karpenter's ConsolidationRejected event text. */
      readonly eventMessage: string;
    };

/**
 * The wall time each method may spend when deadlines count (a controller): Karpenter's single-node (3 min) and
 * multi-node (1 min) consolidation timeouts, and the repack's deadline.
 */
export const METHOD_DEADLINES = {
  singleNodeTimeoutMs: 180_000,
  multiNodeTimeoutMs: 60_000,
  repackDeadlineMs: 10_000,
} as const;
