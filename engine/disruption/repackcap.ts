// Price caps for the global repack: the catalog limited to types within a price, and a bound on what such
// a cap could save on a layout, so the search solves a capped layout only where it could pay (repacksearch.ts).
import type { InstanceType, Snapshot } from '../domain/types.ts';
import { toMicros } from '../domain/money.ts';
import { CPU, MEMORY } from '../domain/resources.ts';
import { INSTANCE_TYPE_LABEL } from '../scheduling/labels.ts';
import { fromSelectorRequirements, intersectsAll } from '../scheduling/requirements.ts';
import { cacheSlot, type ModelCaches } from '../model/caches.ts';
import type { NewNodeClaimPlan } from '../model/types.ts';
import { cheapestAllowed } from './pricing.ts';

// The same capped list (the same array) for the same catalog and cap: solver templates are cached by the
// identity of their instance-type array (model/templates.ts), so a fresh array on every capped
// simulation would rebuild each template (filtering and grouping every type) each time.
const CAPPED = cacheSlot<readonly InstanceType[], Map<number, readonly InstanceType[]>>('capped catalogs');

/** The types with an available offering within `lim` micro-dollars per hour. */
export function cappedTypes(its: readonly InstanceType[], lim: number, caches: ModelCaches): readonly InstanceType[] {
  const byCap = caches.memo(CAPPED, its, () => new Map<number, readonly InstanceType[]>());
  let out = byCap.get(lim);
  if (!out)
    byCap.set(lim, (out = its.filter((it) => it.offerings.some((o) => o.available && toMicros(o.price) <= lim))));
  return out;
}

/** Resources per dollar of one type: cpu (millicores) and memory (bytes) its cheapest allowed offering buys per $/h. */
type Bundle = { readonly c: number; readonly m: number };
const FRONTIERS = cacheSlot<object, Map<readonly InstanceType[], readonly Bundle[]>>('price frontiers');

/**
 * The upper-right convex hull of the resources per dollar that `its` sell to a NodeClaim with these
 * requirements (its instance-type list aside: smaller types are exactly what a cap turns to), cpu
 * ascending and memory descending. Kept per requirement array (shared by a solve's NodeClaims) and list.
 */
function frontier(k: NewNodeClaimPlan, its: readonly InstanceType[], caches: ModelCaches): readonly Bundle[] {
  const byList = caches.memo(FRONTIERS, k.requirements, () => new Map<readonly InstanceType[], readonly Bundle[]>());
  let hull = byList.get(its);
  if (hull) return hull;
  const reqs = fromSelectorRequirements(k.requirements.filter((r) => r.key !== INSTANCE_TYPE_LABEL));
  const pts: Bundle[] = [];
  for (const it of its) {
    if (!intersectsAll(reqs, it.requirements)) continue;
    const price = cheapestAllowed(reqs, it)?.price;
    if (price !== undefined && price > 0)
      pts.push({ c: (it.allocatable[CPU] ?? 0) / price, m: (it.allocatable[MEMORY] ?? 0) / price });
  }
  // Monotone chain over cpu descending: keep right turns only, from the most cpu per dollar to the most
  // memory per dollar; points below that chain are dominated by a mix of two on it.
  pts.sort((a, b) => b.c - a.c || b.m - a.m);
  const chain: Bundle[] = [];
  for (const p of pts) {
    if (chain.length && p.m <= chain[chain.length - 1]!.m) continue;
    while (chain.length >= 2) {
      const a = chain[chain.length - 2]!;
      const b = chain[chain.length - 1]!;
      if ((b.c - a.c) * (p.m - a.m) - (b.m - a.m) * (p.c - a.c) > 0) break;
      chain.pop();
    }
    chain.push(p);
  }
  byList.set(its, (hull = chain.reverse()));
  return hull;
}

/**
 * The least $/h that buys `cpu` and `mem` from types on the frontier, mixed fractionally (the LP bound of
 * the two resources): the largest share s of the request that one dollar buys, on the frontier's
 * segments, inverted. Infinity when no type is allowed.
 */
function cheapestCover(hull: readonly Bundle[], cpu: number, mem: number): number {
  if (!hull.length) return Infinity;
  const share = (p: Bundle) => Math.min(cpu > 0 ? p.c / cpu : Infinity, mem > 0 ? p.m / mem : Infinity);
  let best = Math.max(...hull.map(share));
  for (let i = 1; i < hull.length; i++) {
    const a = hull[i - 1]!;
    const b = hull[i]!;
    // min(cpu share, memory share) along the segment peaks where the two are equal.
    if (cpu <= 0 || mem <= 0) continue;
    const da = a.c / cpu - a.m / mem;
    const db = b.c / cpu - b.m / mem;
    if (da * db >= 0) continue;
    const t = da / (da - db);
    best = Math.max(best, share({ c: a.c + t * (b.c - a.c), m: a.m + t * (b.m - a.m) }));
  }
  return best > 0 && Number.isFinite(best) ? 1 / best : cpu <= 0 && mem <= 0 ? 0 : Infinity;
}

/**
 * The most capping the types at `cap` could save on the planned NodeClaims dearer than it (the only ones
 * a cap changes), and their price: each costs at least the cheapest fractional mix of the types within the
 * cap that holds its requests (cheapestCover), so it could save its price less that.
 */
export function capGain(
  s: Snapshot,
  claims: readonly NewNodeClaimPlan[],
  cap: number,
  caches: ModelCaches,
): { gain: number; price: number } {
  let gain = 0;
  let price = 0;
  for (const k of claims) {
    if (k.price <= cap) continue;
    price += k.price;
    const hull = frontier(k, cappedTypes(s.instanceTypes.get(k.nodePool) ?? [], toMicros(cap), caches), caches);
    gain += Math.max(0, k.price - cheapestCover(hull, k.requests[CPU] ?? 0, k.requests[MEMORY] ?? 0));
  }
  return { gain, price };
}
