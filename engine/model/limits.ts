// NodePool limits as a solve sees them (docs/karpenter/scheduling.md §2.13): what is left of each limit after the
// pool's existing nodes, whether an instance type still fits in it, and what a planned NodeClaim takes.
import { formatResourceValue, NODES, type Resources } from '../domain/resources.ts';
import type { StateNode } from '../domain/types.ts';

export function remainingLimits(limits: Resources, nodes: readonly StateNode[]): Record<string, number> {
  const out: Record<string, number> = { ...limits };
  for (const n of nodes) {
    for (const k of Object.keys(out)) out[k] = out[k]! - (k === NODES ? 1 : (n.capacity[k] ?? 0));
  }
  return out;
}

export function withinLimits(capacity: Resources, remaining: Resources): boolean {
  for (const [k, v] of Object.entries(remaining)) {
    if (k === NODES) continue;
    if ((capacity[k] ?? 0) > v) return false;
  }
  return true;
}

export function describeLimits(remaining: Resources): string {
  return Object.entries(remaining)
    .filter(([k]) => k !== NODES)
    .map(([k, v]) => `${k} remaining ${formatResourceValue(k, Math.max(v, 0))}`)
    .join(', ');
}

/**
 * A committed NodeClaim pessimistically consumes the largest capacity among its options (§2.13), and one
 * node. (Karpenter's scheduler leaves `nodes` to a check at NodeClaim creation; counting it here keeps a
 * plan within the limit instead of planning NodeClaims that creation would refuse.)
 */
export function subtractMaxCapacity(
  remaining: Record<string, number>,
  instanceTypes: readonly { readonly capacity: Resources }[],
): void {
  for (const k of Object.keys(remaining)) {
    if (k === NODES) {
      remaining[k] = remaining[k]! - 1;
      continue;
    }
    let m = 0;
    for (const it of instanceTypes) m = Math.max(m, it.capacity[k] ?? 0);
    remaining[k] = remaining[k]! - m;
  }
}
