// nodepool.counter (docs/karpenter/disruption.md §6.6): status.resources is the sum of the capacities of the pool's
// nodes not marked for deletion (cpu, memory, pods, ephemeral-storage and nodes always present), and
// status.nodes their count; the karpenter_nodepools_usage and _limit gauges follow. Every 5 s per NodePool, as
// Karpenter (pkg/controllers/nodepool/counter/controller.go: requeue after 5 s; reconciled on NodePool create),
// and when the NodePool's spec changes: not on every Node and NodeClaim change, which made a pass over every
// state node of every change while a cluster came up (thousands of NodeClaims, each written several times).
//
// It waits for the state to have listed once, not for the whole synced gate (§6.5) as Karpenter's does: that
// gate is false while any NodeClaim is mid-launch, which during a scale-up is nearly all the time, and the status
// then stood still while the pool grew. Listing once is what keeps the count from being written low
// at start-up; a NodeClaim mid-launch has no capacity to count either way, and is counted in the first period after
// its launch. Limits do not read this status: provisioning and disruption check them against cluster state.
import { NODES, type StateNode } from '../../../../engine/index.ts';
import { canonicalJson } from '../../../operator/hash.ts';
import { done, requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { ControllerContext } from '../../context.ts';
import { quantities } from '../../provisioning/nodeclaim.ts';
import { STATE_NODES } from '../../reads.ts';
import type { NodePoolEntry } from '../../../state/changes.ts';

const BASE = { cpu: 0, memory: 0, pods: 0, 'ephemeral-storage': 0, [NODES]: 0 };

/** Karpenter's counter period. */
const COUNTER_PERIOD_MS = 5_000;

/**
 * The summed capacities and count of the pool's nodes not marked for deletion, added up in place over every
 * state node.
 */
function poolUsage(nodes: readonly StateNode[], pool: string): Record<string, number> {
  const usage: Record<string, number> = { ...BASE };
  for (const n of nodes) {
    if (n.nodePoolName !== pool || n.markedForDeletion) continue;
    for (const k in n.capacity) usage[k] = (usage[k] ?? 0) + n.capacity[k]!;
    usage[NODES]! += 1;
  }
  return usage;
}

/** status.resources as quantities, with the zeros written as '0'. */
function resourcesOf(usage: Record<string, number>): Record<string, string> {
  const out = quantities(usage);
  for (const [k, v] of Object.entries(usage)) if (v === 0) out[k] = '0';
  return out;
}

/**
 * The resources the stored status names and the pool's nodes no longer have (the last GPU node gone): the
 * status write is a merge patch, which keeps a key it does not mention, so these are written as null.
 */
function droppedResources(stored: unknown, resources: Record<string, string>): string[] {
  if (typeof stored !== 'object' || stored === null) return [];
  return Object.keys(stored).filter((k) => !(k in resources));
}

export function newNodePoolCounter(ctx: ControllerContext): Controller {
  function setGauges(name: string, entry: NodePoolEntry, usage: Record<string, number>, dropped: string[]): void {
    for (const [k, v] of Object.entries(usage)) ctx.metrics.nodePoolUsage.set({ nodepool: name, resource_type: k }, v);
    for (const k of dropped) ctx.metrics.nodePoolUsage.remove({ nodepool: name, resource_type: k });
    for (const [k, v] of Object.entries(entry.pool?.limits ?? {}))
      ctx.metrics.nodePoolLimit.set({ nodepool: name, resource_type: k }, v);
  }

  async function reconcile(name: string): Promise<ReconcileResult> {
    const entry = ctx.cluster.nodePool(name);
    if (!entry) {
      ctx.metrics.nodePoolUsage.remove({ nodepool: name });
      return done;
    }
    if (!ctx.cluster.hydrated()) return requeueAfter(1_000);
    const usage = poolUsage(ctx.cluster.stateNodes(), name);
    const resources = resourcesOf(usage);
    const status = entry.obj.status ?? {};
    const dropped = droppedResources(status['resources'], resources);
    setGauges(name, entry, usage, dropped);
    if (canonicalJson(status['resources'] ?? {}) !== canonicalJson(resources) || status['nodes'] !== usage[NODES]) {
      const patch = { ...resources, ...Object.fromEntries(dropped.map((k) => [k, null])) };
      ctx.cluster.applyNodePool(
        await ctx.kube.patchStatus('NodePool', name, { resources: patch, nodes: usage[NODES] }),
      );
    }
    return requeueAfter(COUNTER_PERIOD_MS);
  }

  return {
    name: 'nodepool.counter',
    reads: ['NodePool', ...STATE_NODES],
    reconcile,
    register(enqueue) {
      for (const p of ctx.cluster.nodePools()) enqueue(p.obj.metadata.name!);
      return ctx.cluster.subscribe((c) => {
        if (
          c.kind === 'NodePool' &&
          (c.type === 'delete' || JSON.stringify(c.obj.spec) !== JSON.stringify(c.old?.spec))
        )
          enqueue(c.name);
      });
    },
  };
}
