// What a static NodePool's decisions read, as the snapshot the engine decides on (on its workers, like every
// other decision): the pool, and either its instance types (the template NodeClaim) or its nodes (which
// NodeClaims a scale-down gives up). Nothing else of the cluster is shipped.
import type { InstanceType, NodePool, Snapshot, StateNode } from '../../../engine/index.ts';
import type { ControllerContext } from '../context.ts';

export function staticSnapshot(
  ctx: Pick<ControllerContext, 'clock' | 'engineOptions'>,
  pool: NodePool,
  parts: { readonly instanceTypes?: readonly InstanceType[]; readonly nodes?: readonly StateNode[] },
): Snapshot {
  return {
    now: ctx.clock.now(),
    nodePools: [pool],
    nodeClasses: [],
    instanceTypes: new Map(parts.instanceTypes ? [[pool.name, parts.instanceTypes]] : []),
    nodes: parts.nodes ?? [],
    pendingPods: [],
    daemonSets: [],
    pdbs: [],
    options: ctx.engineOptions,
  };
}
