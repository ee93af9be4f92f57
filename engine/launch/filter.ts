// Which instance types and offerings one launch may use: the AWS provider's launch-time filters (karpenter-provider-aws
// v1.14.1, pkg/providers/instance/filter/filter.go and instance.go getCapacityType), as pure functions over the
// domain types so that the controller's launch (controller/cloudprovider/aws/launch/create.ts) and the planner
// (the improvement phase names the type the launch would get, docs/solver.md) apply the same rules. In order:
//
// 1. compatible and available: types whose requirements intersect the NodeClaim's, whose allocatable fits the
//    requests, with an available offering the requirements allow;
// 2. reserved partition (when reserved is allowed and offered): one partition of reservations (the cheapest
//    offering's kind; ties: ODCR, then capacity block, then interruptible ODCR), per type and zone the offering with
//    the most instances left;
// 3. exotic types (metal sizes, GPU, Neuron, Gaudi) are dropped while generic ones remain (not with minValues);
// 4. with spot and on-demand both allowed and both offered, spot offerings dearer than the cheapest on-demand
//    offering are dropped, and types left with no offering go (not with minValues);
// 5. the capacity type: reserved if allowed and still offered, else spot if allowed and still offered, else
//    on-demand;
// 6. the types with an offering of that capacity type, cheapest first (ties: name), at most 60; minValues (Strict)
//    must still hold.
import { AMD_GPU, AWS_NEURON, HABANA_GAUDI, NVIDIA_GPU } from '../catalog/allocatable.ts';
import { CAPACITY_RESERVATION_ID_LABEL, INSTANCE_SIZE_LABEL } from '../catalog/labels.ts';
import { fits } from '../domain/resources.ts';
import type { InstanceType, Offering, Requirement, Requirements, Resources } from '../domain/types.ts';
import { CAPACITY_TYPE_LABEL, ZONE_ID_LABEL, ZONE_LABEL } from '../scheduling/labels.ts';
import { get, has, intersectsAll } from '../scheduling/requirements.ts';

/** The most instance types one launch (CreateFleet) is given. */
export const MAX_INSTANCE_TYPES = 60;
const EXOTIC_RESOURCES = [NVIDIA_GPU, AMD_GPU, AWS_NEURON, HABANA_GAUDI];

type ReservationType = 'default' | 'capacity-block';
interface ReservationKindOf {
  readonly reservationType: ReservationType;
  readonly interruptible: boolean;
}
/** The kind of a reservation, by id (EC2NodeClass status.capacityReservations). */
type ReservationKind = (id: string) => ReservationKindOf | undefined;

export interface Candidate {
  readonly type: InstanceType;
  /** Compatible, available offerings of the chosen capacity type, cheapest first. */
  readonly offerings: readonly Offering[];
}

type Selection =
  | {
      readonly ok: true;
      readonly capacityType: 'on-demand' | 'spot' | 'reserved';
      readonly candidates: readonly Candidate[];
      /** For reserved: the partition every candidate offering belongs to. */
      readonly reservation?: ReservationKindOf;
    }
  | { readonly ok: false; readonly reason: string };

/** Reservations of one partition launch together: ODCRs first, then capacity blocks, then interruptible ODCRs. */
function reservationRank(r: ReservationKindOf): number {
  return r.interruptible ? 2 : r.reservationType === 'capacity-block' ? 1 : 0;
}

/** The claim's requirements an offering is checked against, looked up once per selection (not per offering). */
interface OfferingReqs {
  readonly zone: Requirement;
  readonly capacityType: Requirement;
  readonly zoneId: Requirement | undefined;
  readonly reservationId: Requirement | undefined;
}

function offeringReqs(claim: Requirements): OfferingReqs {
  return {
    zone: get(claim, ZONE_LABEL),
    capacityType: get(claim, CAPACITY_TYPE_LABEL),
    zoneId: claim.get(ZONE_ID_LABEL),
    reservationId: claim.get(CAPACITY_RESERVATION_ID_LABEL),
  };
}

