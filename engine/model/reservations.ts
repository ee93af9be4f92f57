// Reserved capacity in the scheduler (docs/karpenter/scheduling.md §2.15): offerings with capacity type `reserved` carry a
// reservation ID and a count of instances still available in it. NodeClaims planned in one solve hold the
// reservations they could launch into, pessimistically (every compatible one, since which instance type launches
// is decided later), so a plan never asks for more instances of a reservation than it has.
import type { InstanceType, Offering, Requirements } from '../domain/types.ts';
import { CAPACITY_TYPE_LABEL, RESERVATION_ID_LABEL } from '../scheduling/labels.ts';
import { add, req } from '../scheduling/requirements.ts';
import { cacheSlot, type ModelCaches } from './caches.ts';
import { offeringAllowed } from './templates.ts';

export { RESERVATION_ID_LABEL };

/**
 * Strict (provisioning): a pod that would leave a NodeClaim without the reserved capacity it could have had fails
 * with a reserved-offering error instead of falling back to on-demand or spot. Fallback (disruption simulations):
 * such a pod simply goes on without reservations.
 */
export type ReservedOfferingMode = 'Strict' | 'Fallback';

/** The available reserved offerings of an instance type (checked once per type object). */
const RESERVED = cacheSlot<InstanceType, readonly Offering[]>('reserved offerings');

function reservedOfferings(it: InstanceType, caches?: ModelCaches): readonly Offering[] {
  // Most types offer no reservation: one shared empty list for them, not a list and a cache entry per type.
  if (!offersReserved(it)) return NONE;
  return caches ? caches.memo(RESERVED, it, () => reservedOf(it)) : reservedOf(it);
}

const NONE: readonly Offering[] = Object.freeze([]);

function offersReserved(it: InstanceType): boolean {
  for (const o of it.offerings) if (o.capacityType === 'reserved') return true;
  return false;
}

function reservedOf(it: InstanceType): readonly Offering[] {
  const out: Offering[] = [];
  for (const o of it.offerings) {
    if (o.capacityType !== 'reserved') continue;
    if (o.reservationId === undefined || o.reservationId === '') {
      throw new Error(`instance type ${it.name}: reserved offering in zone ${o.zone} has no reservationId`);
    }
    const n = o.reservationCapacity;
    if (n === undefined || !Number.isInteger(n) || n < 0) {
      throw new Error(
        `instance type ${it.name}: reserved offering ${o.reservationId} has reservationCapacity ${String(n)} (want an integer >= 0)`,
      );
    }
    if (o.available) out.push(o);
  }
  return out;
}

/**
 * Remaining instances per reservation ID and the IDs each planned NodeClaim (by hostname) holds. When several
 * offerings carry one ID (NodePools sharing a reservation), the smallest count is the one believed.
 */
export class ReservationManager {
  private readonly remaining = new Map<string, number>();
  private readonly held = new Map<string, Set<string>>();

  constructor(
    instanceTypes: Iterable<readonly InstanceType[]>,
    readonly caches?: ModelCaches,
  ) {
    for (const its of instanceTypes) {
      for (const [id, n] of countsOf(its, caches)) {
        const cur = this.remaining.get(id);
        if (cur === undefined || n < cur) this.remaining.set(id, n);
      }
    }
  }

  get empty(): boolean {
    return this.remaining.size === 0;
  }

  remainingOf(id: string): number {
    return this.remaining.get(id) ?? 0;
  }

  heldBy(hostname: string): ReadonlySet<string> {
    return this.held.get(hostname) ?? EMPTY;
  }

  /** The NodeClaim already holds the reservation, or one instance of it is left. */
  canHold(hostname: string, id: string): boolean {
    return this.heldBy(hostname).has(id) || this.remainingOf(id) > 0;
  }

  /** Replaces what the NodeClaim holds: takes one instance of each newly held ID, gives back each dropped one. */
  commit(hostname: string, next: ReadonlySet<string>): void {
    const prev = this.heldBy(hostname);
    for (const id of prev) if (!next.has(id)) this.remaining.set(id, this.remainingOf(id) + 1);
    for (const id of next) {
      if (prev.has(id)) continue;
      const left = this.remainingOf(id);
      if (left <= 0) throw new Error(`reservation ${id}: over-reserved by NodeClaim ${hostname}`);
      this.remaining.set(id, left - 1);
    }
    if (next.size) this.held.set(hostname, new Set(next));
    else this.held.delete(hostname);
  }
}

const EMPTY: ReadonlySet<string> = new Set();

/** Per catalog array (immutable snapshot data): the smallest count of each reservation ID its offerings carry. */
const COUNTS = cacheSlot<readonly InstanceType[], ReadonlyMap<string, number>>('reservation counts');

function countsOf(its: readonly InstanceType[], caches?: ModelCaches): ReadonlyMap<string, number> {
  return caches ? caches.memo(COUNTS, its, () => countReservations(its, caches)) : countReservations(its);
}

function countReservations(its: readonly InstanceType[], caches?: ModelCaches): ReadonlyMap<string, number> {
  const m = new Map<string, number>();
  for (const it of its) {
    reservedOfferings(it, caches);
    for (const o of it.offerings) {
      if (o.capacityType !== 'reserved') continue;
      const cur = m.get(o.reservationId!);
      if (cur === undefined || o.reservationCapacity! < cur) m.set(o.reservationId!, o.reservationCapacity!);
    }
  }
  return m;
}

type ReservationCheck = { ok: true; held: ReadonlySet<string> } | { ok: false; reason: string };

/**
 * Which reservations a NodeClaim would hold with these requirements and remaining instance types: every available
 * reserved offering they allow that it holds already or that has an instance left. Strict mode refuses when
 * compatible reserved offerings exist but none can be held, or when the NodeClaim held some and would hold none.
 */
export function checkReservations(
  rm: ReservationManager,
  mode: ReservedOfferingMode,
  hostname: string,
  reqs: Requirements,
  kept: readonly InstanceType[],
): ReservationCheck {
  if (rm.empty) return { ok: true, held: EMPTY };
  let compatible = false;
  const next = new Set<string>();
  for (const it of kept) {
    for (const o of reservedOfferings(it, rm.caches)) {
      if (!offeringAllowed(reqs, o)) continue;
      compatible = true;
      if (rm.canHold(hostname, o.reservationId!)) next.add(o.reservationId!);
    }
  }
  if (mode === 'Strict') {
    if (compatible && next.size === 0) {
      return {
        ok: false,
        reason:
          'one or more instance types with compatible reserved offerings are available, but could not be reserved',
      };
    }
    if (rm.heldBy(hostname).size > 0 && next.size === 0) {
      return {
        ok: false,
        reason: 'satisfying updated nodeclaim constraints would remove all compatible reserved offering options',
      };
    }
  }
  return { ok: true, held: next };
}

/** Finalisation (§2.15): a NodeClaim holding reservations launches into one of them. */
export function withReservationRequirements(reqs: Requirements, held: ReadonlySet<string>): Requirements {
  if (held.size === 0) return reqs;
  return add(reqs, req(CAPACITY_TYPE_LABEL, false, ['reserved']), req(RESERVATION_ID_LABEL, false, [...held].sort()));
}
