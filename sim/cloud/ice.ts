// The unavailable-offerings cache (docs/karpenter/aws-provider.md §3): offerings that failed with a capacity error
// are kept out of scheduling for 3 minutes, keyed capacityType:instanceType:zone as Karpenter keys them.
import type { Clock } from '../../controller/operator/clock.ts';

export const ICE_TTL_MS = 3 * 60_000;

const offeringKey = (capacityType: string, instanceType: string, zone: string): string =>
  `${capacityType}:${instanceType}:${zone}`;

export class UnavailableOfferings {
  private readonly until = new Map<string, number>();
  /** Bumped on every mark, so callers can tell the cache changed. */
  seq = 0;

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs = ICE_TTL_MS,
  ) {}

  mark(capacityType: string, instanceType: string, zone: string): void {
    this.until.set(offeringKey(capacityType, instanceType, zone), this.clock.now() + this.ttlMs);
    this.seq++;
  }

  isUnavailable(capacityType: string, instanceType: string, zone: string): boolean {
    const key = offeringKey(capacityType, instanceType, zone);
    const t = this.until.get(key);
    if (t === undefined) return false;
    if (t > this.clock.now()) return true;
    this.until.delete(key);
    return false;
  }

  /** Entries still in force (for the simulator's status output). */
  entries(): string[] {
    const now = this.clock.now();
    return [...this.until].filter(([, t]) => t > now).map(([k]) => k);
  }
}