function offeringAllowed(o: Offering, r: OfferingReqs): boolean {
  if (!o.available) return false;
  if (!has(r.zone, o.zone)) return false;
  if (!has(r.capacityType, o.capacityType)) return false;
  if (o.zoneId && r.zoneId && !has(r.zoneId, o.zoneId)) return false;
  // Offerings without a reservation carry reservation-id DoesNotExist, which only NotIn or DoesNotExist accept.
  const rid = r.reservationId;
  if (rid) {
    if (o.reservationId === undefined) return rid.complement || rid.values.size === 0;
    if (!has(rid, o.reservationId)) return false;
  }
  return true;
}

/** Metal sizes and types with GPUs or accelerators: launched only when nothing generic can take the NodeClaim. */
export function isExotic(t: InstanceType): boolean {
  // Loops, not spreads and closures: the bound and the launch filter ask this of every type they look at.
  const sizes = t.requirements.get(INSTANCE_SIZE_LABEL)?.values;
  if (sizes) for (const v of sizes) if (v.includes('metal')) return true;
  for (const r of EXOTIC_RESOURCES) if ((t.capacity[r] ?? 0) > 0) return true;
  return false;
}

function cheapest(os: readonly Offering[]): number {
  let m = Infinity;
  for (const o of os) m = Math.min(m, o.price);
  return m;
}

function usesMinValues(claim: Requirements): boolean {
  for (const r of claim.values()) if (r.minValues !== undefined) return true;
  return false;
}

/**
 * Per type, the offerings a launch may still use (step 1's survivors, narrowed by the later steps). The offering
 * arrays are the selection's own (made in step 1 or a later step), so the steps may narrow and sort them in place.
 */
type Pool = Array<{ readonly type: InstanceType; offerings: Offering[] }>;

/** Step 1: types compatible with the claim, fitting the requests, with an allowed offering (only those offerings). */
function compatiblePool(types: readonly InstanceType[], claim: Requirements, requests: Resources): Pool {
  const reqs = offeringReqs(claim);
  const pool: Pool = [];
  for (const type of types) {
    if (!intersectsAll(type.requirements, claim) || !fits(requests, type.allocatable)) continue;
    // Counted first, then copied into an array of that size: an array grown by pushing starts far larger.
    let n = 0;
    for (const o of type.offerings) if (offeringAllowed(o, reqs)) n++;
    if (n === 0) continue;
    const offerings = new Array<Offering>(n);
    let k = 0;
    for (const o of type.offerings) if (offeringAllowed(o, reqs)) offerings[k++] = o;
    pool.push({ type, offerings });
  }
  return pool;
}

function offers(pool: Pool, capacityType: string): boolean {
  for (const p of pool) for (const o of p.offerings) if (o.capacityType === capacityType) return true;
  return false;
}

/** Step 4: spot offerings dearer than the cheapest on-demand one go; types left without offerings go. */
function spotFilter(pool: Pool, ct: Requirement): Pool {
  if (!has(ct, 'spot') || !has(ct, 'on-demand')) return pool;
  let floor = Infinity;
  for (const p of pool)
    for (const o of p.offerings) if (o.capacityType === 'on-demand') floor = Math.min(floor, o.price);
  if (!Number.isFinite(floor) || !offers(pool, 'spot')) return pool;
  const out: Pool = [];
  const keep = (o: Offering) => o.capacityType !== 'spot' || o.price <= floor;
  for (const p of pool) {
    keepOnly(p.offerings, keep);
    if (p.offerings.length > 0) out.push(p);
  }
  return out;
}

/** Keeps the offerings `keep` accepts, in order, in the array itself. */
function keepOnly(offerings: Offering[], keep: (o: Offering) => boolean): void {
  let n = 0;
  for (const o of offerings) if (keep(o)) offerings[n++] = o;
  offerings.length = n;
}

/**
 * Step 6: the types with an offering of the capacity type, cheapest first (ties: name), at most MAX_INSTANCE_TYPES,
 * each with those offerings cheapest first (ties: zone). Only the kept types' offerings are sorted.
 */
function cheapestFirst(pool: Pool, capacityType: string): Candidate[] {
  const kept: Pool = [];
  const price: number[] = [];
  const keep = (o: Offering) => o.capacityType === capacityType;
  for (const p of pool) {
    keepOnly(p.offerings, keep);
    if (!p.offerings.length) continue;
    kept.push(p);
    price.push(cheapest(p.offerings));
  }
  const order = kept.map((_, i) => i);
  order.sort((a, b) => price[a]! - price[b]! || kept[a]!.type.name.localeCompare(kept[b]!.type.name));
  if (order.length > MAX_INSTANCE_TYPES) order.length = MAX_INSTANCE_TYPES;
  return order.map((i) => ({
    type: kept[i]!.type,
    offerings: kept[i]!.offerings.sort((a, b) => a.price - b.price || a.zone.localeCompare(b.zone)),
  }));
}

