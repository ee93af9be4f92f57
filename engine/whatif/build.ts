// Parsed cluster objects -> the engine's Snapshot: Nodes joined with their NodeClaims into StateNodes
// (bound pods attached), pending pods, NodePools, and each NodePool's instance types from the catalog for
// the region, under its EC2NodeClass's settings and subnet zones when the snapshot has them.
import { toNodeClass, type EC2NodeClass } from '../api/ec2nodeclass.ts';
import type { NodeInfo } from '../api/node.ts';
import { conditionTrue, condition, type NodeClaimInfo } from '../api/nodeclaim.ts';
import { ec2InstanceTypes, regionsInCatalog, regionZones } from '../catalog/catalog.ts';
import { nodeClassCapacitySettings } from '../catalog/nodeclass.ts';
import { applyOverlays, evaluateOverlays } from '../catalog/overlay.ts';
import type { NodeOverlay } from '../api/nodeoverlay.ts';
import { DEFAULT_ENGINE_OPTIONS, type InstanceType, type NodeClass, type NodePool, type Pod, type Snapshot, type StateNode } from '../domain/types.ts';
import { REGION_LABEL, ZONE_LABEL } from '../scheduling/labels.ts';
import { isMirrorPod, isOwnedByDaemonSet, isTerminal, podKey } from '../scheduling/pods.ts';
import type { ClusterObjects } from './types.ts';

export const DEFAULT_REGION = 'ap-northeast-2';

export class WhatIfError extends Error {
  override name = 'WhatIfError';
}

export interface BuildOptions {
  /** ms since the epoch the snapshot is evaluated at. */
  readonly now: number;
  /** Catalog region; default: from node labels, else ap-northeast-2. */
  readonly region?: string;
  /** NodePools (and their EC2NodeClasses) to try instead of the snapshot's. */
  readonly nodePools?: readonly NodePool[];
  readonly nodeClasses?: readonly EC2NodeClass[];
}

export interface Built {
  readonly snapshot: Snapshot;
  readonly region: string;
  /** The region's catalog by type name (prices of existing nodes). */
  readonly catalog: ReadonlyMap<string, InstanceType>;
  readonly warnings: readonly string[];
}

/** --region, else the nodes' region label (or zone label minus its letter), else the default. */
export function regionOf(objects: ClusterObjects, flag?: string): string {
  if (flag) return flag;
  for (const n of objects.nodes) {
    const r = n.labels[REGION_LABEL] ?? n.labels[ZONE_LABEL]?.replace(/[a-z]$/, '');
    if (r) return r;
  }
  return DEFAULT_REGION;
}

function typesFor(pool: NodePool, classes: readonly EC2NodeClass[], region: string, warnings: string[]): InstanceType[] {
  const ref = pool.template.nodeClassRef;
  const nc = classes.find((c) => c.name === ref.name);
  const all = regionZones(region);
  if (!nc) {
    warnings.push(`NodePool ${pool.name}: ${ref.kind}/${ref.name} is not in the input; default node class settings and all zones of ${region} assumed`);
    return ec2InstanceTypes({ region });
  }
  const known = toNodeClass(nc).zones;
  const zones = known.filter((z) => all.includes(z));
  if (known.length > 0 && zones.length === 0) {
    warnings.push(`NodePool ${pool.name}: the subnets of EC2NodeClass ${nc.name} are in zones ${known.join(', ')}, none in ${region}; no offerings`);
  }
  try {
    return ec2InstanceTypes({ region, ...(zones.length > 0 ? { zones } : {}), settings: nodeClassCapacitySettings(nc) }).map((t) =>
      (known.length > 0 && zones.length === 0 ? { ...t, offerings: t.offerings.map((o) => ({ ...o, available: false })) } : t));
  } catch (e) {
    throw new WhatIfError(`EC2NodeClass ${nc.name}: ${(e as Error).message}`, { cause: e });
  }
}

function stateNodeOf(node: NodeInfo | undefined, claim: NodeClaimInfo | undefined, pods: readonly Pod[]): StateNode {
  const labels = node?.labels ?? claim?.labels ?? {};
  const managed = labels['karpenter.sh/nodepool'] !== undefined;
  const initializedAt = claim ? condition(claim.conditions, 'Initialized') : undefined;
  const drifted = claim ? condition(claim.conditions, 'Drifted') : undefined;
  const out: Record<string, unknown> = {
    name: node?.name ?? claim?.name ?? '',
    hasNode: node !== undefined,
    hasNodeClaim: claim !== undefined,
    managed,
    labels,
    annotations: node?.annotations ?? claim?.annotations ?? {},
    taints: node?.taints ?? claim?.taints ?? [],
    startupTaints: claim?.startupTaints ?? [],
    capacity: node?.capacity ?? claim?.capacity ?? {},
    allocatable: node?.allocatable ?? claim?.allocatable ?? {},
    pods,
    // Karpenter counts a Node without a NodeClaim as registered and initialized (it does not manage it).
    registered: node ? (claim ? node.registered : true) : false,
    initialized: node ? (claim ? node.initialized : true) : false,
    ready: node?.ready ?? false,
    markedForDeletion: false,
    deleting: node?.deletionTimestamp !== undefined || claim?.deletionTimestamp !== undefined,
    creationTimestamp: claim?.creationTimestamp ?? node?.creationTimestamp ?? 0,
    conditions: {
      ...(drifted?.status === 'True' ? { drifted: { reason: drifted.reason ?? '', since: drifted.lastTransitionTime ?? 0 } } : {}),
      ...(claim && conditionTrue(claim.conditions, 'Consolidatable') ? { consolidatable: true } : {}),
      ...(initializedAt?.status === 'True' && initializedAt.lastTransitionTime !== undefined ? { initializedAt: initializedAt.lastTransitionTime } : {}),
    },
  };
  const opt = (k: string, v: unknown): void => {
    if (v !== undefined) out[k] = v;
  };
  opt('providerId', node?.providerId ?? claim?.providerId);
  opt('nodeClaimName', claim?.name);
  opt('nodePoolName', labels['karpenter.sh/nodepool']);
  opt('instanceTerminating', claim && conditionTrue(claim.conditions, 'InstanceTerminating') ? true : undefined);
  opt('lastPodEventTime', claim?.lastPodEventTime);
  opt('terminationGracePeriod', claim?.terminationGracePeriod);
  opt('expireAfter', claim?.expireAfter);
  return out as unknown as StateNode;
}

