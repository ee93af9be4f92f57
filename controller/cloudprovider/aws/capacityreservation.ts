// Capacity reservations (ODCRs and Capacity Blocks) on the AWS side (docs/karpenter/aws-provider.md §3 "Reserved
// capacity", §4): what a resolved reservation is (the EC2NodeClass status entry), and the in-memory count of
// instances left in each one. EC2's AvailableInstanceCount lags launches, so Karpenter keeps its own count:
// set from DescribeCapacityReservations whenever a node class resolves its reservations, one less per launch
// into the reservation, one more when an instance launched into it is terminated, and 0 when a launch was
// refused for lack of capacity (until the next refresh says otherwise).
import type { EC2NodeClass } from '../../../engine/index.ts';

type ReservationType = 'default' | 'capacity-block';

/** One entry of EC2NodeClass status.capacityReservations (Karpenter's field names). */
export interface ResolvedReservation {
  readonly id: string;
  readonly availabilityZone: string;
  readonly instanceType: string;
  readonly ownerID: string;
  readonly instanceMatchCriteria: 'open' | 'targeted';
  readonly reservationType: ReservationType;
  readonly interruptible: boolean;
  /** `expiring`: a capacity block within 40 minutes of its end (no new launches). */
  readonly state: 'active' | 'expiring';
  /** RFC 3339, when the reservation has an end. */
  readonly endTime?: string;
}

/** A capacity block counts as expiring this long before its end. */
export const CAPACITY_BLOCK_EXPIRY_MS = 40 * 60_000;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * status.capacityReservations as this provider reads them back. Entries another writer left without the
 * fields a launch needs (id, zone, instance type) are skipped.
 */
export function statusReservations(nc: EC2NodeClass): ResolvedReservation[] {
  return nc.status.capacityReservations.flatMap((r): ResolvedReservation[] => {
    const availabilityZone = str(r['availabilityZone']);
    const instanceType = str(r['instanceType']);
    if (!availabilityZone || !instanceType) return [];
    const endTime = str(r['endTime']);
    return [
      {
        id: r.id,
        availabilityZone,
        instanceType,
        ownerID: str(r['ownerID']) ?? '',
        instanceMatchCriteria: r['instanceMatchCriteria'] === 'open' ? 'open' : 'targeted',
        reservationType: r['reservationType'] === 'capacity-block' ? 'capacity-block' : 'default',
        interruptible: r['interruptible'] === true,
        state: r['state'] === 'expiring' ? 'expiring' : 'active',
        ...(endTime ? { endTime } : {}),
      },
    ];
  });
}

/** Instances left per reservation id, as this controller last knew it. */
export class ReservationCapacity {
  private readonly left = new Map<string, number>();
  private readonly total = new Map<string, number>();
  /** Instances whose termination already gave their instance back (delete is called repeatedly). */
  private readonly returned = new Set<string>();
  private sequence = 0;

  /** Changes on every update, for memo keys. */
  get version(): number {
    return this.sequence;
  }

  /** From DescribeCapacityReservations: the reservation's AvailableInstanceCount (and TotalInstanceCount). */
  refresh(id: string, available: number, total?: number): void {
    if (this.left.get(id) !== available) this.sequence++;
    this.left.set(id, Math.max(0, available));
    if (total !== undefined) this.total.set(id, total);
  }

  /** Instances left; undefined when no describe has reported the reservation yet. */
  available(id: string): number | undefined {
    return this.left.get(id);
  }

  /** A launch into the reservation succeeded. */
  launched(id: string): void {
    const n = this.left.get(id);
    if (n === undefined) return;
    this.left.set(id, Math.max(0, n - 1));
    this.sequence++;
  }

  /** An instance launched into the reservation is being terminated: its capacity comes back (once). */
  terminated(id: string, instanceId: string): void {
    if (this.returned.has(instanceId)) return;
    this.returned.add(instanceId);
    const n = this.left.get(id);
    if (n === undefined) return;
    const cap = this.total.get(id);
    this.left.set(id, cap === undefined ? n + 1 : Math.min(cap, n + 1));
    this.sequence++;
  }

  /** EC2 refused a launch for lack of capacity (ReservationCapacityExceeded and the like). */
  markUnavailable(id: string): void {
    if (this.left.get(id) === 0) return;
    this.left.set(id, 0);
    this.sequence++;
  }
}
