// Parsed cluster objects -> the engine's Snapshot: Nodes joined with their NodeClaims into StateNodes
// (bound pods attached), pending pods, NodePools, and each NodePool's instance types from the catalog for
// the region, under its EC2NodeClass's settings and subnet zones when the snapshot has them.
import { toNodeClass, type EC2NodeClass } from '../api/ec2nodeclass.ts';
import type { NodeInfo } from '../api/node.ts';
import { conditionTrue, condition, type NodeClaimInfo } from '../api/nodeclaim.ts';
import { ec2InstanceTypes, regionPrices, regionsInCatalog, regionZones, type PriceTable } from '../catalog/catalog.ts';
import { nodeClassCapacitySettings } from '../catalog/nodeclass.ts';
import { applyOverlays, evaluateOverlays } from '../catalog/overlay.ts';
import type { NodeOverlay } from '../api/nodeoverlay.ts';
import {
  DEFAULT_ENGINE_OPTIONS,
  type DaemonSet,
  type InstanceType,
  type NodeClass,
  type NodePool,
  type Pod,
  type Snapshot,
  type StateNode,
} from '../domain/types.ts';
import { REGION_LABEL, ZONE_LABEL } from '../scheduling/labels.ts';
import { isMirrorPod, isOwnedByDaemonSet, isTerminal, podKey } from '../scheduling/pods.ts';
import { podMatchesLabels, tolerated } from '../verify/labels.ts';
import type { ClusterObjectLists, ClusterObjects, LivePrices } from './types.ts';

export const DEFAULT_REGION = 'ap-northeast-2';

/** No objects of any kind: the lists a loader gathers a cluster's objects into. */
export function emptyClusterObjects(): ClusterObjectLists {
  return {
    nodes: [],
    nodeClaims: [],
    pods: [],
    nodePools: [],
    nodeClasses: [],
    daemonSets: [],
    pdbs: [],
    nodeOverlays: [],
  };
}

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
  /** Prices read from the AWS APIs for the region (--live-prices) instead of the built-in tables. */
  readonly livePrices?: LivePrices;
}

