// Which instance types and offerings one launch may use (spec/aws-provider.md §4.2-4.3), in Karpenter's order:
// keep types whose requirements intersect the NodeClaim's, whose allocatable fits the requests and that
// have a compatible available offering; drop exotic types (metal, GPU, Neuron, Gaudi) while generic ones
// remain; pick the capacity type (reserved when allowed and some type has an available reserved offering, else
// spot when allowed and offered, else on-demand); for reserved, keep one reservation partition (the cheapest
// offering's kind; ties: ODCR, then capacity block, then interruptible ODCR) and per type and zone the offering
// with the most instances left; with spot and on-demand allowed, drop spot types dearer than the cheapest
// on-demand offering; sort by cheapest offering and keep 60.
import { reservationRank, type ReservationType } from '../capacityreservation.ts';
import {
  AMD_GPU, AWS_NEURON, CAPACITY_RESERVATION_ID_LABEL, CAPACITY_TYPE_LABEL, fits, HABANA_GAUDI, INSTANCE_SIZE_LABEL, NVIDIA_GPU, reqs, ZONE_ID_LABEL, ZONE_LABEL, type InstanceType, type Offering,
  type Requirements, type Resources,
} from '../../../../engine/index.ts';

export const MAX_INSTANCE_TYPES = 60;
const EXOTIC_RESOURCES = [NVIDIA_GPU, AMD_GPU, AWS_NEURON, HABANA_GAUDI];

export interface Candidate {
  readonly type: InstanceType;
  /** Compatible, available offerings of the chosen capacity type, cheapest first. */
  readonly offerings: readonly Offering[];
}

/** The kind of a reservation, by id (status.capacityReservations). */
export type ReservationKind = (id: string) => { readonly reservationType: ReservationType; readonly interruptible: boolean } | undefined;

export type Selection =
  | {
      readonly ok: true;
      readonly capacityType: 'on-demand' | 'spot' | 'reserved';
      readonly candidates: readonly Candidate[];
      /** For reserved: the partition every candidate offering belongs to. */
      readonly reservation?: { readonly reservationType: ReservationType; readonly interruptible: boolean };
    }
  | { readonly ok: false; readonly reason: string };

export function offeringAllowed(o: Offering, claim: Requirements): boolean {
  if (!o.available) return false;
  if (!reqs.has(reqs.get(claim, ZONE_LABEL), o.zone)) return false;
  if (!reqs.has(reqs.get(claim, CAPACITY_TYPE_LABEL), o.capacityType)) return false;
  if (o.zoneId && claim.has(ZONE_ID_LABEL) && !reqs.has(reqs.get(claim, ZONE_ID_LABEL), o.zoneId)) return false;
  // Offerings without a reservation carry reservation-id DoesNotExist, which only NotIn or DoesNotExist accept.
  const rid = claim.get(CAPACITY_RESERVATION_ID_LABEL);
  if (rid) {
    if (o.reservationId === undefined) return rid.complement || rid.values.size === 0;
    if (!reqs.has(rid, o.reservationId)) return false;
  }
  return true;
}

const isExotic = (t: InstanceType): boolean =>
  [...(t.requirements.get(INSTANCE_SIZE_LABEL)?.values ?? [])].some((v) => v.includes('metal')) ||
  EXOTIC_RESOURCES.some((r) => (t.capacity[r] ?? 0) > 0);

const cheapest = (os: readonly Offering[]): number => os.reduce((m, o) => Math.min(m, o.price), Infinity);

const usesMinValues = (claim: Requirements): boolean => [...claim.values()].some((r) => r.minValues !== undefined);

export function selectCandidates(
  types: readonly InstanceType[], claim: Requirements, requests: Resources, minValuesPolicy: 'Strict' | 'BestEffort' = 'Strict', kindOf: ReservationKind = () => undefined,
): Selection {
  // 1. compatible, fitting, with an allowed offering
  let pool = types.filter((t) => reqs.intersects(t.requirements, claim) === undefined && fits(requests, t.allocatable) && t.offerings.some((o) => offeringAllowed(o, claim)));
  if (!pool.length) return { ok: false, reason: 'no instance type satisfies the requirements and requests with an available offering' };
  const minValues = usesMinValues(claim);
  // 2. exotic filter
  if (!minValues) {
    const generic = pool.filter((t) => !isExotic(t));
    if (generic.length) pool = generic;
  }
  // 3. capacity type
  const allowed = (ct: string) => reqs.has(reqs.get(claim, CAPACITY_TYPE_LABEL), ct);
  const offered = (t: InstanceType, ct: string) => t.offerings.filter((o) => o.capacityType === ct && offeringAllowed(o, claim));
  const capacityType = allowed('reserved') && pool.some((t) => offered(t, 'reserved').length)
    ? 'reserved'
    : allowed('spot') && pool.some((t) => offered(t, 'spot').length) ? 'spot' : 'on-demand';
  if (capacityType === 'reserved') {
    const reserved = reservedSelection(pool, offered, kindOf);
    const unmet = minValues && minValuesPolicy === 'Strict' ? unmetMinValues(claim, reserved.candidates) : undefined;
    return unmet ? { ok: false, reason: unmet } : { ok: true, capacityType, candidates: reserved.candidates, reservation: reserved.partition };
  }
  // 4. spot filter
  if (capacityType === 'spot' && allowed('on-demand') && !minValues) {
    const odFloor = cheapest(pool.flatMap((t) => offered(t, 'on-demand')));
    if (Number.isFinite(odFloor)) pool = pool.filter((t) => cheapest(offered(t, 'spot')) <= odFloor);
  }
  // 5. truncate by price
  const candidates = pool
    .map((type) => ({ type, offerings: offered(type, capacityType).sort((a, b) => a.price - b.price || a.zone.localeCompare(b.zone)) }))
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
    if (values.size < r.minValues) return `minValues ${r.minValues} of ${r.key} cannot be met (${values.size} values left)`;
  }
  return undefined;
}

/** Reserved: one partition (cheapest first, ties by kind), then per type and zone the offering with most left. */
function reservedSelection(
  pool: readonly InstanceType[], offered: (t: InstanceType, ct: string) => Offering[], kindOf: ReservationKind,
): { candidates: Candidate[]; partition: { reservationType: ReservationType; interruptible: boolean } } {
  const kind = (o: Offering) => kindOf(o.reservationId ?? '') ?? { reservationType: 'default' as const, interruptible: false };
  const all = pool.flatMap((t) => offered(t, 'reserved'));
  const best = [...all].sort((a, b) => a.price - b.price || reservationRank(kind(a)) - reservationRank(kind(b)))[0]!;
  const partition = kind(best);
  const same = (o: Offering) => {
    const k = kind(o);
    return k.reservationType === partition.reservationType && k.interruptible === partition.interruptible;
  };
  const candidates = pool
    .map((type) => {
      const perZone = new Map<string, Offering>();
      for (const o of offered(type, 'reserved').filter(same)) {
        const cur = perZone.get(o.zone);
        if (!cur || (o.reservationCapacity ?? 0) > (cur.reservationCapacity ?? 0)) perZone.set(o.zone, o);
      }
      return { type, offerings: [...perZone.values()].sort((a, b) => a.price - b.price || a.zone.localeCompare(b.zone)) };
    })
    .filter((c) => c.offerings.length)
    .sort((a, b) => cheapest(a.offerings) - cheapest(b.offerings) || a.type.name.localeCompare(b.type.name))
    .slice(0, MAX_INSTANCE_TYPES);
  return { candidates, partition };
}
