// The project's own EC2 catalog: Karpenter-shaped InstanceTypes for a region, built from the generated data
// (facts, on-demand prices, Spot Advisor estimates) with the allocatable formulas and label rules of this
// folder. Used by the simulator and benchmarks, and as the AWS provider's offline view (docs/karpenter/aws-provider.md
// §1-§3, §7). Every type is assumed offered in every zone of the region: the data has no per-region
// DescribeInstanceTypeOfferings, so availability comes from prices only (no price, no available offering).
import type { CapacityType, InstanceType, Offering, Requirement } from '../domain/types.ts';
import { canComputePods, instanceResourcesWith, resolveCapacitySettings } from './allocatable.ts';
import { catalogData, type CatalogEntry, type RegionPrices } from './data.ts';
import { ec2ContextRequirements, ec2TypeRequirements } from './labels.ts';
import type { CapacitySettings, Ec2InstanceInfo } from './types.ts';

interface Ec2CatalogOptions {
  readonly region: string;
  /** Zones to offer in; default the region's standard zones (regionZones). */
  readonly zones?: readonly string[];
  /** Node-class settings (AMI family, kubelet, block devices, ...); defaults as Karpenter's. */
  readonly settings?: CapacitySettings;
  /**
   * Prices from outside the generated data (what-if's --live-prices) instead of the region's tables. The
   * region then need not be in the catalog, but `zones` must be given.
   */
  readonly prices?: PriceTable;
}

/** Prices from an outside source: on-demand per type, spot per type and zone. Absent = no offering. */
export interface PriceTable {
  /** Tells tables apart in the memo (e.g. the time they were fetched). */
  readonly id: string;
  readonly onDemand: ReadonlyMap<string, number>;
  readonly spot: ReadonlyMap<string, ReadonlyMap<string, number>>;
}

/** What offerings need to know of prices, from the region's tables or from a PriceTable. */
interface PriceLookup {
  onDemand(type: string): number | undefined;
  spot(type: string, zone: string): number | undefined;
  /** The source lists spot prices for the type (in some zone). */
  listsSpot(type: string): boolean;
}

function tableLookup(t: PriceTable): PriceLookup {
  return {
    onDemand: (type) => t.onDemand.get(type),
    spot: (type, zone) => t.spot.get(type)?.get(zone),
    listsSpot: (type) => t.spot.has(type),
  };
}

function regionLookup(p: RegionPrices): PriceLookup {
  return {
    onDemand: (type) => p.onDemand.get(type)?.price,
    spot: (type) => p.spot.get(type),
    listsSpot: (type) => p.spot.has(type),
  };
}

/** Regions the catalog has prices and zones for, sorted. */
export function regionsInCatalog(): string[] {
  return [...catalogData().regions.keys()].sort();
}

function regionOf(region: string): RegionPrices {
  const r = catalogData().regions.get(region);
  if (!r)
    throw new Error(`EC2 catalog: region "${region}" is not in the catalog (known: ${regionsInCatalog().join(', ')})`);
  return r;
}

/** The standard zones of a catalog region (ap-northeast-2a-d, us-east-1a-f, us-west-2a-d). */
export function regionZones(region: string): string[] {
  return [...regionOf(region).zones];
}

/** The facts of every catalog type, by name: what a simulated DescribeInstanceTypes would return. */
export function ec2InstanceInfos(): readonly Ec2InstanceInfo[] {
  return catalogData().entries.map((e) => e.info);
}

/** Prices and their provenance for one region (on-demand per type, spot estimates per type). */
export function regionPrices(region: string): RegionPrices {
  return regionOf(region);
}

function checkZones(region: string, zones: readonly string[]): void {
  if (zones.length === 0) throw new Error(`EC2 catalog: zones for ${region} must not be empty`);
  const seen = new Set<string>();
  for (const z of zones) {
    // A zone name is its region plus a letter suffix (us-east-1a); a zone of another region is a mistake.
    if (typeof z !== 'string' || !z.startsWith(region) || z.length === region.length)
      throw new Error(`EC2 catalog: zone "${String(z)}" is not a zone of region ${region}`);
    if (seen.has(z)) throw new Error(`EC2 catalog: zone "${z}" is listed twice`);
    seen.add(z);
  }
}

