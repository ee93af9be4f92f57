// Dynamic Resource Allocation (resource.k8s.io/v1) as the engine reasons about it: the devices drivers publish
// (ResourceSlice), the device classes, the claims pods reference (ResourceClaim / ResourceClaimTemplate) and
// what an instance type's node would publish once it runs. Parsed and validated at the boundary
// (engine/api/dra.ts); the supported subset of device selection is documented in docs/solver.md ("DRA").
import type { NodeSelectorTerm } from './selectors.ts';

/** A typed device attribute (exactly one of string, int, bool or version in the API). */
export interface DeviceAttribute {
  readonly kind: 'string' | 'int' | 'bool' | 'version';
  readonly value: string | number | boolean;
}

/** Counters a device consumes from one of its pool's shared counter sets while it is allocated. */
export interface DeviceCounterConsumption {
  readonly counterSet: string;
  readonly counters: Readonly<Record<string, number>>;
}

export interface Device {
  readonly name: string;
  /** Fully qualified names (`<domain>/<name>`); unqualified API names get the driver as their domain. */
  readonly attributes: Readonly<Record<string, DeviceAttribute>>;
  /** Fully qualified names, integer units (quantities rounded up, as Kubernetes' Value()). */
  readonly capacity: Readonly<Record<string, number>>;
  /** Several claims may share the device, each consuming part of its capacity (DRAConsumableCapacity). */
  readonly allowMultipleAllocations: boolean;
  readonly consumesCounters: readonly DeviceCounterConsumption[];
}

export interface CounterSet {
  readonly name: string;
  readonly counters: Readonly<Record<string, number>>;
}

/** A ResourceSlice: devices of one driver's pool, reachable from one node, a node selector, or all nodes. */
export interface ResourceSlice {
  readonly name: string;
  readonly driver: string;
  readonly pool: { readonly name: string; readonly generation: number; readonly resourceSliceCount: number };
  /** Exactly one of nodeName, nodeSelector, allNodes (perDeviceNodeSelection is not supported). */
  readonly nodeName?: string;
  readonly nodeSelector?: readonly NodeSelectorTerm[];
  readonly allNodes?: boolean;
  readonly devices: readonly Device[];
  readonly sharedCounters: readonly CounterSet[];
}

/**
 * One CEL selector, reduced to the supported subset: a conjunction of predicates. `unsupported` says why an
 * expression could not be reduced; a request that depends on it is not provisioned, with that reason.
 */
export interface DeviceSelector {
  readonly expression: string;
  readonly predicates?: readonly SelectorPredicate[];
  readonly unsupported?: string;
}

export type CompareOp = '==' | '!=' | '<' | '<=' | '>' | '>=';

export type SelectorPredicate =
  | { readonly kind: 'driver'; readonly op: '==' | '!='; readonly value: string }
  | {
      readonly kind: 'attribute';
      readonly name: string;
      readonly op: CompareOp;
      readonly value: string | number | boolean;
    }
  | { readonly kind: 'capacity'; readonly name: string; readonly op: CompareOp; readonly value: number };

export interface DeviceClass {
  readonly name: string;
  readonly selectors: readonly DeviceSelector[];
}

/** One request of a claim (spec.devices.requests[].exactly). */
export interface DeviceRequest {
  readonly name: string;
  readonly deviceClassName: string;
  readonly allocationMode: 'ExactCount' | 'All';
  /** ExactCount only (default 1). */
  readonly count: number;
  readonly selectors: readonly DeviceSelector[];
  /** capacity.requests, fully qualified names, integer units. */
  readonly capacity: Readonly<Record<string, number>>;
  /** Set when the request uses something the engine cannot evaluate (firstAvailable, adminAccess, ...). */
  readonly unsupported?: string;
}

export interface AllocatedDevice {
  readonly request: string;
  readonly driver: string;
  readonly pool: string;
  readonly device: string;
  /** status.allocation.devices.results[].consumedCapacity (shared devices). */
  readonly consumedCapacity?: Readonly<Record<string, number>>;
}

export interface ClaimSpec {
  readonly requests: readonly DeviceRequest[];
  /** Set when the claim uses constraints or features outside the supported subset. */
  readonly unsupported?: string;
}

export interface ResourceClaim extends ClaimSpec {
  readonly namespace: string;
  readonly name: string;
  /** status.allocation, when allocated. */
  readonly allocation?: { readonly devices: readonly AllocatedDevice[] };
  /** status.reservedFor: uids of the pods using the claim. */
  readonly reservedFor: readonly string[];
}

export interface ResourceClaimTemplate extends ClaimSpec {
  readonly namespace: string;
  readonly name: string;
}

/** What a new node of an instance type will publish once its drivers run (Karpenter's slice templates). */
export interface DeviceTemplate {
  readonly driver: string;
  readonly pool: string;
  readonly devices: readonly Device[];
  readonly sharedCounters?: readonly CounterSet[];
}

/** The DRA objects of the cluster, in the snapshot. */
export interface DraState {
  readonly deviceClasses: readonly DeviceClass[];
  readonly resourceSlices: readonly ResourceSlice[];
  readonly resourceClaims: readonly ResourceClaim[];
  readonly resourceClaimTemplates: readonly ResourceClaimTemplate[];
}

export const EMPTY_DRA: DraState = {
  deviceClasses: [],
  resourceSlices: [],
  resourceClaims: [],
  resourceClaimTemplates: [],
};

/** A pod's spec.resourceClaims entry, with the generated claim's name from status.resourceClaimStatuses. */
export interface PodResourceClaim {
  readonly name: string;
  readonly resourceClaimName?: string;
  readonly resourceClaimTemplateName?: string;
  /** For template entries: the ResourceClaim generated for this pod, once it exists. */
  readonly generatedClaimName?: string;
}

/** The annotation finalisation puts on NodeClaims whose pods request DRA devices (comma-separated, sorted). */
export const REQUESTED_DRA_DRIVERS_ANNOTATION = 'karpenter.sh/requested-dra-drivers';
