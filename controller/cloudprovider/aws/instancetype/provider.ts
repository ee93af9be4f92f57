// Instance types with offerings for an EC2NodeClass (docs/karpenter/aws-provider.md §3). Discovery (DescribeInstanceTypes
// with Karpenter's filters, DescribeInstanceTypeOfferings for the zones) is refreshed by the caller (12 h in
// Karpenter); each list() builds the types for the node class's subnets' zones, prices them, and marks
// offerings unavailable when the ICE cache holds them or every subnet of their zone is out of addresses.
// Offerings without a known price are left out: the solver cannot rank them.
//
// Reserved capacity (feature gate ReservedCapacity): each reservation in status.capacityReservations for the
// type, in a zone the node class has a subnet in, adds one `reserved` offering priced at the on-demand price
// / 10,000,000 with the reservation's id and its in-memory count of instances left; it is available while
// that count is above 0, the zone is usable and the reservation is not expiring. The type's requirements then
// allow `reserved` and those reservations' ids, types and interruptible values.
import type { InstanceTypeInfo } from '@aws-sdk/client-ec2';
import {
  ec2ContextRequirements,
  ec2TypeRequirements,
  hasEniLimitedPods,
  reqs,
  type AMIFamily,
  type EC2NodeClass,
  type Ec2InstanceInfo,
  type InstanceType,
  type Offering,
  type Requirement,
} from '../../../../engine/index.ts';
import {
  CAPACITY_RESERVATION_ID_LABEL,
  CAPACITY_RESERVATION_INTERRUPTIBLE_LABEL,
  CAPACITY_RESERVATION_TYPE_LABEL,
} from '../../../../engine/index.ts';
import { statusReservations, type ReservationCapacity, type ResolvedReservation } from '../capacityreservation.ts';
import type { UnavailableOfferings } from '../ice-cache.ts';
import type { PricingProvider } from '../pricing.ts';
import type { Ec2Port } from '../sdk.ts';
import type { AwsSettings } from '../settings.ts';
import { capacityTypesOf, factsFromInstanceTypeInfo, type ExtraFactsLookup } from './facts.ts';
import { nodeClassSizing, sizeInstance } from './sizing.ts';

export const INSTANCE_TYPE_FILTERS = [
  { Name: 'supported-virtualization-type', Values: ['hvm'] },
  { Name: 'processor-info.supported-architecture', Values: ['x86_64', 'arm64'] },
];

export const INSTANCE_TYPES_REFRESH_MS = 12 * 3600_000;

interface InstanceTypeProviderDeps {
  readonly ec2: Ec2Port;
  readonly pricing: PricingProvider;
  readonly ice: UnavailableOfferings;
  readonly settings: Pick<AwsSettings, 'region' | 'vmMemoryOverheadPercent' | 'reservedENIs'>;
  readonly extraFacts?: ExtraFactsLookup;
  /** Feature gate ReservedCapacity (default on); off, no reserved offerings are made. */
  readonly reservedCapacity?: boolean;
  /** Instances left per reservation (required for reserved offerings). */
  readonly reservations?: ReservationCapacity;
  /** Called for records that cannot be used (missing facts), once per refresh. */
  readonly onSkip?: (why: string) => void;
}

interface Discovered {
  readonly facts: Ec2InstanceInfo;
  readonly capacityTypes: ReadonlyArray<'on-demand' | 'spot'>;
  /** The labels that depend on the type alone, computed once per discovery (requirements are immutable). */
  readonly typeRequirements: readonly Requirement[];
}

export class InstanceTypeProvider {
  private types = new Map<string, Discovered>();
  private zonesByType = new Map<string, ReadonlySet<string>>();
  private dataVersion = 0;
  /** Per node class: the inputs' key and the types built from them. */
  private readonly memo = new Map<string, { key: string; value: InstanceType[] }>();

  constructor(private readonly deps: InstanceTypeProviderDeps) {}

