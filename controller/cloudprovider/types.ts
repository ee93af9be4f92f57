// The cloud-provider seam: everything the controller asks of a cloud, in one interface that the AWS
// provider (aws/) and the simulator (sim/) implement, and decorators (metrics, ICE filtering) wrap.
// Contracts follow Karpenter's cloudprovider.CloudProvider; the comments say what callers rely on.
import type {
  EC2NodeClass,
  InstanceType,
  NodeClaimInfo,
  NodePool,
  NodeSelectorRequirement,
  Resources,
  Taint,
} from '../../engine/index.ts';

/** What the lifecycle controller asks the cloud to launch for one NodeClaim. */
export interface LaunchRequest {
  readonly nodeClaimName: string;
  readonly nodePoolName: string;
  /** The NodeClaim's node class (EC2NodeClass name). */
  readonly nodeClassName: string;
  /** The NodeClaim's requirements: instance types (price-ordered), capacity types, zones, labels. */
  readonly requirements: readonly NodeSelectorRequirement[];
  /** Pod requests plus daemonset overhead: the launched type must fit them. */
  readonly requests: Resources;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly startupTaints: readonly Taint[];
  /** Instance tags from the NodePool/NodeClaim (the provider adds its own). */
  readonly tags?: Readonly<Record<string, string>>;
  /**
   * The NodeOverlays of the NodeClaim's NodePool (feature gate NodeOverlay), applied to the instance types the
   * provider lists for the launch: the launch fits, filters and prices against the catalog the plan saw, as
   * Karpenter's AWS provider applies the overlay store in Create. Absent for a NodeClaim without a NodePool.
   * Throws UnevaluatedNodePoolError while the overlays have not been evaluated for the pool.
   */
  readonly overlay?: (types: readonly InstanceType[]) => InstanceType[];
}

/** A launched instance as the controller sees it: enough to fill the NodeClaim's status and labels. */
export interface Instance {
  /** `aws:///<zone>/<instance-id>` on AWS. */
  readonly providerID: string;
  readonly instanceType: string;
  readonly zone: string;
  readonly capacityType: 'on-demand' | 'spot' | 'reserved';
  readonly imageID?: string;
  readonly capacity: Resources;
  readonly allocatable: Resources;
  /** Labels resolved by the provider (instance-type labels, zone, zone-id, capacity type, ...). */
  readonly labels: Readonly<Record<string, string>>;
  /** Provider annotations (node-class hash and version, instance profile, ...). */
  readonly annotations: Readonly<Record<string, string>>;
  /** ms since the epoch. */
  readonly launchTime: number;
  /** From the instance's tags: which NodeClaim / NodePool it belongs to (for list and garbage collection). */
  readonly nodeClaimName?: string;
  readonly nodePoolName?: string;
  readonly state: 'pending' | 'running' | 'stopping' | 'stopped' | 'shutting-down' | 'terminated';
}

