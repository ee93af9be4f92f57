// Joins a Node and its NodeClaim (by providerID) into the engine's StateNode (docs/karpenter/disruption.md §6.1,
// §6.3): before registration the NodeClaim speaks for the node (labels, taints, capacity); until
// initialization, zero or missing Node capacities are back-filled from the NodeClaim.
import type { NodeClaimInfo, NodeInfo, Pod, Resources, StateNode } from '../../engine/index.ts';
import { conditionsOf, transitionTime } from '../operator/conditions.ts';
import type { KubeObject } from '../operator/kube.ts';

export interface NodeEntry {
  readonly obj: KubeObject;
  readonly info: NodeInfo;
}

export interface NodeClaimEntry {
  readonly obj: KubeObject;
  readonly info: NodeClaimInfo;
}

interface JoinContext {
  readonly pods: readonly Pod[];
  readonly markedForDeletion: boolean;
  readonly nominatedUntil?: number;
  /** Capacity-buffer virtual pods the last provisioning pass placed here. */
  readonly bufferPods?: number;
}

function backfill(node: Resources, claim: Resources): Resources {
  const out: Record<string, number> = { ...claim };
  for (const [k, v] of Object.entries(node)) if (v !== 0) out[k] = v;
  return out;
}

export function joinStateNode(
  node: NodeEntry | undefined,
  claim: NodeClaimEntry | undefined,
  ctx: JoinContext,
): StateNode {
  if (!node && !claim) throw new Error('joinStateNode: needs a Node or a NodeClaim');
  const n = node?.info;
  const c = claim?.info;
  const managed = Boolean(c) || n?.nodePoolName !== undefined;
  const registered = managed ? Boolean(n?.registered) : true;
  const initialized = managed ? Boolean(n?.initialized) : true;
  const conds = conditionsOf(claim?.obj);
  const cond = (type: string) => conds.find((x) => x.type === type);
  const drifted = cond('Drifted');
  const conditions = {
    ...(drifted?.status === 'True'
      ? { drifted: { reason: drifted.reason ?? 'Drifted', since: transitionTime(drifted) ?? 0 } }
      : {}),
    ...(cond('Consolidatable')?.status === 'True' ? { consolidatable: true } : {}),
    ...(cond('Initialized')?.status === 'True' && transitionTime(cond('Initialized')) !== undefined
      ? { initializedAt: transitionTime(cond('Initialized'))! }
      : {}),
  };
  const useNode = n !== undefined && (registered || !c);
  let capacity: Resources = c?.capacity ?? {};
  let allocatable: Resources = c?.allocatable ?? {};
  if (n) {
    capacity = initialized || !c ? n.capacity : backfill(n.capacity, c.capacity);
    allocatable = initialized || !c ? n.allocatable : backfill(n.allocatable, c.allocatable);
  }
  const providerId = c?.providerId ?? n?.providerId;
  const nodePoolName = c?.nodePoolName ?? n?.nodePoolName;
  const deleting = n?.deletionTimestamp !== undefined || c?.deletionTimestamp !== undefined;
  const out: Record<string, unknown> = {
    name: n?.name ?? c!.name,
    hasNode: n !== undefined,
    hasNodeClaim: c !== undefined,
    managed,
    labels: useNode ? n.labels : c!.labels,
    annotations: useNode ? n.annotations : c!.annotations,
    taints: useNode ? n.taints : c!.taints,
    startupTaints: c?.startupTaints ?? [],
    capacity,
    allocatable,
    pods: ctx.pods,
    registered,
    initialized,
    ready: n?.ready ?? false,
    markedForDeletion: ctx.markedForDeletion,
    deleting,
    creationTimestamp: c?.creationTimestamp ?? n?.creationTimestamp ?? 0,
    conditions,
  };
  const opt = (k: string, v: unknown): void => {
    if (v !== undefined) out[k] = v;
  };
  opt('providerId', providerId);
  opt('nodeClaimName', c?.name);
  opt('nodePoolName', nodePoolName);
  opt('instanceTerminating', cond('InstanceTerminating')?.status === 'True' ? true : undefined);
  opt('nominatedUntil', ctx.nominatedUntil);
  opt('bufferPods', ctx.bufferPods);
  opt('lastPodEventTime', c?.lastPodEventTime);
  opt('terminationGracePeriod', c?.terminationGracePeriod);
  if (c) out['expireAfter'] = c.expireAfter;
  return out as unknown as StateNode;
}