  /** DescribeInstanceTypes + DescribeInstanceTypeOfferings; the previous data stays if either fails. */
  async refresh(): Promise<void> {
    const [infos, offerings] = await Promise.all([
      this.deps.ec2.describeInstanceTypes(INSTANCE_TYPE_FILTERS),
      this.deps.ec2.describeInstanceTypeOfferings(),
    ]);
    this.load(
      infos,
      offerings.map((o) => ({ instanceType: o.InstanceType ?? '', zone: o.Location ?? '' })),
    );
  }

  /** Replaces the discovered data (also how tests and the simulator seed it). */
  load(infos: readonly InstanceTypeInfo[], offerings: ReadonlyArray<{ instanceType: string; zone: string }>): void {
    const types = new Map<string, Discovered>();
    for (const info of infos) {
      const f = factsFromInstanceTypeInfo(
        info,
        info.InstanceType ? this.deps.extraFacts?.(info.InstanceType) : undefined,
      );
      if ('skip' in f) {
        this.deps.onSkip?.(f.skip);
        continue;
      }
      if (!hasEniLimitedPods(f)) {
        this.deps.onSkip?.(
          `${f.name}: no NetworkInfo ENI limits (MaximumNetworkInterfaces, Ipv4AddressesPerInterface) to size pods with`,
        );
        continue;
      }
      types.set(f.name, { facts: f, capacityTypes: capacityTypesOf(info), typeRequirements: ec2TypeRequirements(f) });
    }
    const zones = new Map<string, Set<string>>();
    for (const o of offerings) {
      if (!o.instanceType || !o.zone) continue;
      let s = zones.get(o.instanceType);
      if (!s) zones.set(o.instanceType, (s = new Set()));
      s.add(o.zone);
    }
    this.types = types;
    this.zonesByType = zones;
    this.dataVersion++;
    this.memo.clear();
  }

  facts(instanceType: string): Ec2InstanceInfo | undefined {
    return this.types.get(instanceType)?.facts;
  }

  get size(): number {
    return this.types.size;
  }

  /** The instance types for a node class; memoized until discovery, prices, the ICE cache or the class change. */
  list(nc: EC2NodeClass): InstanceType[] {
    const subnets = nc.status.subnets;
    const key = JSON.stringify([
      nc.name,
      nc.generation,
      subnets,
      nc.status.amis.length,
      this.dataVersion,
      this.deps.pricing.version,
      this.deps.ice.fingerprint(),
      subnets.map((s) => this.deps.ice.isSubnetUnavailable(s.id)),
      nc.status.capacityReservations,
      this.deps.reservations?.version,
    ]);
    const hit = this.memo.get(nc.name);
    if (hit?.key === key) return hit.value;
    const value = this.build(nc);
    this.memo.set(nc.name, { key, value });
    return value;
  }