/** The NodeClaim fields drift detection needs. */
export interface DriftQuery {
  readonly nodeClaimName: string;
  readonly providerID: string;
  readonly nodeClassName: string;
  readonly imageID?: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/** The drift query for a launched NodeClaim; undefined before it has a providerID. */
export function driftQueryOf(claim: NodeClaimInfo): DriftQuery | undefined {
  if (!claim.providerId) return undefined;
  return {
    nodeClaimName: claim.name,
    providerID: claim.providerId,
    nodeClassName: claim.nodeClassRef.name,
    ...(claim.imageId ? { imageID: claim.imageId } : {}),
    labels: claim.labels,
    annotations: claim.annotations,
  };
}

export type DriftReason =
  | 'NodeClassDrift'
  | 'AMIDrift'
  | 'SecurityGroupDrift'
  | 'SubnetDrift'
  | 'CapacityReservationDrift'
  | 'PlacementGroupDrift';

/** A parsed interruption event for one or more instances. */
export type InterruptionEvent =
  | {
      readonly kind: 'spotInterruption';
      readonly id: string;
      readonly instanceIds: readonly string[];
      readonly time: number;
    }
  | {
      readonly kind: 'rebalanceRecommendation';
      readonly id: string;
      readonly instanceIds: readonly string[];
      readonly time: number;
    }
  | {
      readonly kind: 'scheduledChange';
      readonly id: string;
      readonly instanceIds: readonly string[];
      readonly time: number;
    }
  | {
      readonly kind: 'stateChange';
      readonly id: string;
      readonly instanceIds: readonly string[];
      readonly state: string;
      readonly time: number;
    }
  | {
      readonly kind: 'capacityReservationInterruption';
      readonly id: string;
      readonly instanceIds: readonly string[];
      readonly time: number;
    }
  | { readonly kind: 'noop'; readonly id: string; readonly detail: string; readonly time: number };

/**
 * Where interruption events come from (SQS on AWS; injected by scenarios in the simulator). A message the
 * source cannot parse never reaches the controller: the source counts it (message_type "unparseable") and
 * deletes it itself.
 */
export interface InterruptionSource {
  /** Waits (long-polls) for the next batch; resolves [] on abort or when nothing arrived. */
  receive(signal: AbortSignal): Promise<ReadonlyArray<{ readonly event: InterruptionEvent; readonly handle: string }>>;
  /** Acknowledges a handled (or unparseable) message so it is not delivered again. */
  acknowledge(handle: string): Promise<void>;
  /**
   * Optional. The interruption controller calls it for each NodeClaim a spot interruption or a
   * capacity-reservation interruption hits, with the capacity the NodeClaim ran on, so the provider keeps
   * that offering (spot: type and zone) or reservation out of launches for a while, as Karpenter's
   * interruption controller does with its unavailable-offerings cache (docs/karpenter/aws-provider.md §6).
   */
  markUnavailable?(event: InterruptionEvent, capacity: InterruptedCapacity): void;
}

/** What an interrupted NodeClaim ran on, from its labels. */
export interface InterruptedCapacity {
  readonly instanceType?: string;
  readonly zone?: string;
  readonly capacityType?: string;
  /** `karpenter.k8s.aws/capacity-reservation-id`, for reserved capacity. */
  readonly reservationId?: string;
}

/** What resolving a node class produced; the node-class controller writes it back. */
export interface NodeClassStatusResult {
  /** The whole status in the API server's shape (RFC 3339 times), conditions and Ready among them. */
  readonly status: Readonly<Record<string, unknown>>;
  /** Annotations for the node class (on AWS the static drift hash and its version). */
  readonly annotations: Readonly<Record<string, string>>;
  /**
   * NodeClaims of this class whose value for `key` differs get `values` written (a hash-version change
   * rewrites their hashes instead of drifting them).
   */
  readonly nodeClaimAnnotations?: { readonly key: string; readonly values: Readonly<Record<string, string>> };
  /** When to resolve again. */
  readonly requeueAfterMs: number;
  /** Cloud calls that failed; the status fields they feed kept their previous values. */
  readonly errors: readonly Error[];
}

/** The provider's side of Karpenter's EC2NodeClass controller: resolution and clean-up. */
export interface NodeClassProvider {
  /** Resolves subnets, security groups, AMIs, the instance profile and the conditions. */
  resolve(nodeClass: EC2NodeClass): Promise<NodeClassStatusResult>;
  /** Deletes what the provider made for the class; called once no NodeClaim uses it. */
  finalize(nodeClass: EC2NodeClass): Promise<void>;
}

/** What the provider's instance tagging did for one NodeClaim. */
export type TagResult =
  /** Tags were written (callers rate-limit these writes). */
  | { readonly kind: 'tagged'; readonly tags: Readonly<Record<string, string>> }
  /** The instance already had every tag. */
  | { readonly kind: 'unchanged' }
  /** The NodeClaim's providerID is not one of this provider's: nothing to tag, and retrying will not help. */
  | { readonly kind: 'invalid'; readonly reason: string };

/**
 * Tags on a registered node's instance that only exist once the node does (the AWS provider's nodeclaim.tagging
 * controller: Name, karpenter.sh/nodeclaim, eks:eks-cluster-name).
 */
export interface InstanceTagging {
  /** Annotations that mark a NodeClaim whose instance is tagged; a NodeClaim with all of them is left alone. */
  readonly taggedAnnotations: Readonly<Record<string, string>>;
  /** Adds the tags the instance lacks. Throws NodeClaimNotFoundError once the instance is gone. */
  tag(claim: { readonly name: string; readonly nodeName: string; readonly providerID: string }): Promise<TagResult>;
}

/**
 * A node condition the cloud provider calls unhealthy (Karpenter's cloudprovider.RepairPolicy): a Node whose
 * condition `conditionType` has had status `conditionStatus` for `tolerationMs` is replaced by node repair.
 */
export interface RepairPolicy {
  readonly conditionType: string;
  readonly conditionStatus: 'True' | 'False' | 'Unknown';
  readonly tolerationMs: number;
}

export interface CloudProvider {
  readonly name: string;
  /**
   * Launches one instance for the request. Throws InsufficientCapacityError when no offering could be
   * launched (the caller deletes the NodeClaim and provisioning retries elsewhere), NodeClassNotReadyError
   * when the node class cannot be used yet, CreateError otherwise.
   */
  create(req: LaunchRequest): Promise<Instance>;
  /**
   * Terminates the instance. Must throw NodeClaimNotFoundError once the instance is gone, and
   * InstanceNotOwnedError, terminating nothing, for an instance this cluster's controller did not launch
   * (on AWS: one without the cluster's tags).
   */
  delete(providerID: string): Promise<void>;
  /** Must throw NodeClaimNotFoundError when the instance does not exist (or is terminated). */
  get(providerID: string): Promise<Instance>;
  /** Every instance this controller launched that still exists (for garbage collection). */
  list(): Promise<Instance[]>;
  /** Instance types with offerings for a NodePool (its node class decides zones and availability). */
  getInstanceTypes(nodePool: NodePool): Promise<InstanceType[]>;
  /** A drift reason for the NodeClaim's node class, or undefined. */
  isDrifted(q: DriftQuery): Promise<DriftReason | undefined>;
  /**
   * The node conditions this provider calls unhealthy, each with how long it is tolerated. Node repair
   * (feature gate NodeRepair) runs only for a provider with at least one.
   */
  repairPolicies(): readonly RepairPolicy[];
  /** The interruption feed, when the provider has one. */
  readonly interruptions?: InterruptionSource;
  /** Node-class resolution (the node-class controller runs when the provider has it). */
  readonly nodeClasses?: NodeClassProvider;
  /** Post-registration instance tags (the nodeclaim.tagging controller runs when the provider has it). */
  readonly instanceTagging?: InstanceTagging;
  /** Background work (price and instance-type refreshes); the operator calls it from start(). */
  start?(): void;
  /** Stops the background work; the operator calls it from stop(). */
  stop?(): Promise<void> | void;
}

// ---------------------------------------------------------------------------------------------------
// Errors

export class NodeClaimNotFoundError extends Error {
  override name = 'NodeClaimNotFoundError';
}

export interface UnavailableOffering {
  readonly instanceType: string;
  readonly zone: string;
  readonly capacityType: string;
  readonly code: string;
}

export class InsufficientCapacityError extends Error {
  override name = 'InsufficientCapacityError';
  constructor(
    message: string,
    readonly offerings: readonly UnavailableOffering[] = [],
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export class NodeClassNotReadyError extends Error {
  override name = 'NodeClassNotReadyError';
}

/** The instance exists but is not this cluster's (delete refused it). */
export class InstanceNotOwnedError extends Error {
  override name = 'InstanceNotOwnedError';
}

/** A launch failure that is not about capacity, with a reason for the Launched condition. */
export class CreateError extends Error {
  override name = 'CreateError';
  constructor(
    message: string,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export const isNodeClaimNotFound = (e: unknown): e is NodeClaimNotFoundError =>
  e instanceof Error && e.name === 'NodeClaimNotFoundError';
export const isInsufficientCapacity = (e: unknown): e is InsufficientCapacityError =>
  e instanceof Error && e.name === 'InsufficientCapacityError';
export const isNodeClassNotReady = (e: unknown): e is NodeClassNotReadyError =>
  e instanceof Error && e.name === 'NodeClassNotReadyError';
export const isCreateError = (e: unknown): e is CreateError => e instanceof Error && e.name === 'CreateError';
export const isInstanceNotOwned = (e: unknown): e is InstanceNotOwnedError =>
  e instanceof Error && e.name === 'InstanceNotOwnedError';
