// Builds the engine's Snapshot from cluster state: NodePools, node classes, state nodes, pending pods,
// DaemonSets, PDBs, and each NodePool's instance types from the cloud provider, with offerings outside the
// node class's zones (the zones of its subnets) taken away.
import {
  toNodeClass,
  type EngineOptions,
  type InstanceType,
  type NodeClass,
  type NodePool,
  type Pod,
  type Snapshot,
} from '../../engine/index.ts';
import type { CloudProvider } from '../cloudprovider/types.ts';
import type { Logger } from '../operator/logger.ts';
import { errText } from '../operator/runtime.ts';
import type { Cluster } from './cluster.ts';

const ZONE = 'topology.kubernetes.io/zone';

/** Offerings limited to `zones` (types left with no offering are dropped); an empty list means no filter. */
function restrictToZones(types: readonly InstanceType[], zones: readonly string[]): InstanceType[] {
  if (zones.length === 0) return [...types];
  const allowed = new Set(zones);
  const out: InstanceType[] = [];
  for (const it of types) {
    if (it.offerings.every((o) => allowed.has(o.zone))) {
      out.push(it);
      continue;
    }
    const offerings = it.offerings.filter((o) => allowed.has(o.zone));
    if (!offerings.length) continue;
    const zr = it.requirements.get(ZONE);
    const requirements =
      zr && !zr.complement
        ? new Map(it.requirements).set(ZONE, { ...zr, values: new Set([...zr.values].filter((z) => allowed.has(z))) })
        : it.requirements;
    out.push({ ...it, offerings, requirements });
  }
  return out;
}

/** Whether the pool's instance types are listed: ready and live (static pools too, for their drift replacements). */
const listed = (p: NodePool): boolean => p.ready && !p.deleting;

/** The pool's instance types from the cloud provider, limited to its node class's zones. */
export async function poolInstanceTypes(
  deps: { cluster: Cluster; cloudProvider: CloudProvider },
  pool: NodePool,
  nodeClasses?: readonly NodeClass[],
): Promise<InstanceType[]> {
  const types = await deps.cloudProvider.getInstanceTypes(pool);
  const ref = pool.template.nodeClassRef;
  const classes =
    nodeClasses ?? deps.cluster.nodeClasses().flatMap((e) => (e.nodeClass ? [toNodeClass(e.nodeClass)] : []));
  const nc = classes.find((c) => c.name === ref.name && c.kind === ref.kind);
  return restrictToZones(types, nc?.zones ?? []);
}

/** poolInstanceTypes, or none with the failure logged (the pool sits this decision out). */
async function listingOrNothing(
  deps: { cluster: Cluster; cloudProvider: CloudProvider; log: Logger },
  pool: NodePool,
  nodeClasses: readonly NodeClass[],
): Promise<InstanceType[]> {
  try {
    return await poolInstanceTypes(deps, pool, nodeClasses);
  } catch (err) {
    // NodeOverlay on: the pool waits for the overlays' first evaluation (Karpenter logs this at debug level).
    if (err instanceof Error && err.name === 'UnevaluatedNodePoolError')
      deps.log.debug({ nodepool: pool.name }, 'skipping, awaiting nodeoverlay evaluation');
    else
      deps.log.error(
        { nodepool: pool.name, err: errText(err) },
        'listing instance types failed; the NodePool is left out of this decision',
      );
    return [];
  }
}

/**
 * The pending pods, with the capacity-buffer virtual pods after them (feature gate CapacityBuffer): the
 * disruption simulation schedules them like pending pods, so consolidation keeps the room they hold.
 */
function withVirtualPods(cluster: Cluster): readonly Pod[] {
  const pending = cluster.workloads.pendingPods();
  const virtual = cluster.workloads.buffers.virtualPods();
  return virtual.length ? [...pending, ...virtual] : pending;
}

export async function buildSnapshot(
  deps: { cluster: Cluster; cloudProvider: CloudProvider; log: Logger },
  now: number,
  options: EngineOptions,
): Promise<Snapshot> {
  const { cluster } = deps;
  const nodePools = cluster.nodePools().flatMap((e) => (e.pool ? [e.pool] : []));
  const nodeClasses: NodeClass[] = cluster
    .nodeClasses()
    .flatMap((e) => (e.nodeClass ? [toNodeClass(e.nodeClass)] : []));
  const instanceTypes = new Map<string, readonly InstanceType[]>();
  await Promise.all(
    nodePools.filter(listed).map(async (pool) => {
      instanceTypes.set(pool.name, await listingOrNothing(deps, pool, nodeClasses));
    }),
  );
  return {
    now,
    nodePools,
    nodeClasses,
    instanceTypes,
    nodes: cluster.stateNodes(),
    pendingPods: withVirtualPods(cluster),
    daemonSets: cluster.workloads.daemonSetList(),
    pdbs: cluster.workloads.pdbList(),
    options,
    ...(options.ignoreDRARequests === false ? { dra: cluster.workloads.dra.state() } : {}),
    ...(options.defaultTopologySpreadConstraints?.length
      ? { selectorSources: cluster.workloads.selectors.sources() }
      : {}),
  };
}
