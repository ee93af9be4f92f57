// Domain types: what the engine reasons about, already parsed and validated at the boundary
// (engine/api parses Kubernetes objects into these). Everything is readonly data; quantities are integers
// in the units of resources.ts, times are milliseconds since the epoch, durations are milliseconds and
// prices are US dollars per hour (the solver compares them as integer micro-dollars, see money.ts).
// Pods are in pod.ts and what they select and tolerate in selectors.ts, both re-exported here.
import type { DeviceTemplate, DraState } from './dra.ts';
import type { Pod, TopologySpreadConstraint } from './pod.ts';
import type { Resources } from './resources.ts';
import type { LabelSelector, Labels, NodeSelectorRequirement, Taint } from './selectors.ts';
export type { Resources };
export * from './pod.ts';
export * from './selectors.ts';

// ---------------------------------------------------------------------------------------------------
// Instance types and offerings

export type CapacityType = 'on-demand' | 'spot' | 'reserved';

export interface Offering {
  readonly zone: string;
  readonly zoneId?: string;
  readonly capacityType: CapacityType;
  /** US dollars per hour. */
  readonly price: number;
  readonly available: boolean;
  readonly reservationId?: string;
  readonly reservationCapacity?: number;
  /** A NodeOverlay set this offering's price (Karpenter's IsPriceOverlaid). */
  readonly priceOverlaid?: true;
}

/** Requirements as the engine holds them: one per key, already intersected. See scheduling/requirements.ts. */
export interface Requirement {
  readonly key: string;
  /** false: the allowed set is exactly `values`; true: everything except `values`. */
  readonly complement: boolean;
  readonly values: ReadonlySet<string>;
  /** Inclusive integer bounds (from Gt/Lt/Gte/Lte). */
  readonly gte?: number;
  readonly lte?: number;
  readonly minValues?: number;
}

export type Requirements = ReadonlyMap<string, Requirement>;

export interface InstanceType {
  readonly name: string;
  /** Labels as requirements: every well-known label is defined (possibly DoesNotExist). */
  readonly requirements: Requirements;
  readonly capacity: Resources;
  /** kube-reserved + system-reserved + eviction threshold. */
  readonly overhead: Resources;
  /** capacity - overhead, per resource present in capacity. */
  readonly allocatable: Resources;
  readonly offerings: readonly Offering[];
  /**
   * DRA devices a node of this type publishes once running (Karpenter's ResourceSlice templates). When absent
   * the engine derives NVIDIA GPUs from `nvidia.com/gpu` capacity (engine/dra/templates.ts).
   */
  readonly deviceTemplates?: readonly DeviceTemplate[];
  /** A NodeOverlay added capacity to this type (Karpenter's IsCapacityOverlayApplied). */
  readonly capacityOverlaid?: true;
}

// ---------------------------------------------------------------------------------------------------
// NodePools, node classes

export type ConsolidationPolicy = 'WhenEmpty' | 'WhenEmptyOrUnderutilized' | 'Balanced';
export type DisruptionReason = 'Underutilized' | 'Empty' | 'Drifted';

export interface Budget {
  /** "N" or "P%" as written; evaluated (and fail-closed when invalid) by the disruption engine. */
  readonly nodes: string;
  readonly reasons?: readonly DisruptionReason[];
  /** Cron in UTC (5 fields or @hourly/@daily/...). Present iff duration is. */
  readonly schedule?: string;
  /** ms. */
  readonly duration?: number;
}

export interface NodeClassRef {
  readonly group: string;
  readonly kind: string;
  readonly name: string;
}

