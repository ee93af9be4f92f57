// Prices in consolidation (docs/karpenter/disruption.md §1.3, §2.5.2, §2.5.4): what a candidate costs now, what a
// replacement could cost at worst when launched, and re-shaping a planned NodeClaim after its options are
// filtered. Comparisons are made in integer micro-dollars, as the solvers order offerings.
import type { InstanceType, Labels, Offering, Requirements } from '../domain/types.ts';
import { toMicros } from '../domain/money.ts';
import { CAPACITY_TYPE_LABEL, INSTANCE_TYPE_LABEL, RESERVATION_ID_LABEL, ZONE_LABEL } from '../scheduling/labels.ts';
import { add, fromSelectorRequirements, req, toSelectorRequirements } from '../scheduling/requirements.ts';
import { cacheSlot, type ModelCaches } from '../model/caches.ts';
import { minValuesUnmet, offeringAllowed } from '../model/templates.ts';
import type { NewNodeClaimPlan } from '../model/types.ts';

export { RESERVATION_ID_LABEL };

/**
 * The price of the node's own offering: same zone and capacity type (and reservation, when labelled),
 * regardless of availability (a running node keeps costing its price). 0 when there is none, or NaN.
 */
export function nodeOfferingPrice(it: InstanceType | undefined, labels: Labels): number {
  if (!it) return 0;
  const zone = labels[ZONE_LABEL];
  const ct = labels[CAPACITY_TYPE_LABEL];
  const rid = labels[RESERVATION_ID_LABEL];
  let best: number | undefined;
  for (const o of it.offerings) {
    if (o.zone !== zone || o.capacityType !== ct) continue;
    if (rid !== undefined && o.reservationId !== undefined && o.reservationId !== rid) continue;
    if (Number.isNaN(o.price)) continue;
    if (best === undefined || o.price < best) best = o.price;
  }
  return best ?? 0;
}

const LAUNCH_PRIORITY = ['reserved', 'spot', 'on-demand'] as const;

/**
 * Worst-case launch price: among the available offerings the requirements allow, take the first capacity
 * type in launch priority (reserved, spot, on-demand) that has any, and its most expensive offering.
 */
export function worstLaunchPrice(reqs: Requirements, it: InstanceType): number {
  for (const ct of LAUNCH_PRIORITY) {
    let worst: number | undefined;
    for (const o of it.offerings)
      if (o.capacityType === ct && offeringAllowed(reqs, o) && (worst === undefined || o.price > worst))
        worst = o.price;
    if (worst !== undefined) return worst;
  }
  return Infinity;
}

export function cheapestAllowed(reqs: Requirements, it: InstanceType): Offering | undefined {
  let best: Offering | undefined;
  for (const o of it.offerings) if (offeringAllowed(reqs, o) && (!best || o.price < best.price)) best = o;
  return best;
}

/**
 * The offering a launch would most likely get: the cheapest allowed one; between zones that price it the
 * same, the one where `load` (zone -> nodes of the pool there) counts the fewest nodes, then the first by
 * name. A launch over equal prices may land in any of those zones: spreading is the neutral guess, where
 * always taking the first would pile every replacement into one zone.
 */
export function launchOffering(
  reqs: Requirements,
  it: InstanceType,
  load?: ReadonlyMap<string, number>,
): Offering | undefined {
  let best: Offering | undefined;
  for (const o of it.offerings) {
    if (!offeringAllowed(reqs, o)) continue;
    if (!best || toMicros(o.price) < toMicros(best.price)) best = o;
    else if (toMicros(o.price) === toMicros(best.price) && o.capacityType === best.capacityType && load) {
      const lo = load.get(o.zone) ?? 0,
        lb = load.get(best.zone) ?? 0;
      if (lo < lb || (lo === lb && o.zone < best.zone)) best = o;
    }
  }
  return best;
}

/** Zone -> nodes of the pool in the snapshot (for launchOffering). */
export function zoneLoad(
  nodes: readonly { readonly nodePoolName?: string; readonly labels: Readonly<Record<string, string>> }[],
  pool: string,
): Map<string, number> {
  const m = new Map<string, number>();
  for (const n of nodes) {
    const z = n.labels[ZONE_LABEL];
    if (n.nodePoolName === pool && z !== undefined) m.set(z, (m.get(z) ?? 0) + 1);
  }
  return m;
}

/** Keeps the options whose worst-case launch price is strictly below `limit` (§2.5.2). */
export function filterByPrice(reqs: Requirements, its: readonly InstanceType[], limit: number): InstanceType[] {
  const lim = toMicros(limit);
  return its.filter((it) => toMicros(worstLaunchPrice(reqs, it)) < lim);
}

