// Which NodeClaims a static NodePool (spec.replicas) gives up when it holds more than it wants (Karpenter core
// pkg/controllers/static/deprovisioning, main after v1.14.1), in order:
//
//   1. NodeClaims not launched yet (no providerID), as listed;
//   2. empty nodes: no pods, or only DaemonSet pods none of which do-not-disrupt protects;
//   3. the others, those without an active do-not-disrupt pod first, each group by rescheduling cost (the
//      eviction costs of its pods) times the share of its lifetime left, cheapest first.
//
// Pure: the controller hands in the nodes, the clock and the unlaunched NodeClaims' names.
import type { NodePool, Pod, StateNode } from '../domain/types.ts';
import { isOwnedByDaemonSet } from '../scheduling/pods.ts';
import { doNotDisrupt, lifetimeDisruptionCost } from './pods.ts';

const guarded =
  (now: number) =>
  (p: Pod): boolean =>
    doNotDisrupt(p, now).state === 'active';

/** Empty for a static scale-down: no pod, or only DaemonSet pods without an active do-not-disrupt. */
function staticEmpty(n: StateNode, now: number): boolean {
  return n.pods.every(isOwnedByDaemonSet) && !n.pods.some(guarded(now));
}

/** The launched NodeClaims of `pool` a scale-down may take: not marked for deletion and not deleting. */
function launched(nodes: readonly StateNode[], pool: string, skip: ReadonlySet<string>): StateNode[] {
  return nodes.filter(
    (n) =>
      n.nodePoolName === pool &&
      n.hasNodeClaim &&
      n.nodeClaimName !== undefined &&
      n.providerId &&
      !n.markedForDeletion &&
      !n.deleting &&
      !skip.has(n.nodeClaimName),
  );
}

/** Non-empty nodes, the cheapest to disrupt first and those with a do-not-disrupt pod last. */
function byDisruptionCost(nodes: readonly StateNode[], pool: NodePool, now: number): StateNode[] {
  const ranked = nodes.map((n) => ({
    n,
    guarded: n.pods.some(guarded(now)),
    cost: lifetimeDisruptionCost(n, n.expireAfter !== undefined ? n.expireAfter : pool.template.expireAfter, now),
  }));
  ranked.sort((a, b) => Number(a.guarded) - Number(b.guarded) || a.cost - b.cost);
  return ranked.map((r) => r.n);
}

/** The names of up to `count` NodeClaims of `pool` to delete, the most disposable first. */
export function staticScaleDown(
  nodes: readonly StateNode[],
  now: number,
  pool: NodePool,
  unlaunched: readonly string[],
  count: number,
): string[] {
  const out = unlaunched.slice(0, Math.max(0, count));
  if (out.length >= count) return out;
  const live = launched(nodes, pool.name, new Set(out));
  const empty = live.filter((n) => staticEmpty(n, now));
  const rest = byDisruptionCost(
    live.filter((n) => !empty.includes(n)),
    pool,
    now,
  );
  for (const n of [...empty, ...rest]) {
    if (out.length >= count) break;
    out.push(n.nodeClaimName!);
  }
  return out;
}