export interface NodePool {
  readonly name: string;
  readonly uid?: string;
  readonly generation?: number;
  /** spec.weight, 0 when unset. */
  readonly weight: number;
  readonly template: {
    readonly labels: Labels;
    readonly annotations: Labels;
    readonly taints: readonly Taint[];
    readonly startupTaints: readonly Taint[];
    readonly requirements: readonly NodeSelectorRequirement[];
    readonly nodeClassRef: NodeClassRef;
    /** ms; null = Never. Default 720h. */
    readonly expireAfter: number | null;
    /** ms. */
    readonly terminationGracePeriod?: number;
  };
  /** spec.limits, including the `nodes` pseudo-resource when set. Absent keys are unlimited. */
  readonly limits: Resources;
  readonly disruption: {
    readonly consolidationPolicy: ConsolidationPolicy;
    /** ms; null = Never. Default 0. */
    readonly consolidateAfter: number | null;
    /** Default [{nodes: "10%"}]. */
    readonly budgets: readonly Budget[];
  };
  /** Static NodePool (spec.replicas). Static pools are not provisioned by the scheduler. */
  readonly replicas?: number;
  /** Ready = ValidationSucceeded and NodeClassReady. Only ready pools provision. */
  readonly ready: boolean;
  readonly deleting?: boolean;
  /** karpenter.sh/nodepool-hash (and its version) of the template, for static drift. */
  readonly hash?: string;
  readonly hashVersion?: string;
}

/** What the engine needs of a node class (EC2NodeClass), resolved by the controller. */
export interface NodeClass {
  readonly group: string;
  readonly kind: string;
  readonly name: string;
  readonly ready: boolean;
  /** Zones that have a selected subnet; offerings outside them are unavailable. Empty = unknown (no filter). */
  readonly zones: readonly string[];
}

// ---------------------------------------------------------------------------------------------------
// Cluster state

interface NodeConditions {
  /** Drifted=True with its reason and transition time. */
  readonly drifted?: { readonly reason: string; readonly since: number };
  /** Consolidatable=True (set by the controller from consolidateAfter). */
  readonly consolidatable?: boolean;
  /** Initialized=True transition time. */
  readonly initializedAt?: number;
}

/**
 * A node as cluster state sees it: a Node and/or its NodeClaim. In-flight NodeClaims (launched, not yet
 * registered or initialized) are StateNodes too, with hasNode=false or initialized=false.
 */
export interface StateNode {
  /** The Node name, or the NodeClaim name while there is no Node. */
  readonly name: string;
  readonly providerId?: string;
  readonly nodeClaimName?: string;
  readonly hasNode: boolean;
  readonly hasNodeClaim: boolean;
  /** Has the karpenter.sh/nodepool label (a NodeClaim created from a NodePool). */
  readonly managed: boolean;
  readonly nodePoolName?: string;
  readonly labels: Labels;
  readonly annotations: Labels;
  readonly taints: readonly Taint[];
  /** The NodeClaim's startup taints (ignored while the node is not initialized). */
  readonly startupTaints: readonly Taint[];
  readonly capacity: Resources;
  readonly allocatable: Resources;
  /** Pods bound to this node (any phase; the engine filters terminal and terminating ones). */
  readonly pods: readonly Pod[];
  readonly registered: boolean;
  readonly initialized: boolean;
  readonly ready: boolean;
  /** Marked for deletion by a disruption command in flight. */
  readonly markedForDeletion: boolean;
  /** The Node or NodeClaim has a deletion timestamp. */
  readonly deleting: boolean;
  /** NodeClaim InstanceTerminating=True. */
  readonly instanceTerminating?: boolean;
  /** Nomination expiry (ms); nominated nodes are not disruption candidates. */
  readonly nominatedUntil?: number;
  readonly creationTimestamp: number;
  /** NodeClaim status.lastPodEventTime. */
  readonly lastPodEventTime?: number;
  readonly conditions: NodeConditions;
  /** NodeClaim spec.terminationGracePeriod (ms). */
  readonly terminationGracePeriod?: number;
  /** NodeClaim spec.expireAfter (ms); null = Never. */
  readonly expireAfter?: number | null;
  /** Capacity-buffer virtual pods placed on this node by the last provisioning pass. */
  readonly bufferPods?: number;
  /** The provider's drift reason for the node class (NodeClassDrift hook), if any. */
  readonly nodeClassDrift?: string;
}