export interface Built {
  readonly snapshot: Snapshot;
  readonly region: string;
  /** The region's catalog by type name (prices of existing nodes). */
  readonly catalog: ReadonlyMap<string, InstanceType>;
  readonly warnings: readonly string[];
  /** With live prices: when they were read, and the types priced from the built-in table instead. */
  readonly live?: { readonly fetchedAt: string; readonly fallbackTypes: ReadonlySet<string> };
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

/** The region's zones and, with live prices, the table every offering is priced from. */
interface RegionSource {
  readonly zones: readonly string[];
  readonly prices?: PriceTable;
  readonly live?: Built['live'];
}

/** An availability zone of the region: its name plus one letter (local and wavelength zones are left out). */
const zoneOf = (region: string, zone: string): boolean =>
  zone.startsWith(region) && /^[a-z]$/.test(zone.slice(region.length));

/**
 * Live prices over the built-in table: on-demand from the Pricing API, with the built-in price (when the
 * region has one) for types the API did not answer, as Karpenter merges its refreshes over its static table;
 * spot only where DescribeSpotPriceHistory gave a price for the type and zone. Zones: the catalog's for the
 * region, else every zone the spot prices or the nodes name.
 */
function liveSource(region: string, live: LivePrices, o: ClusterObjects): RegionSource {
  const known = regionsInCatalog().includes(region);
  const onDemand = new Map<string, number>();
  const fallbackTypes = new Set<string>();
  if (known)
    for (const [type, { price }] of regionPrices(region).onDemand) {
      onDemand.set(type, price);
      fallbackTypes.add(type);
    }
  for (const [type, price] of Object.entries(live.onDemand)) {
    onDemand.set(type, price);
    fallbackTypes.delete(type);
  }
  const spot = new Map(
    Object.entries(live.spot).map(([type, zones]) => [type, new Map(Object.entries(zones))] as const),
  );
  const seen = [...spot.values()].flatMap((z) => [...z.keys()]).concat(o.nodes.map((n) => n.labels[ZONE_LABEL] ?? ''));
  const zones = known ? regionZones(region) : [...new Set(seen.filter((z) => zoneOf(region, z)))].sort();
  if (zones.length === 0)
    throw new WhatIfError(`region ${region}: the live prices name no zone of the region, and no node does`);
  return {
    zones,
    prices: { id: `${region}@${live.fetchedAt}`, onDemand, spot },
    live: { fetchedAt: live.fetchedAt, fallbackTypes },
  };
}

/** Where the region's zones and prices come from; a region without built-in prices needs --live-prices. */
function regionSource(region: string, o: ClusterObjects, live?: LivePrices): RegionSource {
  if (live) {
    if (live.region !== region)
      throw new WhatIfError(`the live prices are for ${live.region}, the snapshot is in ${region}`);
    return liveSource(region, live, o);
  }
  if (!regionsInCatalog().includes(region)) {
    throw new WhatIfError(
      `region ${region} has no built-in prices (built in: ${regionsInCatalog().join(', ')}); run with --live-prices to read its prices from the AWS APIs`,
    );
  }
  return { zones: regionZones(region) };
}

function typesFor(
  pool: NodePool,
  classes: readonly EC2NodeClass[],
  region: string,
  src: RegionSource,
  warnings: string[],
): InstanceType[] {
  const ref = pool.template.nodeClassRef;
  const nc = classes.find((c) => c.name === ref.name);
  const all = src.zones;
  const priced = { zones: all, ...(src.prices ? { prices: src.prices } : {}) };
  if (!nc) {
    warnings.push(
      `NodePool ${pool.name}: ${ref.kind}/${ref.name} is not in the input; default node class settings and all zones of ${region} assumed`,
    );
    return ec2InstanceTypes({ region, ...priced });
  }
  const known = toNodeClass(nc).zones;
  const zones = known.filter((z) => all.includes(z));
  if (known.length > 0 && zones.length === 0) {
    warnings.push(
      `NodePool ${pool.name}: the subnets of EC2NodeClass ${nc.name} are in zones ${known.join(', ')}, none in ${region}; no offerings`,
    );
  }
  try {
    return ec2InstanceTypes({
      region,
      ...priced,
      ...(zones.length > 0 ? { zones } : {}),
      settings: nodeClassCapacitySettings(nc),
    }).map((t) =>
      known.length > 0 && zones.length === 0
        ? { ...t, offerings: t.offerings.map((o) => ({ ...o, available: false })) }
        : t,
    );
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
      ...(drifted?.status === 'True'
        ? { drifted: { reason: drifted.reason ?? '', since: drifted.lastTransitionTime ?? 0 } }
        : {}),
      ...(claim && conditionTrue(claim.conditions, 'Consolidatable') ? { consolidatable: true } : {}),
      ...(initializedAt?.status === 'True' && initializedAt.lastTransitionTime !== undefined
        ? { initializedAt: initializedAt.lastTransitionTime }
        : {}),
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
      if (p.nodeName !== undefined)
        warnings.push(`pod ${podKey(p)} is bound to node ${p.nodeName}, which is not in the input; treated as pending`);
      const { nodeName: _gone, ...rest } = p;
      pending.push(p.nodeName === undefined ? p : { ...rest, phase: 'Pending' });
    }
  }
  addDaemonSetPods(o, bound, warnings);
  const used = new Set<NodeClaimInfo>();
  const nodes: StateNode[] = o.nodes.map((n) => {
    const claim = (n.providerId ? byProvider.get(n.providerId) : undefined) ?? byNodeName.get(n.name);
    if (claim) used.add(claim);
    return stateNodeOf(n, claim, bound.get(n.name) ?? []);
  });
  for (const c of o.nodeClaims) if (!used.has(c)) nodes.push(stateNodeOf(undefined, c, []));
  return { nodes: o.nodeClaims.length === 0 ? assumeNodeClaims(nodes, warnings) : nodes, pending };
}

/** The DaemonSet runs on the node (its pod tolerates the node's taints and selects its labels) but has no pod there. */
function daemonPodMissing(d: DaemonSet, n: NodeInfo, on: readonly Pod[]): boolean {
  if (on.some((p) => p.namespace === d.namespace && p.owner?.kind === 'DaemonSet' && p.owner.name === d.name))
    return false;
  return (
    n.taints.every((t) => t.effect === 'PreferNoSchedule' || tolerated(d.pod.tolerations, t)) &&
    podMatchesLabels(d.pod, n.labels) === undefined
  );
}

/**
 * A DaemonSet in the input runs a pod on every node it selects. Where the input lists the DaemonSet but not
 * its pod on a node (a dump of manifests, or of some namespaces only), the pod is added to the node from the
 * DaemonSet's template: its requests occupy the node as they would in the cluster. One warning says how many.
 */