export function claimRequirements(claim: NewNodeClaimPlan): Requirements {
  return fromSelectorRequirements(claim.requirements);
}

// Name -> type per catalog array: the arrays are immutable snapshot data, so the index is built once each.
const TYPE_INDEX = cacheSlot<readonly InstanceType[], ReadonlyMap<string, InstanceType>>('instance types by name');

/**
 * Name -> type over the immutable array: kept in `caches`, else built for the caller. No closure per call (a repack
 * asks thousands of times a plan; under tsx each closure is also named by a helper, ~1.2% of a warm plan's profile).
 */
function typeIndex(its: readonly InstanceType[], caches?: ModelCaches): ReadonlyMap<string, InstanceType> {
  const hit = caches?.get(TYPE_INDEX, its);
  if (hit) return hit;
  const index = new Map(its.map((it) => [it.name, it] as const));
  return caches ? caches.set(TYPE_INDEX, its, index) : index;
}

/** The pool's instance type of that name. */
export function typeByName(
  its: readonly InstanceType[] | undefined,
  name: string,
  caches?: ModelCaches,
): InstanceType | undefined {
  if (!its) return undefined;
  return caches ? typeIndex(its, caches).get(name) : its.find((it) => it.name === name);
}

/** The instance types a planned NodeClaim lists, resolved against its pool's types (in the plan's order). */
export function claimOptions(
  claim: NewNodeClaimPlan,
  types: ReadonlyMap<string, readonly InstanceType[]>,
  caches?: ModelCaches,
): InstanceType[] {
  const its = types.get(claim.nodePool);
  if (!its) return [];
  const index = typeIndex(its, caches);
  const out: InstanceType[] = [];
  for (const o of claim.instanceTypes) {
    const it = index.get(o.name);
    if (it) out.push(it);
  }
  return out;
}

/** The first key whose minValues the options no longer meet, or undefined. */
export function unmetMinValues(reqs: Requirements, its: readonly InstanceType[]): string | undefined {
  return minValuesUnmet(reqs, its);
}

export function allowsCapacityType(reqs: Requirements, ct: string): boolean {
  const r = reqs.get(CAPACITY_TYPE_LABEL);
  return !r || (r.complement ? !r.values.has(ct) : r.values.has(ct));
}

/**
 * The claim with new options (and possibly narrowed requirements): the instance-type requirement lists
 * exactly the options, each option is priced at its cheapest offering the requirements allow, in price
 * order (stable), and the claim is priced at its first option.
 */
export function withOptions(
  claim: NewNodeClaimPlan,
  reqs: Requirements,
  its: readonly InstanceType[],
): NewNodeClaimPlan {
  return withPricedOptions(
    claim,
    reqs,
    its.map((it) => ({ it, micros: toMicros(cheapestAllowed(reqs, it)?.price ?? Infinity) })),
  );
}

/** withOptions, for options already priced at their cheapest offering the requirements allow (micro-dollars). */
function withPricedOptions(
  claim: NewNodeClaimPlan,
  reqs: Requirements,
  options: ReadonlyArray<{ readonly it: InstanceType; readonly micros: number }>,
): NewNodeClaimPlan {
  return { ...claim, ...pricedOptions(reqs, options) };
}

/** The requirements, options and price withPricedOptions gives a NodeClaim (the same for claims of one shape). */
export function pricedOptions(
  reqs: Requirements,
  options: ReadonlyArray<{ readonly it: InstanceType; readonly micros: number }>,
): Pick<NewNodeClaimPlan, 'requirements' | 'instanceTypes' | 'price'> {
  const priced = options.map((o, i) => ({ ...o, i })).sort((a, b) => a.micros - b.micros || a.i - b.i);
  const itReq = reqs.get(INSTANCE_TYPE_LABEL);
  const narrowed = add(
    reqs,
    req(
      INSTANCE_TYPE_LABEL,
      false,
      priced.map((p) => p.it.name),
      undefined,
      undefined,
      itReq?.minValues,
    ),
  );
  const instanceTypes = priced.map((p) => ({ name: p.it.name, price: p.micros / 1e6 }));
  return {
    requirements: toSelectorRequirements(narrowed),
    instanceTypes,
    price: instanceTypes[0]?.price ?? 0,
  };
}

/** §2.5.4: Σ candidate prices − Σ the first option's cheapest available allowed offering per replacement. */
export function estimatedSavings(
  candidatePrices: readonly number[],
  replacements: readonly NewNodeClaimPlan[],
): number {
  let s = 0;
  for (const p of candidatePrices) s += p;
  for (const r of replacements) s -= Number.isFinite(r.price) ? r.price : 0;
  return s;
}
