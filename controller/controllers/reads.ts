// The kinds each controller reads from cluster state. operator/runtime.ts starts a controller only once
// every kind it lists has synced (its first list succeeded), so none acts on a cache that has not listed:
// a drain that sees no pods, or a NodeClaim finalizer that sees no Node, would otherwise terminate an
// instance with its pods still on it. A controller that reads a kind must list it here.
import type { Kind } from '../operator/kube.ts';

/** Claims and the Nodes they join with (termination, garbage collection). */
export const CLAIMS_AND_NODES: readonly Kind[] = ['NodeClaim', 'Node'];

/** A state node: a NodeClaim joined with its Node and the pods bound to it. */
export const STATE_NODES: readonly Kind[] = ['NodeClaim', 'Node', 'Pod'];

/**
 * Everything a provisioning or disruption decision reads (the DRA kinds only when they are watched; the
 * Service and workload kinds only with default topology spread).
 */
export const EVERY_KIND: readonly Kind[] = [
  'Node',
  'NodeClaim',
  'NodePool',
  'EC2NodeClass',
  'DaemonSet',
  'Pod',
  'PodDisruptionBudget',
  'ResourceSlice',
  'ResourceClaim',
  'ResourceClaimTemplate',
  'DeviceClass',
  'Service',
  'ReplicaSet',
  'StatefulSet',
  'ReplicationController',
];