export interface DaemonSet {
  readonly namespace: string;
  readonly name: string;
  /** The newest pod of the DaemonSet, or one synthesised from its template (required affinity restored). */
  readonly pod: Pod;
}

export interface PodDisruptionBudget {
  readonly namespace: string;
  readonly name: string;
  readonly selector: LabelSelector;
  /** status.disruptionsAllowed */
  readonly disruptionsAllowed: number;
  /** spec.maxUnavailable / spec.minAvailable as written ("0", "0%", "100%", 1, ...). */
  readonly maxUnavailable?: string | number;
  readonly minAvailable?: string | number;
  readonly unhealthyPodEvictionPolicy?: 'IfHealthyBudget' | 'AlwaysAllow';
}

export type PreferencePolicy = 'Respect' | 'Ignore';
type MinValuesPolicy = 'Strict' | 'BestEffort';

export interface EngineOptions {
  readonly preferencePolicy: PreferencePolicy;
  readonly minValuesPolicy: MinValuesPolicy;
  readonly featureGates: {
    readonly spotToSpotConsolidation: boolean;
    readonly reservedCapacity: boolean;
  };
  /** Instance types kept on a new NodeClaim (Karpenter: 600). */
  readonly maxInstanceTypes: number;
  /**
   * Karpenter's IGNORE_DRA_REQUESTS (default true): pods with resource claims are not provisioned and daemon
   * pods with claims are left out of daemonset overhead. false: claims are allocated in simulation.
   */
  readonly ignoreDRARequests?: boolean;
  /**
   * kube-scheduler's PodTopologySpread defaultConstraints (Karpenter's SCHEDULER_CONFIG): given to every pod to
   * place that has no spread constraints of its own, with a label selector deduced for it from the snapshot's
   * selectorSources (engine/scheduling/defaultspread.ts). Absent or empty: none.
   */
  readonly defaultTopologySpreadConstraints?: readonly TopologySpreadConstraint[];
}

export const DEFAULT_ENGINE_OPTIONS: EngineOptions = {
  preferencePolicy: 'Respect',
  minValuesPolicy: 'Strict',
  featureGates: { spotToSpotConsolidation: false, reservedCapacity: true },
  maxInstanceTypes: 600,
  ignoreDRARequests: true,
};

/** Everything one decision needs. Built by the controller (or a what-if job), never by the engine. */
export interface Snapshot {
  /** ms since the epoch, supplied by the caller. */
  readonly now: number;
  readonly nodePools: readonly NodePool[];
  readonly nodeClasses: readonly NodeClass[];
  /** Per NodePool name: its instance types with offerings (ICE-filtered, node-class-filtered). */
  readonly instanceTypes: ReadonlyMap<string, readonly InstanceType[]>;
  readonly nodes: readonly StateNode[];
  /** Pending pods known to cluster state (provisionable or not); bound pods live on their nodes. */
  readonly pendingPods: readonly Pod[];
  readonly daemonSets: readonly DaemonSet[];
  readonly pdbs: readonly PodDisruptionBudget[];
  readonly options: EngineOptions;
  /** DeviceClasses, ResourceSlices, ResourceClaims and ResourceClaimTemplates (absent: none). */
  readonly dra?: DraState;
  /** What default spread selectors are deduced from (needed only with defaultTopologySpreadConstraints). */
  readonly selectorSources?: SelectorSources;
}

/**
 * What kube-scheduler deduces a pod's default spread selector from: the Services of its namespace and its
 * controller when that is a ReplicaSet, StatefulSet or ReplicationController.
 */
export interface SelectorSources {
  /** Services; `selector` undefined is a nil selector, which selects nothing. */
  readonly services: readonly { readonly namespace: string; readonly name: string; readonly selector?: Labels }[];
  /** Selectors of ReplicaSets, StatefulSets and ReplicationControllers, by ownerKey(kind, namespace, name). */
  readonly owners: ReadonlyMap<string, LabelSelector>;
}

/** The key of a workload in SelectorSources.owners. */
export const ownerKey = (kind: string, namespace: string, name: string): string => `${kind}/${namespace}/${name}`;