function addDaemonSetPods(o: ClusterObjects, bound: Map<string, Pod[]>, warnings: string[]): void {
  const added = new Map<string, number>();
  for (const n of o.nodes) {
    const on = bound.get(n.name) ?? [];
    const missing = o.daemonSets.filter((d) => daemonPodMissing(d, n, on));
    if (missing.length === 0) continue;
    const pods = missing.map(
      (d): Pod => ({
        ...d.pod,
        name: `${d.name}-whatif-${n.name}`,
        uid: `whatif/${d.namespace}/DaemonSet/${d.name}/${n.name}`,
        nodeName: n.name,
        phase: 'Running',
        owner: d.pod.owner ?? { kind: 'DaemonSet', name: d.name, apiVersion: 'apps/v1', controller: true },
      }),
    );
    bound.set(n.name, [...on, ...pods]);
    for (const d of missing) added.set(`${d.namespace}/${d.name}`, (added.get(`${d.namespace}/${d.name}`) ?? 0) + 1);
  }
  if (added.size === 0) return;
  const total = [...added.values()].reduce((a, v) => a + v, 0);
  const each = [...added]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} on ${v} node${v === 1 ? '' : 's'}`)
    .join(', ');
  warnings.push(
    `${total} DaemonSet pod${total === 1 ? ' is' : 's are'} not in the input (${each}): added to the nodes the DaemonSets select, from their templates`,
  );
}

/**
 * An input with no NodeClaims at all whose Nodes carry karpenter.sh/nodepool is a dump that left the
 * NodeClaims out (`kubectl get nodes,pods,...` without `nodeclaims`): Karpenter launched these nodes, and
 * without their claims every one would be kept as "node isn't managed by karpenter". Each is planned as if
 * its NodeClaim were there (registered, initialized at the node's creation), and one warning says so.
 */
function assumeNodeClaims(nodes: readonly StateNode[], warnings: string[]): StateNode[] {
  let assumed = 0;
  const out = nodes.map((n) => {
    if (!n.managed || n.hasNodeClaim || !n.hasNode) return n;
    assumed++;
    return {
      ...n,
      hasNodeClaim: true,
      nodeClaimName: n.name,
      registered: true,
      initialized: true,
      conditions: { ...n.conditions, ...(n.creationTimestamp ? { initializedAt: n.creationTimestamp } : {}) },
    };
  });
  if (assumed > 0) {
    warnings.push(
      `${assumed} node${assumed === 1 ? ' carries' : 's carry'} the karpenter.sh/nodepool label but the input has no NodeClaims: planned as if each had its NodeClaim (registered and initialized); add the NodeClaims to the input (kubectl get nodeclaims -o yaml, or karpenter-ts snapshot) for their real conditions`,
    );
  }
  return out;
}

/** The pools' instance types with the NodeOverlays applied; an overlay that applies nowhere is a warning. */
function overlaid(
  pools: readonly NodePool[],
  types: Map<string, InstanceType[]>,
  overlays: readonly NodeOverlay[],
  warnings: string[],
): Map<string, InstanceType[]> {
  if (!overlays.length) return types;
  const { updates, outcomes } = evaluateOverlays(
    pools.map((pool) => ({ pool, instanceTypes: types.get(pool.name) ?? [] })),
    overlays,
  );
  for (const o of outcomes)
    if (o.status !== 'Applied') warnings.push(`NodeOverlay ${o.name} is not applied (${o.status}): ${o.message}`);
  return new Map(pools.map((p) => [p.name, applyOverlays(updates, p.name, types.get(p.name) ?? [])] as const));
}

/** Builds the Snapshot; throws WhatIfError for an unknown region or invalid node class settings. */
export function buildSnapshot(o: ClusterObjects, opts: BuildOptions): Built {
  const region = regionOf(o, opts.region);
  const src = regionSource(region, o, opts.livePrices);
  const warnings: string[] = [];
  const pools = (opts.nodePools ?? o.nodePools).map((p) => ({ ...p, ready: true }));
  const classes = [
    ...(opts.nodeClasses ?? []),
    ...o.nodeClasses.filter((c) => !(opts.nodeClasses ?? []).some((x) => x.name === c.name)),
  ];
  const instanceTypes = overlaid(
    pools,
    new Map(pools.map((p) => [p.name, typesFor(p, classes, region, src, warnings)] as const)),
    o.nodeOverlays ?? [],
    warnings,
  );
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
  const catalog = new Map(
    ec2InstanceTypes({ region, zones: src.zones, ...(src.prices ? { prices: src.prices } : {}) }).map(
      (t) => [t.name, t] as const,
    ),
  );
  return { snapshot, region, catalog, warnings, ...(src.live ? { live: src.live } : {}) };
}
