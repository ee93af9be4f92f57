// The unavailable-offerings ("ICE") cache of docs/karpenter/aws-provider.md §3: offerings that failed with a capacity
// error (or received a spot interruption) are unavailable for 3 minutes, keyed
// `capacityType:instanceType:zone`; a capacity type as a whole (spot, when the Spot service-linked role cannot
// be created) and subnets (InsufficientFreeAddressesInSubnet) have their own 3-minute entries. The
// instance-type provider consults it before offerings reach the solver; `seq` changes on every mark so cached
// offerings can be invalidated without a timer.
import type { Clock } from './settings.ts';
import { TtlCache } from './ttl-cache.ts';

const UNAVAILABLE_OFFERINGS_TTL_MS = 3 * 60_000;

export const offeringKey = (capacityType: string, instanceType: string, zone: string): string =>
  `${capacityType}:${instanceType}:${zone}`;

export class UnavailableOfferings {
  private readonly offerings: TtlCache<string, string>;
  private readonly capacityTypes: TtlCache<string, string>;
  private readonly subnets: TtlCache<string, string>;
  private sequence = 0;

  constructor(clock: Clock, ttlMs = UNAVAILABLE_OFFERINGS_TTL_MS) {
    this.offerings = new TtlCache(clock, ttlMs);
    this.capacityTypes = new TtlCache(clock, ttlMs);
    this.subnets = new TtlCache(clock, ttlMs);
  }

  /** Changes whenever something is marked (expiry is checked on read, so it needs no bump). */
  get seq(): number {
    return this.sequence;
  }

  markUnavailable(capacityType: string, instanceType: string, zone: string, reason: string): void {
    this.offerings.set(offeringKey(capacityType, instanceType, zone), reason);
    this.sequence++;
  }

  markCapacityTypeUnavailable(capacityType: string, reason: string): void {
    this.capacityTypes.set(capacityType, reason);
    this.sequence++;
  }

  markSubnetUnavailable(subnetId: string, reason: string): void {
    this.subnets.set(subnetId, reason);
    this.sequence++;
  }

  isUnavailable(capacityType: string, instanceType: string, zone: string): boolean {
    return this.capacityTypes.has(capacityType) || this.offerings.has(offeringKey(capacityType, instanceType, zone));
  }

  /** Why the offering is unavailable, or undefined. */
  reason(capacityType: string, instanceType: string, zone: string): string | undefined {
    return this.capacityTypes.get(capacityType) ?? this.offerings.get(offeringKey(capacityType, instanceType, zone));
  }

  isSubnetUnavailable(subnetId: string): boolean {
    return this.subnets.has(subnetId);
  }

  /** A fingerprint of the live entries, for memo keys: equal fingerprints mean equal answers. */
  fingerprint(): string {
    return `${this.sequence}/${this.offerings.size}/${this.capacityTypes.size}/${this.subnets.size}`;
  }
}
