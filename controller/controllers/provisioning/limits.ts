// NodePool limits, re-checked against current usage right before each NodeClaim is created
// (docs/karpenter/scheduling.md §2.13): the engine planned within the remaining limits, but nodes may have come up
// since the snapshot, and several NodeClaims of one plan add up.
import {
  add,
  formatResourceValue,
  NODES,
  type InstanceType,
  type NewNodeClaimPlan,
  type Resources,
  type StateNode,
} from '../../../engine/index.ts';

/** What the pool's nodes use: the sum of their capacities, plus one `nodes` each (docs/karpenter/disruption.md §6.6). */
export function poolUsage(nodes: readonly StateNode[], pool: string): Record<string, number> {
  let usage: Record<string, number> = {};
  for (const n of nodes) {
    if (n.nodePoolName !== pool || n.markedForDeletion) continue;
    usage = add(usage, { ...n.capacity, [NODES]: 1 });
  }
  return usage;
}

/**
 * The most a planned NodeClaim can add: the per-resource maximum over its instance-type options. `types` by
 * name when the caller checks many NodeClaims of one pool (the map is built once).
 */
export function worstCaseCapacity(
  plan: NewNodeClaimPlan,
  types: readonly InstanceType[] | ReadonlyMap<string, InstanceType>,
): Record<string, number> {
  const byName = 'get' in types ? types : new Map(types.map((t) => [t.name, t]));
  const out: Record<string, number> = { [NODES]: 1 };
  for (const o of plan.instanceTypes) {
    for (const [k, v] of Object.entries(byName.get(o.name)?.capacity ?? {})) out[k] = Math.max(out[k] ?? 0, v);
  }
  return out;
}

/** The first limit `usage` exceeds, as a sentence; undefined when within limits. */
export function exceededLimit(pool: string, limits: Resources, usage: Resources): string | undefined {
  for (const [k, limit] of Object.entries(limits)) {
    const used = usage[k] ?? 0;
    if (used > limit)
      return `nodepool ${pool}: ${k} limit ${formatResourceValue(k, limit)} would be exceeded (in use ${formatResourceValue(k, used)})`;
  }
  return undefined;
}

export { add };
