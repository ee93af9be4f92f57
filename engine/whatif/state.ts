// The cluster as the plan leaves it: pods nominated to existing nodes bound there, and every NodeClaim the
// plan launches turned into a (virtual) initialized StateNode holding its pods, so a consolidation planner
// can look at the result of provisioning as if it had happened.
import { add } from '../domain/resources.ts';
import type { InstanceType, Pod, Snapshot, StateNode } from '../domain/types.ts';
import {
  CAPACITY_TYPE_LABEL,
  HOSTNAME_LABEL,
  INSTANCE_TYPE_LABEL,
  NODEPOOL_LABEL,
  ZONE_LABEL,
} from '../scheduling/labels.ts';
import { singleValueLabels } from '../scheduling/requirements.ts';
import type { NewNodeClaimPlan, ProvisionPlan } from '../model/types.ts';
import { launchOf } from './prices.ts';
import { boundPod } from '../disruption/apply.ts';

export interface VirtualNode {
  readonly name: string;
  readonly claim: NewNodeClaimPlan;
  readonly node: StateNode;
  readonly instanceType?: InstanceType;
  readonly zone?: string;
  readonly capacityType?: string;
}

/**
 * A StateNode for a planned NodeClaim, named `name`, with its pods bound. `load` (zone -> nodes of the pool)
 * tells equally cheap zones apart; the node's zone is counted into it.
 */
export function virtualNode(
  s: Snapshot,
  name: string,
  claim: NewNodeClaimPlan,
  podsByUid: ReadonlyMap<string, Pod>,
  load?: Map<string, number>,
): VirtualNode {
  const { instanceType, offering } = launchOf(claim, s.instanceTypes.get(claim.nodePool) ?? [], load);
  if (offering && load) load.set(offering.zone, (load.get(offering.zone) ?? 0) + 1);
  const labels: Record<string, string> = {
    ...(instanceType ? singleValueLabels(instanceType.requirements) : {}),
    ...claim.labels,
    [NODEPOOL_LABEL]: claim.nodePool,
    [HOSTNAME_LABEL]: name,
    'karpenter.sh/initialized': 'true',
    'karpenter.sh/registered': 'true',
    ...(instanceType ? { [INSTANCE_TYPE_LABEL]: instanceType.name } : {}),
    ...(offering ? { [ZONE_LABEL]: offering.zone, [CAPACITY_TYPE_LABEL]: offering.capacityType } : {}),
  };
  const node: StateNode = {
    name,
    nodeClaimName: name,
    hasNode: true,
    hasNodeClaim: true,
    managed: true,
    nodePoolName: claim.nodePool,
    labels,
    annotations: {},
    taints: claim.taints,
    startupTaints: [],
    capacity: instanceType?.capacity ?? claim.requests,
    allocatable: instanceType?.allocatable ?? claim.requests,
    pods: claim.pods.flatMap((u) => (podsByUid.has(u) ? [boundPod(podsByUid.get(u)!, name)] : [])),
    registered: true,
    initialized: true,
    ready: true,
    markedForDeletion: false,
    deleting: false,
    creationTimestamp: s.now,
    conditions: { consolidatable: true, initializedAt: s.now },
  };
  return {
    name,
    claim,
    node,
    ...(instanceType ? { instanceType } : {}),
    ...(offering ? { zone: offering.zone, capacityType: offering.capacityType } : {}),
  };
}

/** A VirtualNode for a node the consolidation planner already launched on its own snapshot (same type and zone). */
export function launchedVirtual(
  claim: NewNodeClaimPlan,
  node: StateNode,
  podsByUid: ReadonlyMap<string, Pod>,
  s: Snapshot,
): VirtualNode {
  const it = (s.instanceTypes.get(claim.nodePool) ?? []).find((t) => t.name === node.labels[INSTANCE_TYPE_LABEL]);
  const pods = claim.pods.flatMap((u) => (podsByUid.has(u) ? [boundPod(podsByUid.get(u)!, node.name)] : []));
  return {
    name: node.name,
    claim,
    node: { ...node, pods },
    ...(it ? { instanceType: it } : {}),
    ...(node.labels[ZONE_LABEL] ? { zone: node.labels[ZONE_LABEL] } : {}),
    ...(node.labels[CAPACITY_TYPE_LABEL] ? { capacityType: node.labels[CAPACITY_TYPE_LABEL] } : {}),
  };
}

/** Names new nodes `<nodepool>-new-<n>`, numbered across the whole run. */
export class Namer {
  private n = 0;
  next(pool: string): string {
    return `${pool}-new-${++this.n}`;
  }
}

/** The snapshot after the provisioning plan: pending pods placed, new NodeClaims as initialized nodes. */
export function afterProvisioning(
  s: Snapshot,
  plan: ProvisionPlan,
  virtual: readonly VirtualNode[],
  podsByUid: ReadonlyMap<string, Pod>,
): Snapshot {
  const nodes = s.nodes.map((n) => {
    const extra = plan.existing.get(n.name) ?? [];
    if (extra.length === 0) return n;
    return {
      ...n,
      pods: [...n.pods, ...extra.flatMap((u) => (podsByUid.has(u) ? [boundPod(podsByUid.get(u)!, n.name)] : []))],
    };
  });
  const placed = new Set([...plan.existing.values()].flat().concat(plan.newNodeClaims.flatMap((c) => c.pods)));
  return {
    ...s,
    nodes: [...nodes, ...virtual.map((v) => v.node)],
    pendingPods: s.pendingPods.filter((p) => !placed.has(p.uid)),
  };
}

/** Requests of a node's active pods (daemonset pods included). */
export function requested(n: StateNode): Record<string, number> {
  let r: Record<string, number> = {};
  for (const p of n.pods)
    if (p.phase !== 'Succeeded' && p.phase !== 'Failed' && p.deletionTimestamp === undefined) r = add(r, p.requests);
  return r;
}
