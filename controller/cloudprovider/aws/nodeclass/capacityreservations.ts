// spec.capacityReservationSelectorTerms -> status.capacityReservations (docs/karpenter/aws-provider.md §5). Every id term
// goes into one DescribeCapacityReservations call by CapacityReservationIds; every other term is one call with
// its filters ANDed (tags as for subnets, ownerID -> owner-id, instanceMatchCriteria -> instance-match-criteria).
// Each call also filters state=active; results are ORed across terms and deduplicated. An id EC2 does not know
// is reported by term index, so the condition names the field to fix.
import type { CapacityReservation } from '@aws-sdk/client-ec2';
import type { CapacityReservationSelectorTerm, EC2NodeClass } from '../../../../engine/index.ts';
import { CAPACITY_BLOCK_EXPIRY_MS, type ResolvedReservation } from '../capacityreservation.ts';
import { errorCodes } from '../errors.ts';
import type { Ec2Port, Filter } from '../sdk.ts';
import { rfc3339 } from './object.ts';
import { tagFilters } from './network.ts';

const ACTIVE: Filter = { Name: 'state', Values: ['active'] };
const UNKNOWN_ID_CODES = new Set(['InvalidCapacityReservationId.NotFound', 'InvalidCapacityReservationId.Malformed']);

/** Selector terms that name reservations EC2 does not have: the condition's reason and message. */
export class UnknownCapacityReservationError extends Error {
  override name = 'UnknownCapacityReservationError';
}

export interface ResolvedReservations {
  readonly reservations: readonly ResolvedReservation[];
  /** AvailableInstanceCount and TotalInstanceCount per id, for the in-memory count. */
  readonly counts: ReadonlyMap<string, { readonly available: number; readonly total: number }>;
}

export function reservationFilterSets(terms: readonly CapacityReservationSelectorTerm[]): Filter[][] {
  return terms.flatMap((t) => {
    if (t.id) return [];
    return [
      [
        ...tagFilters(t.tags ?? {}),
        ...(t.ownerID ? [{ Name: 'owner-id', Values: [t.ownerID] }] : []),
        ...(t.instanceMatchCriteria ? [{ Name: 'instance-match-criteria', Values: [t.instanceMatchCriteria] }] : []),
        ACTIVE,
      ],
    ];
  });
}

function toResolved(r: CapacityReservation, now: number): ResolvedReservation | undefined {
  if (!r.CapacityReservationId || !r.AvailabilityZone || !r.InstanceType) return undefined;
  const reservationType = r.ReservationType === 'capacity-block' ? 'capacity-block' : 'default';
  const end = r.EndDate?.getTime();
  const expiring = reservationType === 'capacity-block' && end !== undefined && now >= end - CAPACITY_BLOCK_EXPIRY_MS;
  return {
    id: r.CapacityReservationId,
    availabilityZone: r.AvailabilityZone,
    instanceType: r.InstanceType,
    ownerID: r.OwnerId ?? '',
    instanceMatchCriteria: r.InstanceMatchCriteria === 'open' ? 'open' : 'targeted',
    reservationType,
    interruptible: r.Interruptible === true,
    state: expiring ? 'expiring' : 'active',
    ...(end !== undefined ? { endTime: rfc3339(end) } : {}),
  };
}

const isUnknownId = (e: unknown): boolean => errorCodes(e).some((c) => UNKNOWN_ID_CODES.has(c));

/** The id terms' reservations; on an unknown-id answer, each id alone, to name the ones that do not exist. */
async function byIds(ec2: Ec2Port, nc: EC2NodeClass): Promise<CapacityReservation[]> {
  const terms = nc.spec.capacityReservationSelectorTerms;
  const ids = [...new Set(terms.flatMap((t) => (t.id ? [t.id] : [])))];
  if (!ids.length) return [];
  try {
    return await ec2.describeCapacityReservations({ ids, filters: [ACTIVE] });
  } catch (e) {
    if (!isUnknownId(e)) throw e;
  }
  const found: CapacityReservation[] = [];
  const unknown: string[] = [];
  for (const id of ids) {
    try {
      found.push(...(await ec2.describeCapacityReservations({ ids: [id], filters: [ACTIVE] })));
    } catch (e) {
      if (!isUnknownId(e)) throw e;
      const at = terms.findIndex((t) => t.id === id);
      unknown.push(
        `spec.capacityReservationSelectorTerms[${at}].id: capacity reservation ${id} does not exist (or is not shared with this account)`,
      );
    }
  }
  if (unknown.length) throw new UnknownCapacityReservationError(`EC2NodeClass ${nc.name}: ${unknown.join('; ')}`);
  return found;
}

export async function resolveCapacityReservations(
  ec2: Ec2Port,
  nc: EC2NodeClass,
  now: number,
): Promise<ResolvedReservations> {
  const found = new Map<string, CapacityReservation>();
  for (const r of await byIds(ec2, nc)) if (r.CapacityReservationId) found.set(r.CapacityReservationId, r);
  for (const filters of reservationFilterSets(nc.spec.capacityReservationSelectorTerms)) {
    for (const r of await ec2.describeCapacityReservations({ filters }))
      if (r.CapacityReservationId) found.set(r.CapacityReservationId, r);
  }
  const reservations: ResolvedReservation[] = [];
  const counts = new Map<string, { available: number; total: number }>();
  for (const r of found.values()) {
    // Only active ones, whatever the fake or a caller's filters let through.
    if (r.State !== undefined && r.State !== 'active') continue;
    const v = toResolved(r, now);
    if (!v) continue;
    reservations.push(v);
    counts.set(v.id, {
      available: r.AvailableInstanceCount ?? 0,
      total: r.TotalInstanceCount ?? r.AvailableInstanceCount ?? 0,
    });
  }
  reservations.sort((a, b) => a.id.localeCompare(b.id));
  return { reservations, counts };
}