export function selectCandidates(
  types: readonly InstanceType[],
  claim: Requirements,
  requests: Resources,
  minValuesPolicy: 'Strict' | 'BestEffort' = 'Strict',
  kindOf: ReservationKind = () => undefined,
): Selection {
  // 1. compatible, fitting, with an allowed offering
  let pool = compatiblePool(types, claim, requests);
  if (!pool.length)
    return { ok: false, reason: 'no instance type satisfies the requirements and requests with an available offering' };
  const minValues = usesMinValues(claim);
  const ct = get(claim, CAPACITY_TYPE_LABEL);
  // 2. reserved
  if (has(ct, 'reserved') && offers(pool, 'reserved')) {
    const reserved = reservedSelection(pool, kindOf);
    const unmet = minValues && minValuesPolicy === 'Strict' ? unmetMinValues(claim, reserved.candidates) : undefined;
    return unmet
      ? { ok: false, reason: unmet }
      : { ok: true, capacityType: 'reserved', candidates: reserved.candidates, reservation: reserved.partition };
  }
  if (!minValues) {
    // 3. exotic
    const generic = pool.filter((p) => !isExotic(p.type));
    if (generic.length) pool = generic;
    // 4. spot
    pool = spotFilter(pool, ct);
  }
  // 5. capacity type
  const capacityType = has(ct, 'spot') && offers(pool, 'spot') ? 'spot' : 'on-demand';
  // 6. cheapest first, truncated
  const candidates = cheapestFirst(pool, capacityType);
  if (!candidates.length) return { ok: false, reason: `no ${capacityType} offering is available` };
  const unmet = minValues && minValuesPolicy === 'Strict' ? unmetMinValues(claim, candidates) : undefined;
  if (unmet) return { ok: false, reason: unmet };
  return { ok: true, capacityType, candidates };
}

function unmetMinValues(claim: Requirements, candidates: readonly Candidate[]): string | undefined {
  for (const r of claim.values()) {
    if (r.minValues === undefined) continue;
    const values = new Set(candidates.flatMap((c) => [...(c.type.requirements.get(r.key)?.values ?? [])]));
    if (values.size < r.minValues)
      return `minValues ${r.minValues} of ${r.key} cannot be met (${values.size} values left)`;
  }
  return undefined;
}

/** Reserved: one partition (cheapest first, ties by kind), then per type and zone the offering with most left. */
function reservedSelection(
  pool: Pool,
  kindOf: ReservationKind,
): { candidates: Candidate[]; partition: ReservationKindOf } {
  const kind = (o: Offering) =>
    kindOf(o.reservationId ?? '') ?? { reservationType: 'default' as const, interruptible: false };
  const reservedOf = (p: Pool[number]) => p.offerings.filter((o) => o.capacityType === 'reserved');
  const all = pool.flatMap(reservedOf);
  const best = [...all].sort((a, b) => a.price - b.price || reservationRank(kind(a)) - reservationRank(kind(b)))[0]!;
  const partition = kind(best);
  const same = (o: Offering) => {
    const k = kind(o);
    return k.reservationType === partition.reservationType && k.interruptible === partition.interruptible;
  };
  const candidates = pool
    .map((p) => {
      const perZone = new Map<string, Offering>();
      for (const o of reservedOf(p).filter(same)) {
        const cur = perZone.get(o.zone);
        if (!cur || (o.reservationCapacity ?? 0) > (cur.reservationCapacity ?? 0)) perZone.set(o.zone, o);
      }
      return {
        type: p.type,
        offerings: [...perZone.values()].sort((a, b) => a.price - b.price || a.zone.localeCompare(b.zone)),
      };
    })
    .filter((c) => c.offerings.length)
    .sort((a, b) => cheapest(a.offerings) - cheapest(b.offerings) || a.type.name.localeCompare(b.type.name))
    .slice(0, MAX_INSTANCE_TYPES);
  return { candidates, partition };
}
