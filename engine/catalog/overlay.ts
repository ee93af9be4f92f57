// NodeOverlays applied to the instance types each NodePool sees (Karpenter core pkg/controllers/nodeoverlay,
// main after v1.14.1; the feature gate NodeOverlay). Pure: overlays and instance types in, the overlaid catalog
// and each overlay's outcome out.
//
// 1. Overlays are taken by weight, highest first; equal weights by name, later in the alphabet first. One
//    whose run-time validation failed applies to nothing.
// 2. An overlay selects, per NodePool, the instance types compatible with its requirements (the type's
//    labels, the pool's name and template labels; a key none of them defines must be NotIn/DoesNotExist),
//    and of each such type the offerings its requirements allow (zone, capacity type, reservation).
// 3. Price: each selected offering takes the price (absolute) or the adjustment (±amount, ±percent, never
//    below 0) of the heaviest overlay selecting it. Capacity: each extended resource comes from the heaviest
//    overlay naming it for that type.
// 4. Conflict: an overlay that, at the weight of the lightest overlay already applied to an offering (price)
//    or to a resource of the type (capacity), would set it again conflicts, is applied nowhere, and reports
//    ValidationSucceeded=False (Conflict). The overlays applied before it keep their effect.
import type { InstanceType, NodePool, Offering, Requirements, Resources } from '../domain/types.ts';
import type { NodeOverlay } from '../api/nodeoverlay.ts';
import { CAPACITY_TYPE_LABEL, NODEPOOL_LABEL, RESERVATION_ID_LABEL, ZONE_LABEL } from '../scheduling/labels.ts';
import {
  compatible,
  fromLabels,
  fromSelectorRequirements,
  has,
  operatorOf,
  req,
  requirements,
  addAll,
} from '../scheduling/requirements.ts';

/** Karpenter's AdjustedPrice: an absolute price, or ±amount, or ±percent of the price; never below 0. */
export function adjustedPrice(price: number, change: string | undefined): number {
  if (!change) return price;
  if (!change.startsWith('+') && !change.startsWith('-')) return Number(change);
  const adjusted = change.endsWith('%') ? price * (1 + Number(change.slice(0, -1)) / 100) : price + Number(change);
  // biome-ignore lint/complexity/useMathMinMax: NaN must become 0 too, which Math.max would not do
  return adjusted >= 0 ? adjusted : 0;
}

interface PriceUpdate {
  readonly change: string;
  lowestWeight: number;
}
interface CapacityUpdate {
  readonly resources: Record<string, number>;
  lowestWeight: number;
  lowestResources: Resources;
}
interface TypeUpdate {
  readonly price: Map<string, PriceUpdate>;
  capacity?: CapacityUpdate;
}

/** Per pool, per instance type: what the applied overlays change. */
export type OverlayUpdates = ReadonlyMap<string, ReadonlyMap<string, TypeUpdate>>;

export type OverlayOutcome =
  | { readonly name: string; readonly status: 'Applied' }
  | { readonly name: string; readonly status: 'Conflict' | 'RuntimeValidation'; readonly message: string };

interface OverlayEvaluation {
  readonly updates: OverlayUpdates;
  readonly outcomes: readonly OverlayOutcome[];
}

export interface PoolTypes {
  readonly pool: NodePool;
  readonly instanceTypes: readonly InstanceType[];
}

const offeringKey = (o: Offering): string => `${o.zone}/${o.capacityType}/${o.reservationId ?? ''}`;

/** Karpenter's OrderByWeight: heavier first; equal weights, the later name first. */
function byWeight(a: NodeOverlay, b: NodeOverlay): number {
  return b.weight - a.weight || (a.name < b.name ? 1 : a.name > b.name ? -1 : 0);
}

/** Whether the overlay's requirements allow the offering (its zone, capacity type and reservation). */
function offeringSelected(reqs: Requirements, o: Offering): boolean {
  const zone = reqs.get(ZONE_LABEL);
  if (zone && !has(zone, o.zone)) return false;
  const ct = reqs.get(CAPACITY_TYPE_LABEL);
  if (ct && !has(ct, o.capacityType)) return false;
  const rid = reqs.get(RESERVATION_ID_LABEL);
  if (!rid) return true;
  if (o.reservationId === undefined) return operatorOf(rid) === 'NotIn' || operatorOf(rid) === 'DoesNotExist';
  return has(rid, o.reservationId);
}

/** The offerings of `it` the overlay selects in `pool` (none: the overlay does not select the type). */
function selectedOfferings(pool: NodePool, it: InstanceType, reqs: Requirements): Offering[] {
  const typeReqs = addAll(
    requirements(req(NODEPOOL_LABEL, false, [pool.name]), ...fromLabels(pool.template.labels).values()),
    it.requirements,
  );
  if (compatible(typeReqs, reqs) !== undefined) return [];
  return it.offerings.filter((o) => offeringSelected(reqs, o));
}

function typeUpdate(updates: Map<string, Map<string, TypeUpdate>>, pool: string, type: string): TypeUpdate {
  let byType = updates.get(pool);
  if (!byType) updates.set(pool, (byType = new Map()));
  let u = byType.get(type);
  if (!u) byType.set(type, (u = { price: new Map() }));
  return u;
}