  private build(nc: EC2NodeClass): InstanceType[] {
    const family = nc.amiFamily;
    // A subnet without a zone in status (not written by this provider) cannot be launched into.
    const subnets = nc.status.subnets.flatMap((s) => (s.zone ? [{ ...s, zone: s.zone }] : []));
    const zoneIds = new Map(subnets.map((s) => [s.zone, s.zoneID ?? '']));
    const usableZones = new Set(subnets.filter((s) => !this.deps.ice.isSubnetUnavailable(s.id)).map((s) => s.zone));
    const sizing = nodeClassSizing(nc, this.deps.settings);
    const reservationsByType = new Map<string, ResolvedReservation[]>();
    if ((this.deps.reservedCapacity ?? true) && this.deps.reservations) {
      for (const r of statusReservations(nc)) {
        if (!zoneIds.has(r.availabilityZone)) continue;
        const list = reservationsByType.get(r.instanceType) ?? [];
        list.push(r);
        reservationsByType.set(r.instanceType, list);
      }
    }
    const out: InstanceType[] = [];
    for (const { facts, capacityTypes, typeRequirements } of this.types.values()) {
      if (!compatibleWithFamily(facts, family)) continue;
      const zones = [...(this.zonesByType.get(facts.name) ?? [])].filter((z) => zoneIds.has(z)).sort();
      const offerings: Offering[] = [];
      for (const zone of zones) {
        for (const ct of capacityTypes) {
          const price =
            ct === 'spot' ? this.deps.pricing.spotPrice(facts.name, zone) : this.deps.pricing.onDemandPrice(facts.name);
          if (price === undefined) continue;
          const zoneId = zoneIds.get(zone);
          offerings.push({
            zone,
            ...(zoneId ? { zoneId } : {}),
            capacityType: ct,
            price,
            available: usableZones.has(zone) && !this.deps.ice.isUnavailable(ct, facts.name, zone),
          });
        }
      }
      const reserved = this.reservedOfferings(
        facts.name,
        reservationsByType.get(facts.name) ?? [],
        zoneIds,
        usableZones,
      );
      offerings.push(...reserved.offerings);
      if (!offerings.length) continue;
      const context = ec2ContextRequirements(facts.arch, {
        region: this.deps.settings.region,
        amiFamily: family,
        zones,
        zoneIds: zones.map((z) => zoneIds.get(z) ?? '').filter(Boolean),
        capacityTypes: reserved.offerings.length ? [...capacityTypes, 'reserved'] : capacityTypes,
      });
      const { capacity, overhead, allocatable } = sizeInstance(facts, sizing);
      const base = reserved.requirements.length
        ? typeRequirements.filter((r) => !RESERVATION_LABELS.has(r.key))
        : typeRequirements;
      out.push({
        name: facts.name,
        requirements: reqs.requirements(...base, ...context, ...reserved.requirements),
        capacity,
        overhead,
        allocatable,
        offerings,
      });
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  private reservedOfferings(
    type: string,
    reservations: readonly ResolvedReservation[],
    zoneIds: ReadonlyMap<string, string>,
    usableZones: ReadonlySet<string>,
  ): { offerings: Offering[]; requirements: Requirement[] } {
    const onDemand = this.deps.pricing.onDemandPrice(type);
    if (!reservations.length || onDemand === undefined) return { offerings: [], requirements: [] };
    const offerings = reservations.map((r): Offering => {
      const left = this.deps.reservations?.available(r.id) ?? 0;
      const zoneId = zoneIds.get(r.availabilityZone);
      return {
        zone: r.availabilityZone,
        ...(zoneId ? { zoneId } : {}),
        capacityType: 'reserved',
        price: onDemand / RESERVED_PRICE_DIVISOR,
        available: left > 0 && usableZones.has(r.availabilityZone) && r.state !== 'expiring',
        reservationId: r.id,
        reservationCapacity: left,
      };
    });
    const values = (f: (r: ResolvedReservation) => string) => [...new Set(reservations.map(f))].sort();
    return {
      offerings,
      requirements: [
        reqs.req(
          CAPACITY_RESERVATION_ID_LABEL,
          false,
          values((r) => r.id),
        ),
        reqs.req(
          CAPACITY_RESERVATION_TYPE_LABEL,
          false,
          values((r) => r.reservationType),
        ),
        reqs.req(
          CAPACITY_RESERVATION_INTERRUPTIBLE_LABEL,
          false,
          values((r) => String(r.interruptible)),
        ),
      ],
    };
  }
}

const RESERVATION_LABELS = new Set([
  CAPACITY_RESERVATION_ID_LABEL,
  CAPACITY_RESERVATION_TYPE_LABEL,
  CAPACITY_RESERVATION_INTERRUPTIBLE_LABEL,
]);

/** On-demand price / 10,000,000: reserved capacity, already paid for, always sorts cheapest. */
const RESERVED_PRICE_DIVISOR = 10_000_000;

/** Karpenter's family compatibility: Windows needs amd64; a1 does not run AL2023. */
function compatibleWithFamily(f: Ec2InstanceInfo, family: AMIFamily): boolean {
  if (family.startsWith('Windows') && f.arch !== 'x86_64') return false;
  if (family === 'AL2023' && f.name.startsWith('a1.')) return false;
  return true;
}
