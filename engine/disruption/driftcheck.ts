// Drift detection the NodeClaim drift controller calls (docs/karpenter/disruption.md §4.1): the first reason found, in
// Karpenter's order: the template hash changed (NodePoolDrifted), the labels no longer meet the pool's
// requirements (RequirementsDrifted), the instance type is gone (InstanceTypeNotFound, only for NodeClaims
// older than an hour), or the provider's node-class drift (the StateNode's nodeClassDrift field).
import type { NodePool, Snapshot, StateNode } from '../domain/types.ts';
import {
  CAPACITY_TYPE_LABEL,
  INSTANCE_TYPE_LABEL,
  NODEPOOL_HASH_ANNOTATION,
  NODEPOOL_HASH_VERSION_ANNOTATION,
  ZONE_LABEL,
} from '../scheduling/labels.ts';
import { compatible, fromLabels, fromSelectorRequirements } from '../scheduling/requirements.ts';
import { typeByName } from './pricing.ts';

type DriftReason = 'NodePoolDrifted' | 'RequirementsDrifted' | 'InstanceTypeNotFound' | (string & {});

/** Instance-type existence is checked only for NodeClaims older than this. */
export const INSTANCE_TYPE_CHECK_AGE_MS = 3600_000;

/** Static drift: both carry a hash and the same hash version, and the hashes differ. */
function hashDrifted(pool: NodePool, node: StateNode): boolean {
  const hash = node.annotations[NODEPOOL_HASH_ANNOTATION];
  const version = node.annotations[NODEPOOL_HASH_VERSION_ANNOTATION];
  if (pool.hash === undefined || pool.hashVersion === undefined || hash === undefined || version === undefined)
    return false;
  return version === pool.hashVersion && hash !== pool.hash;
}

/** The node's labels, read as requirements, no longer meet the pool's template requirements. */
function requirementsDrifted(pool: NodePool, node: StateNode): boolean {
  return compatible(fromLabels(node.labels), fromSelectorRequirements(pool.template.requirements)) !== undefined;
}

/**
 * The node's instance type is missing from the pool's types, or none of its offerings (available or not)
 * matches the node's zone and capacity type (a reserved node also matches on-demand offerings).
 */
function instanceTypeNotFound(s: Snapshot, pool: NodePool, node: StateNode): boolean {
  const name = node.labels[INSTANCE_TYPE_LABEL];
  if (name === undefined) return true;
  const it = typeByName(s.instanceTypes.get(pool.name), name);
  if (!it) return true;
  const zone = node.labels[ZONE_LABEL];
  const ct = node.labels[CAPACITY_TYPE_LABEL];
  const cts = ct === 'reserved' ? ['reserved', 'on-demand'] : ct === undefined ? undefined : [ct];
  return !it.offerings.some(
    (o) => (zone === undefined || o.zone === zone) && (cts === undefined || cts.includes(o.capacityType)),
  );
}

interface DriftCheckOptions {
  /** Check instance-type existence (the controller caches a success for 30 min). Default: when older than 1 h. */
  readonly checkInstanceType?: boolean;
}

/** The node's drift reason, or undefined. Unmanaged nodes and nodes of unknown pools never drift. */
export function driftReason(s: Snapshot, node: StateNode, opts: DriftCheckOptions = {}): DriftReason | undefined {
  if (!node.hasNodeClaim || node.nodePoolName === undefined) return undefined;
  const pool = s.nodePools.find((p) => p.name === node.nodePoolName);
  if (!pool) return undefined;
  if (hashDrifted(pool, node)) return 'NodePoolDrifted';
  if (requirementsDrifted(pool, node)) return 'RequirementsDrifted';
  const check = opts.checkInstanceType ?? s.now - node.creationTimestamp > INSTANCE_TYPE_CHECK_AGE_MS;
  if (check && instanceTypeNotFound(s, pool, node)) return 'InstanceTypeNotFound';
  return node.nodeClassDrift || undefined;
}
