// The contract every provisioning solver implements: the TypeScript reference (Karpenter's algorithm,
// slow and obvious) and the WebAssembly solver (the same algorithm, fast, plus an improvement phase).
// Tests and benchmarks run them side by side.
import type { DraState } from '../domain/dra.ts';
import type { ModelCaches } from './caches.ts';
import type {
  DaemonSet,
  EngineOptions,
  InstanceType,
  NodePool,
  NodeSelectorRequirement,
  Pod,
  Resources,
  StateNode,
  Taint,
} from '../domain/types.ts';

export interface ProvisionInput {
  /** All NodePools; the solver keeps the ready, dynamic, not-deleting ones, in weight order. */
  readonly nodePools: readonly NodePool[];
  /** Per NodePool name. */
  readonly instanceTypes: ReadonlyMap<string, readonly InstanceType[]>;
  /** Existing and in-flight nodes. Nodes marked for deletion or deleting take no new pods. */
  readonly nodes: readonly StateNode[];
  /** The pods to place, in any order (the solver sorts them). */
  readonly pods: readonly Pod[];
  readonly daemonSets: readonly DaemonSet[];
  readonly options: EngineOptions;
  /** Label keys allowed undefined in Compatible checks; default: Karpenter's and the AWS provider's. */
  readonly wellKnownLabels?: ReadonlySet<string>;
  /**
   * Consolidation simulation (docs/karpenter/disruption.md §2.7): these existing nodes may receive only pods that
   * were pending before the simulation (not pods moved off candidates). `movedPods` lists the uids of
   * pods that come from candidate nodes.
   */
  readonly consolidation?: {
    readonly blockedDestinations: ReadonlySet<string>;
    readonly movedPods: ReadonlySet<string>;
  };
  /** Skip the improvement phase (solvers that have one). */
  readonly exact?: boolean;
  /**
   * Reserved capacity (docs/karpenter/scheduling.md §2.15). Strict (default, provisioning): a pod that would keep a NodeClaim
   * from reserved capacity it could otherwise have fails with a reserved-offering error (not relaxed, retried next
   * round). Fallback (disruption simulations): the NodeClaim goes on without the reservation.
   */
  readonly reservedOfferingMode?: 'Strict' | 'Fallback';
  /** DRA objects, used when options.ignoreDRARequests is false (absent: none). */
  readonly dra?: DraState;
  /**
   * What the solve may remember about these (immutable) input objects, for the next solve over them: a warm
   * cluster model's or a disruption call's caches. Absent: the solver's own, or none.
   */
  readonly caches?: ModelCaches;
}

interface InstanceTypeOption {
  readonly name: string;
  /** Cheapest available offering compatible with the NodeClaim's requirements, $/h. */
  readonly price: number;
}

/** A NodeClaim the plan asks to launch. */
export interface NewNodeClaimPlan {
  readonly nodePool: string;
  /** Pod uids, in placement order. */
  readonly pods: readonly string[];
  /** Final requirements (hostname removed; instance-type and capacity-type narrowed to the options). */
  readonly requirements: readonly NodeSelectorRequirement[];
  /** Ascending price, at most options.maxInstanceTypes. */
  readonly instanceTypes: readonly InstanceTypeOption[];
  /** Pod requests plus the smallest daemonset overhead among the remaining options. */
  readonly requests: Resources;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly startupTaints: readonly Taint[];
  /** The price the plan is costed at: the first option's. */
  readonly price: number;
  /** minValues were relaxed under MinValuesPolicy BestEffort. */
  readonly minValuesRelaxed?: boolean;
  /** Annotations finalisation adds (karpenter.sh/requested-dra-drivers for NodeClaims whose pods take node-local devices). */
  readonly annotations?: Readonly<Record<string, string>>;
}

export interface PodError {
  readonly uid: string;
  /** One line, the most specific failure. */
  readonly reason: string;
  /** The failure against each NodePool that was tried, when the pod needed a new node. */
  readonly perNodePool?: Readonly<Record<string, string>>;
  /**
   * The pod waits for reserved capacity held by other NodeClaims of this plan (Karpenter's ReservedOfferingError):
   * retried next round, not reported as FailedScheduling.
   */
  readonly reservedOffering?: true;
}

export interface ProvisionPlan {
  /** Pods placed on existing or in-flight nodes: node name -> pod uids. */
  readonly existing: ReadonlyMap<string, readonly string[]>;
  readonly newNodeClaims: readonly NewNodeClaimPlan[];
  readonly unschedulable: readonly PodError[];
  /** Pods excluded before scheduling (invalid requirements, opted out of Karpenter). */
  readonly ignored: readonly PodError[];
  /** Σ price of the new NodeClaims, $/h. */
  readonly costPerHour: number;
  /**
   * The improvement phase hit its wall-clock safety net (docs/solver.md, "Budget"): the phase is budgeted by work,
   * so the same input gives the same plan on any machine, except when this is set; then the plan may depend on how
   * busy the machine was. Callers count it (a metric) and may log it. Absent otherwise.
   */
  readonly truncated?: true;
}

export interface ProvisionSolver {
  readonly name: string;
  solve(input: ProvisionInput): ProvisionPlan | Promise<ProvisionPlan>;
}