/** Joins Nodes and NodeClaims (by provider id, else by the claim's node name) and attaches bound pods. */
function joinNodes(o: ClusterObjects, warnings: string[]): { nodes: StateNode[]; pending: Pod[] } {
  const byProvider = new Map<string, NodeClaimInfo>();
  const byNodeName = new Map<string, NodeClaimInfo>();
  for (const c of o.nodeClaims) {
    if (c.providerId) byProvider.set(c.providerId, c);
    if (c.nodeName) byNodeName.set(c.nodeName, c);
  }
  const bound = new Map<string, Pod[]>();
  const pending: Pod[] = [];
  const nodeNames = new Set(o.nodes.map((n) => n.name));
  for (const p of o.pods) {
    if (isTerminal(p)) continue;
    if (p.nodeName !== undefined && nodeNames.has(p.nodeName)) {
      bound.set(p.nodeName, [...(bound.get(p.nodeName) ?? []), p]);
    } else if (p.deletionTimestamp === undefined && !isOwnedByDaemonSet(p) && !isMirrorPod(p)) {
      if (p.nodeName !== undefined) warnings.push(`pod ${podKey(p)} is bound to node ${p.nodeName}, which is not in the input; treated as pending`);
      const { nodeName: _gone, ...rest } = p;
      pending.push(p.nodeName === undefined ? p : { ...rest, phase: 'Pending' });
    }
  }
  const used = new Set<NodeClaimInfo>();
  const nodes: StateNode[] = o.nodes.map((n) => {
    const claim = (n.providerId ? byProvider.get(n.providerId) : undefined) ?? byNodeName.get(n.name);
    if (claim) used.add(claim);
    return stateNodeOf(n, claim, bound.get(n.name) ?? []);
  });
  for (const c of o.nodeClaims) if (!used.has(c)) nodes.push(stateNodeOf(undefined, c, []));
  return { nodes, pending };
}

/** The pools' instance types with the NodeOverlays applied; an overlay that applies nowhere is a warning. */
function overlaid(pools: readonly NodePool[], types: Map<string, InstanceType[]>, overlays: readonly NodeOverlay[], warnings: string[]): Map<string, InstanceType[]> {
  if (!overlays.length) return types;
  const { updates, outcomes } = evaluateOverlays(pools.map((pool) => ({ pool, instanceTypes: types.get(pool.name) ?? [] })), overlays);
  for (const o of outcomes) if (o.status !== 'Applied') warnings.push(`NodeOverlay ${o.name} is not applied (${o.status}): ${o.message}`);
  return new Map(pools.map((p) => [p.name, applyOverlays(updates, p.name, types.get(p.name) ?? [])] as const));
}

/** Builds the Snapshot; throws WhatIfError for an unknown region or invalid node class settings. */
export function buildSnapshot(o: ClusterObjects, opts: BuildOptions): Built {
  const region = regionOf(o, opts.region);
  if (!regionsInCatalog().includes(region)) {
    throw new WhatIfError(`region ${region} is not in the EC2 catalog (known: ${regionsInCatalog().join(', ')}); pass --region`);
  }
  const warnings: string[] = [];
  const pools = (opts.nodePools ?? o.nodePools).map((p) => ({ ...p, ready: true }));
  const classes = [...(opts.nodeClasses ?? []), ...o.nodeClasses.filter((c) => !(opts.nodeClasses ?? []).some((x) => x.name === c.name))];
  const instanceTypes = overlaid(pools, new Map(pools.map((p) => [p.name, typesFor(p, classes, region, warnings)] as const)), o.nodeOverlays ?? [], warnings);
  const { nodes, pending } = joinNodes(o, warnings);
  const nodeClasses: NodeClass[] = classes.map((c) => ({ ...toNodeClass(c), ready: true }));
  const snapshot: Snapshot = {
    now: opts.now,
    nodePools: pools,
    nodeClasses,
    instanceTypes,
    nodes,
    pendingPods: pending,
    daemonSets: o.daemonSets,
    pdbs: o.pdbs,
    options: DEFAULT_ENGINE_OPTIONS,
  };
  const catalog = new Map(ec2InstanceTypes({ region }).map((t) => [t.name, t] as const));
  return { snapshot, region, catalog, warnings };
}
