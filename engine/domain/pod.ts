// Domain types of pods and what they select and tolerate (labels, selectors, affinity, taints, spread
// constraints), re-exported by types.ts. Readonly data in the units types.ts describes.
import type { PodResourceClaim } from './dra.ts';
import type { Resources } from './resources.ts';
import type { Brand } from './types.ts';

// ---------------------------------------------------------------------------------------------------
// Labels, selectors, taints

export type Labels = Readonly<Record<string, string>>;

/** Operators of node selector requirements. Gte/Lte exist only on NodePool/NodeClaim requirements. */
export type Operator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt' | 'Gte' | 'Lte';

export interface NodeSelectorRequirement {
  readonly key: string;
  readonly operator: Operator;
  readonly values: readonly string[];
  /** NodePool/NodeClaim requirements only: the instance-type options must span this many values. */
  readonly minValues?: number;
}

/** One ORed term of required node affinity; its expressions are ANDed. */
export interface NodeSelectorTerm {
  readonly matchExpressions: readonly NodeSelectorRequirement[];
  /** Karpenter ignores pods whose required terms use matchFields; kept so validation can say so. */
  readonly matchFields?: readonly NodeSelectorRequirement[];
}

export interface PreferredSchedulingTerm {
  readonly weight: number;
  readonly preference: NodeSelectorTerm;
}

export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: LabelSelectorOperator;
  readonly values: readonly string[];
}

/** A label selector. An empty selector ({}) matches everything; an absent one (undefined) matches nothing. */
export interface LabelSelector {
  readonly matchLabels?: Labels;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: TaintEffect;
}

export interface Toleration {
  readonly key?: string;
  readonly operator?: 'Exists' | 'Equal' | 'Lt' | 'Gt';
  readonly value?: string;
  readonly effect?: TaintEffect;
  readonly tolerationSeconds?: number;
}

// ---------------------------------------------------------------------------------------------------
// Pods

export interface PodAffinityTerm {
  readonly labelSelector?: LabelSelector;
  readonly namespaces?: readonly string[];
  readonly namespaceSelector?: LabelSelector;
  readonly topologyKey: string;
  readonly matchLabelKeys?: readonly string[];
  readonly mismatchLabelKeys?: readonly string[];
}

export interface WeightedPodAffinityTerm {
  readonly weight: number;
  readonly podAffinityTerm: PodAffinityTerm;
}

export interface Affinity {
  readonly nodeAffinity?: {
    readonly required?: readonly NodeSelectorTerm[];
    readonly preferred?: readonly PreferredSchedulingTerm[];
  };
  readonly podAffinity?: {
    readonly required?: readonly PodAffinityTerm[];
    readonly preferred?: readonly WeightedPodAffinityTerm[];
  };
  readonly podAntiAffinity?: {
    readonly required?: readonly PodAffinityTerm[];
    readonly preferred?: readonly WeightedPodAffinityTerm[];
  };
}

export interface TopologySpreadConstraint {
  readonly maxSkew: number;
  readonly topologyKey: string;
  readonly whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
  readonly labelSelector?: LabelSelector;
  readonly minDomains?: number;
  readonly nodeAffinityPolicy?: 'Honor' | 'Ignore';
  readonly nodeTaintsPolicy?: 'Honor' | 'Ignore';
  readonly matchLabelKeys?: readonly string[];
}

export interface HostPort {
  readonly ip: string;
  readonly port: number;
  readonly protocol: string;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export interface OwnerRef {
  readonly kind: string;
  readonly name: string;
  readonly uid?: string;
  readonly apiVersion?: string;
  readonly controller?: boolean;
}

export type PodUid = Brand<string, 'PodUid'>;

export interface Pod {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  readonly labels: Labels;
  readonly annotations: Labels;
  /**
   * Effective requests (containers, sidecars, init containers, pod overhead, per Kubernetes'
   * component-helpers), plus `pods: 1`, as Karpenter counts each pod as one unit of the `pods` resource.
   */
  readonly requests: Resources;
  readonly nodeSelector: Labels;
  readonly affinity?: Affinity;
  readonly tolerations: readonly Toleration[];
  readonly topologySpreadConstraints: readonly TopologySpreadConstraint[];
  readonly hostPorts: readonly HostPort[];
  readonly priority?: number;
  readonly priorityClassName?: string;
  readonly owner?: OwnerRef;
  /** ms since the epoch; orders equal-sized pods in the scheduling queue. */
  readonly creationTimestamp: number;
  readonly nodeName?: string;
  readonly phase: PodPhase;
  readonly deletionTimestamp?: number;
  readonly startTime?: number;
  readonly terminationGracePeriodSeconds?: number;
  /** The pod's Ready condition (PDB unhealthyPodEvictionPolicy AlwaysAllow lets unready pods go). */
  readonly ready?: boolean;
  /** kube-scheduler marked it PodScheduled=False, reason Unschedulable. */
  readonly unschedulable?: boolean;
  readonly nominatedNodeName?: string;
  /**
   * Volume topology, resolved at the boundary from the pod's PVCs (bound PV node affinity or the storage
   * class's allowedTopologies): the pod must land where one of these alternatives holds.
   */
  readonly volumeRequirements?: readonly (readonly NodeSelectorRequirement[])[];
  /** Names of PVCs, for volume usage and validation messages. */
  readonly pvcNames?: readonly string[];
  /** Set when the pod cannot be provisioned for a reason found at the boundary (a PVC problem, DRA). */
  readonly ignoredReason?: string;
  /** spec.resourceClaims (Dynamic Resource Allocation), with generated claim names from the status. */
  readonly resourceClaims?: readonly PodResourceClaim[];
  /** Claim names listed in containers[]/initContainers[].resources.claims. */
  readonly containerClaims?: readonly string[];
}
