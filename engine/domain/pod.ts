// Domain types of pods: affinity, spread constraints, host ports, owners and the pod itself (what they select
// and tolerate is in selectors.ts), re-exported by types.ts. Readonly data in the units types.ts describes.
import type { PodResourceClaim } from './dra.ts';
import type { Resources } from './resources.ts';
import type {
  LabelSelector,
  Labels,
  NodeSelectorRequirement,
  NodeSelectorTerm,
  PreferredSchedulingTerm,
  Toleration,
} from './selectors.ts';

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