function conflicts(u: TypeUpdate | undefined, ov: NodeOverlay, offerings: readonly Offering[]): boolean {
  if (!u) return false;
  const pricing = ov.price !== undefined || ov.priceAdjustment !== undefined;
  if (pricing && offerings.some((o) => u.price.get(offeringKey(o))?.lowestWeight === ov.weight)) return true;
  const cap = u.capacity;
  return (
    ov.capacity !== undefined &&
    cap !== undefined &&
    cap.lowestWeight === ov.weight &&
    Object.keys(ov.capacity).some((k) => k in cap.lowestResources)
  );
}

function record(u: TypeUpdate, ov: NodeOverlay, offerings: readonly Offering[]): void {
  const change = ov.price ?? ov.priceAdjustment;
  if (change !== undefined) {
    for (const o of offerings) {
      const cur = u.price.get(offeringKey(o));
      if (cur) cur.lowestWeight = ov.weight;
      else u.price.set(offeringKey(o), { change, lowestWeight: ov.weight });
    }
  }
  if (!ov.capacity) return;
  if (!u.capacity)
    u.capacity = { resources: { ...ov.capacity }, lowestWeight: ov.weight, lowestResources: ov.capacity };
  else {
    for (const [k, v] of Object.entries(ov.capacity)) if (!(k in u.capacity.resources)) u.capacity.resources[k] = v;
    u.capacity.lowestWeight = ov.weight;
    u.capacity.lowestResources = ov.capacity;
  }
}

/** One overlay against every pool: a conflict anywhere means it applies nowhere (all or nothing). */
function evaluateOne(
  updates: Map<string, Map<string, TypeUpdate>>,
  pools: readonly PoolTypes[],
  ov: NodeOverlay,
): boolean {
  const reqs = fromSelectorRequirements(ov.requirements);
  const selected: Array<{ pool: string; type: string; offerings: Offering[] }> = [];
  for (const { pool, instanceTypes } of pools) {
    for (const it of instanceTypes) {
      const offerings = selectedOfferings(pool, it, reqs);
      if (!offerings.length) continue;
      if (conflicts(updates.get(pool.name)?.get(it.name), ov, offerings)) return false;
      selected.push({ pool: pool.name, type: it.name, offerings });
    }
  }
  for (const s of selected) record(typeUpdate(updates, s.pool, s.type), ov, s.offerings);
  return true;
}

/** Every overlay in weight order against every pool's instance types. */
export function evaluateOverlays(pools: readonly PoolTypes[], overlays: readonly NodeOverlay[]): OverlayEvaluation {
  const updates = new Map<string, Map<string, TypeUpdate>>();
  const outcomes: OverlayOutcome[] = [];
  for (const ov of [...overlays].sort(byWeight)) {
    if (ov.runtimeProblems.length)
      outcomes.push({ name: ov.name, status: 'RuntimeValidation', message: ov.runtimeProblems.join('; ') });
    else if (evaluateOne(updates, pools, ov)) outcomes.push({ name: ov.name, status: 'Applied' });
    else outcomes.push({ name: ov.name, status: 'Conflict', message: 'conflict with another overlay' });
  }
  return { updates, outcomes };
}

/** The pool's instance types with the evaluated overlays applied (the same objects where nothing applies). */
export function applyOverlays(updates: OverlayUpdates, pool: string, types: readonly InstanceType[]): InstanceType[] {
  const byType = updates.get(pool);
  if (!byType) return [...types];
  return types.map((it) => {
    const u = byType.get(it.name);
    if (!u) return it;
    const offerings = u.price.size
      ? it.offerings.map((o) => {
          const p = u.price.get(offeringKey(o));
          return p ? { ...o, price: adjustedPrice(o.price, p.change), priceOverlaid: true as const } : o;
        })
      : it.offerings;
    const extra = u.capacity?.resources;
    if (!extra || !Object.keys(extra).length) return { ...it, offerings };
    return {
      ...it,
      offerings,
      capacity: { ...it.capacity, ...extra },
      allocatable: { ...it.allocatable, ...extra },
      capacityOverlaid: true as const,
    };
  });
}

/** On a NodeClaim one of whose instance types has an offering a NodeOverlay priced (Karpenter v1alpha1). */
export const PRICE_OVERLAY_APPLIED_ANNOTATION = 'karpenter.sh/price-overlay-applied';
/** On a NodeClaim one of whose instance types a NodeOverlay added capacity to (Karpenter v1alpha1). */
const CAPACITY_OVERLAY_APPLIED_ANNOTATION = 'karpenter.sh/capacity-overlay-applied';

/**
 * The annotations a NodeClaim launched from these instance types (its price-ordered, truncated list) carries:
 * Karpenter's NodeClaimTemplate marks a NodeClaim whose types include an overlaid price or capacity, and its
 * AWS provider launches a price-overlaid one with the prioritized allocation strategies (the overlay's prices
 * as priorities). Undefined when no overlay touched them.
 */
export function overlayAnnotations(types: readonly InstanceType[]): Readonly<Record<string, string>> | undefined {
  const price = types.some((it) => it.offerings.some((o) => o.priceOverlaid));
  const capacity = types.some((it) => it.capacityOverlaid);
  if (!price && !capacity) return undefined;
  return Object.freeze({
    ...(price ? { [PRICE_OVERLAY_APPLIED_ANNOTATION]: 'true' } : {}),
    ...(capacity ? { [CAPACITY_OVERLAY_APPLIED_ANNOTATION]: 'true' } : {}),
  });
}
