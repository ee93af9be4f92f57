// On-demand and spot prices (docs/karpenter/aws-provider.md §7). Starts from a static on-demand table (by default the
// engine catalog's for the region, us-east-1 fallback applied: catalogStaticPrices in catalog.ts); spot starts as
// "the on-demand price, in any zone" until the first spot refresh succeeds, after which only real (type,
// zone) prices count. Refreshes merge over what is known, so a failed call keeps the last good prices.
import type { PricingFilter, PricingPort, Ec2Port } from './sdk.ts';
import type { Clock } from './settings.ts';

export interface StaticPrices {
  /** USD (CNY in cn- regions) per hour, per instance type. */
  readonly onDemand: Readonly<Record<string, number>>;
}

interface PricingDeps {
  readonly ec2: Ec2Port;
  readonly pricing: PricingPort;
  readonly region: string;
  readonly isolatedVPC: boolean;
  readonly clock: Clock;
  readonly staticPrices: StaticPrices;
}

export const PRICING_REFRESH_MS = 12 * 3600_000;
const SPOT_PRODUCT_DESCRIPTIONS = ['Linux/UNIX', 'Linux/UNIX (Amazon VPC)'];

const BASE_FILTERS: readonly PricingFilter[] = [
  { field: 'serviceCode', value: 'AmazonEC2' },
  { field: 'preInstalledSw', value: 'NA' },
  { field: 'operatingSystem', value: 'Linux' },
  { field: 'capacitystatus', value: 'Used' },
  { field: 'marketoption', value: 'OnDemand' },
];

/** The two GetProducts queries: shared-tenancy instances, and bare metal (priced under Dedicated). */
export function onDemandQueries(region: string): PricingFilter[][] {
  const base = [{ field: 'regionCode', value: region }, ...BASE_FILTERS];
  return [
    [...base, { field: 'tenancy', value: 'Shared' }, { field: 'productFamily', value: 'Compute Instance' }],
    [
      ...base,
      { field: 'tenancy', value: 'Dedicated' },
      { field: 'productFamily', value: 'Compute Instance (bare metal)' },
    ],
  ];
}

interface PriceItem {
  product?: { attributes?: { instanceType?: string } };
  terms?: {
    OnDemand?: Record<string, { priceDimensions?: Record<string, { pricePerUnit?: Record<string, string> }> }>;
  };
}

/** PriceList JSON strings -> type -> price. Zero, unparsable and malformed entries are skipped. */
export function parsePriceList(priceList: readonly string[], currency: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const raw of priceList) {
    let item: PriceItem;
    try {
      item = JSON.parse(raw) as PriceItem;
    } catch {
      continue;
    }
    const type = item.product?.attributes?.instanceType;
    if (!type) continue;
    for (const term of Object.values(item.terms?.OnDemand ?? {})) {
      for (const dim of Object.values(term.priceDimensions ?? {})) {
        const price = Number.parseFloat(dim.pricePerUnit?.[currency] ?? '');
        if (Number.isFinite(price) && price > 0) out.set(type, price);
      }
    }
  }
  return out;
}

export class PricingProvider {
  private onDemand = new Map<string, number>();
  private spot = new Map<string, Map<string, number>>();
  private spotUpdated = false;
  private updates = 0;

  constructor(private readonly deps: PricingDeps) {
    for (const [k, v] of Object.entries(deps.staticPrices.onDemand)) this.onDemand.set(k, v);
  }

  /** Bumps whenever prices change, for memo keys. */
  get version(): number {
    return this.updates;
  }

  onDemandPrice(instanceType: string): number | undefined {
    return this.onDemand.get(instanceType);
  }

  spotPrice(instanceType: string, zone: string): number | undefined {
    if (!this.spotUpdated) return this.deps.staticPrices.onDemand[instanceType];
    return this.spot.get(instanceType)?.get(zone);
  }

  /** Every on-demand price known now (static table merged with refreshes), by type. */
  onDemandPrices(): ReadonlyMap<string, number> {
    return new Map(this.onDemand);
  }

  /** Every spot price seen by a refresh, by type and zone (empty before the first spot refresh). */
  spotPrices(): ReadonlyMap<string, ReadonlyMap<string, number>> {
    return new Map([...this.spot].map(([type, zones]) => [type, new Map(zones)] as const));
  }

  /** Skipped (kept static) in us-gov regions and isolated VPCs, where the Pricing API is unreachable. */
  get onDemandUpdatesEnabled(): boolean {
    return !this.deps.isolatedVPC && !this.deps.region.startsWith('us-gov');
  }

  async updateOnDemand(): Promise<void> {
    if (!this.onDemandUpdatesEnabled) return;
    const currency = this.deps.region.startsWith('cn-') ? 'CNY' : 'USD';
    const results = await Promise.all(onDemandQueries(this.deps.region).map((f) => this.deps.pricing.getProducts(f)));
    const parsed = results.map((list) => parsePriceList(list, currency));
    if (parsed.some((m) => m.size === 0))
      throw new Error(`updating on-demand prices for ${this.deps.region}: the Pricing API returned no prices`);
    for (const m of parsed) for (const [k, v] of m) this.onDemand.set(k, v);
    this.updates++;
  }

  async updateSpot(): Promise<void> {
    const history = await this.deps.ec2.describeSpotPriceHistory({
      productDescriptions: SPOT_PRODUCT_DESCRIPTIONS,
      startTime: new Date(this.deps.clock.now()),
    });
    let n = 0;
    const fresh = new Map<string, Map<string, number>>();
    for (const r of history) {
      const price = Number.parseFloat(r.SpotPrice ?? '');
      if (!r.InstanceType || !r.AvailabilityZone || !r.Timestamp || !Number.isFinite(price)) continue;
      let zones = fresh.get(r.InstanceType);
      if (!zones) fresh.set(r.InstanceType, (zones = new Map()));
      zones.set(r.AvailabilityZone, price); // later pages overwrite earlier ones
      n++;
    }
    if (n === 0)
      throw new Error(`updating spot prices for ${this.deps.region}: DescribeSpotPriceHistory returned no prices`);
    for (const [type, zones] of fresh) {
      const cur = this.spot.get(type) ?? new Map<string, number>();
      for (const [z, p] of zones) cur.set(z, p);
      this.spot.set(type, cur);
    }
    this.spotUpdated = true;
    this.updates++;
  }

  /** Both updates in parallel; rejects with every failure's message after both have finished. */
  async refresh(): Promise<void> {
    const results = await Promise.allSettled([this.updateOnDemand(), this.updateSpot()]);
    const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (errors.length)
      throw new AggregateError(errors, `refreshing prices: ${errors.map((e) => (e as Error).message).join('; ')}`);
  }
}