/**
 * on-demand unless the data says it is unsupported; spot when some source says it is supported, or when
 * support is unknown but the region's Spot Advisor feed lists the type.
 */
function capacityTypesOf(e: CatalogEntry, prices: PriceLookup): CapacityType[] {
  const out: CapacityType[] = [];
  if (e.onDemandSupported !== false) out.push('on-demand');
  if (e.spotSupported === true || (e.spotSupported === null && prices.listsSpot(e.info.name))) out.push('spot');
  return out;
}

function offeringsOf(
  e: CatalogEntry,
  zones: readonly string[],
  types: readonly CapacityType[],
  prices: PriceLookup,
): Offering[] {
  const od = prices.onDemand(e.info.name);
  const out: Offering[] = [];
  for (const zone of zones) {
    for (const capacityType of types) {
      const price = capacityType === 'spot' ? prices.spot(e.info.name, zone) : od;
      out.push({ zone, capacityType, price: price ?? 0, available: price !== undefined });
    }
  }
  return out;
}

// Label requirements that depend only on the type, computed once per type: they are immutable.
const typeRequirements = new WeakMap<CatalogEntry, readonly Requirement[]>();

function typeRequirementsOf(e: CatalogEntry): readonly Requirement[] {
  let rs = typeRequirements.get(e);
  if (!rs) typeRequirements.set(e, (rs = ec2TypeRequirements(e.info)));
  return rs;
}

function build(options: Ec2CatalogOptions, zones: readonly string[]): InstanceType[] {
  const prices = options.prices ? tableLookup(options.prices) : regionLookup(regionOf(options.region));
  const s = resolveCapacitySettings(options.settings);
  // Context requirements differ only by arch and capacity types: build each variant once per call.
  const context = new Map<string, readonly Requirement[]>();
  const out: InstanceType[] = [];
  for (const e of catalogData().entries) {
    if (!canComputePods(e.info, s)) continue;
    const capacityTypes = capacityTypesOf(e, prices);
    const key = `${e.info.arch}/${capacityTypes.join(',')}`;
    let ctx = context.get(key);
    if (!ctx)
      context.set(
        key,
        (ctx = ec2ContextRequirements(e.info.arch, {
          region: options.region,
          zones,
          capacityTypes,
          amiFamily: s.amiFamily,
        })),
      );
    const r = instanceResourcesWith(e.info, s);
    out.push({
      name: e.info.name,
      requirements: new Map([...typeRequirementsOf(e), ...ctx].map((q) => [q.key, q])),
      capacity: r.capacity,
      overhead: r.overhead,
      allocatable: r.allocatable,
      offerings: offeringsOf(e, zones, capacityTypes, prices),
    });
  }
  return out;
}

// Results per options, so repeated calls (simulator ticks, benchmark iterations) cost a copy of the array.
// The InstanceTypes are immutable data, so sharing them between callers is safe.
const MEMO_SIZE = 16;
const memo = new Map<string, readonly InstanceType[]>();

/**
 * The catalog's instance types for a region, sorted by name (cloud-provider order). One offering per zone ×
 * supported capacity type; an offering without a known price has price 0 and available false. With
 * reservedENIs > 0 (and no kubelet.maxPods, on a family with ENI-limited pod density), the few types whose
 * ENI breakdown no source gives (hpc*, trn2.48xlarge) are left out: their pod count cannot be computed.
 */
export function ec2InstanceTypes(options: Ec2CatalogOptions): InstanceType[] {
  if (options.prices && !options.zones && !catalogData().regions.has(options.region)) {
    throw new Error(`EC2 catalog: region "${options.region}" is not in the catalog; give its zones with the prices`);
  }
  const zones = options.zones ?? regionOf(options.region).zones;
  checkZones(options.region, zones);
  const key = JSON.stringify([options.region, zones, options.settings ?? {}, options.prices?.id ?? '']);
  let types = memo.get(key);
  if (!types) {
    types = build(options, zones);
    if (memo.size >= MEMO_SIZE) memo.delete(memo.keys().next().value!);
    memo.set(key, types);
  }
  return [...types];
}
