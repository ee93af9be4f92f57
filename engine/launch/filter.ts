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
import type { InstanceType, Offering, Requirements, Resources } from '../domain/types.ts';
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

function offeringAllowed(o: Offering, claim: Requirements): boolean {
  if (!o.available) return false;
  if (!has(get(claim, ZONE_LABEL), o.zone)) return false;
  if (!has(get(claim, CAPACITY_TYPE_LABEL), o.capacityType)) return false;
  if (o.zoneId && claim.has(ZONE_ID_LABEL) && !has(get(claim, ZONE_ID_LABEL), o.zoneId)) return false;
  // Offerings without a reservation carry reservation-id DoesNotExist, which only NotIn or DoesNotExist accept.
  const rid = claim.get(CAPACITY_RESERVATION_ID_LABEL);
  if (rid) {
    if (o.reservationId === undefined) return rid.complement || rid.values.size === 0;
    if (!has(rid, o.reservationId)) return false;
  }
  return true;
}

/** Metal sizes and types with GPUs or accelerators: launched only when nothing generic can take the NodeClaim. */
export function isExotic(t: InstanceType): boolean {
  return (
    [...(t.requirements.get(INSTANCE_SIZE_LABEL)?.values ?? [])].some((v) => v.includes('metal')) ||
    EXOTIC_RESOURCES.some((r) => (t.capacity[r] ?? 0) > 0)
  );
}

const cheapest = (os: readonly Offering[]): number => os.reduce((m, o) => Math.min(m, o.price), Infinity);

const usesMinValues = (claim: Requirements): boolean => [...claim.values()].some((r) => r.minValues !== undefined);

/** Per type, the offerings a launch may still use (step 1's survivors, narrowed by the later steps). */
type Pool = ReadonlyArray<{ readonly type: InstanceType; readonly offerings: readonly Offering[] }>;

/** Step 4: spot offerings dearer than the cheapest on-demand one go; types left without offerings go. */
function spotFilter(pool: Pool, claim: Requirements): Pool {
  const ct = get(claim, CAPACITY_TYPE_LABEL);
  if (!has(ct, 'spot') || !has(ct, 'on-demand')) return pool;
  const all = pool.flatMap((p) => p.offerings);
  const floor = cheapest(all.filter((o) => o.capacityType === 'on-demand'));
  if (!Number.isFinite(floor) || !all.some((o) => o.capacityType === 'spot')) return pool;
  return pool
    .map((p) => ({ type: p.type, offerings: p.offerings.filter((o) => o.capacityType !== 'spot' || o.price <= floor) }))
    .filter((p) => p.offerings.length > 0);
}

export function selectCandidates(
  types: readonly InstanceType[],
  claim: Requirements,
  requests: Resources,
  minValuesPolicy: 'Strict' | 'BestEffort' = 'Strict',
  kindOf: ReservationKind = () => undefined,
): Selection {
  // 1. compatible, fitting, with an allowed offering
  let pool: Pool = types
    .filter((t) => intersectsAll(t.requirements, claim) && fits(requests, t.allocatable))
    .map((type) => ({ type, offerings: type.offerings.filter((o) => offeringAllowed(o, claim)) }))
    .filter((p) => p.offerings.length > 0);
  if (!pool.length)
    return { ok: false, reason: 'no instance type satisfies the requirements and requests with an available offering' };
  const minValues = usesMinValues(claim);
  const allowed = (ct: string) => has(get(claim, CAPACITY_TYPE_LABEL), ct);
  // 2. reserved
  if (allowed('reserved') && pool.some((p) => p.offerings.some((o) => o.capacityType === 'reserved'))) {
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
    pool = spotFilter(pool, claim);
  }
  // 5. capacity type
  const capacityType =
    allowed('spot') && pool.some((p) => p.offerings.some((o) => o.capacityType === 'spot')) ? 'spot' : 'on-demand';
  // 6. cheapest first, truncated
  const candidates = pool
    .map((p) => ({
      type: p.type,
      offerings: p.offerings
        .filter((o) => o.capacityType === capacityType)
        .sort((a, b) => a.price - b.price || a.zone.localeCompare(b.zone)),
    }))
    .filter((c) => c.offerings.length)
    .sort((a, b) => cheapest(a.offerings) - cheapest(b.offerings) || a.type.name.localeCompare(b.type.name))
    .slice(0, MAX_INSTANCE_TYPES);
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
