// What a node costs and what it is: the catalog's price for its instance type, zone and capacity type (as
// Karpenter prices a candidate: the matching offering whatever its availability), and, for a NodeClaim the
// plan would launch, the type, zone and capacity type it would most likely get (its cheapest option's
// cheapest compatible available offering). A reserved node (an On-Demand Capacity Reservation) costs its
// type's on-demand rate, which the reservation bills whether an instance runs in it or not.
import type { CapacityType, InstanceType, Labels, Offering, StateNode } from '../domain/types.ts';
import { CAPACITY_TYPE_LABEL, INSTANCE_TYPE_LABEL, ZONE_LABEL } from '../scheduling/labels.ts';
import { fromSelectorRequirements } from '../scheduling/requirements.ts';
import { regionPrices } from '../catalog/catalog.ts';
import type { Built } from './build.ts';
import type { PriceInfo } from './types.ts';
import { launchOffering } from '../disruption/pricing.ts';
import type { NewNodeClaimPlan } from '../model/types.ts';

/** EKS managed node groups write their capacity type here (ON_DEMAND / SPOT). */
const EKS_CAPACITY_LABEL = 'eks.amazonaws.com/capacityType';

interface NodePrice {
  readonly instanceType?: string;
  readonly zone?: string;
  readonly capacityType?: CapacityType;
  readonly price: number;
  readonly known: boolean;
  /** Why the price is unknown or assumed, for the report's warnings. */
  readonly note?: string;
}

export function capacityTypeOf(labels: Labels): CapacityType | undefined {
  const k = labels[CAPACITY_TYPE_LABEL];
  if (k === 'spot' || k === 'on-demand' || k === 'reserved') return k;
  const eks = labels[EKS_CAPACITY_LABEL];
  if (eks === 'SPOT') return 'spot';
  if (eks === 'ON_DEMAND') return 'on-demand';
  return undefined;
}

/** The price of an existing node from the region's catalog (types by name). */
export function nodePrice(node: StateNode, catalog: ReadonlyMap<string, InstanceType>): NodePrice {
  const instanceType = node.labels[INSTANCE_TYPE_LABEL];
  const zone = node.labels[ZONE_LABEL];
  const labelled = capacityTypeOf(node.labels);
  const capacityType = labelled ?? 'on-demand';
  const base = { ...(instanceType ? { instanceType } : {}), ...(zone ? { zone } : {}), capacityType };
  if (!instanceType)
    return {
      ...base,
      price: 0,
      known: false,
      note: `node ${node.name} has no ${INSTANCE_TYPE_LABEL} label; counted at $0/h`,
    };
  const it = catalog.get(instanceType);
  if (!it)
    return {
      ...base,
      price: 0,
      known: false,
      note: `node ${node.name}: instance type ${instanceType} is not in the catalog; counted at $0/h`,
    };
  // A reservation (ODCR) is billed at the type's on-demand rate for its whole term, used or not.
  const billedAs = capacityType === 'reserved' ? 'on-demand' : capacityType;
  const offerings = it.offerings.filter((o) => o.capacityType === billedAs && (zone === undefined || o.zone === zone));
  const priced = offerings.find((o) => o.available) ?? offerings[0];
  if (!priced || !(priced.price > 0))
    return {
      ...base,
      price: 0,
      known: false,
      note: `node ${node.name}: no ${billedAs} price for ${instanceType}; counted at $0/h`,
    };
  return {
    ...base,
    price: priced.price,
    known: true,
    ...(labelled ? {} : { note: `node ${node.name} has no capacity-type label; priced as on-demand` }),
  };
}

interface LaunchGuess {
  readonly instanceType?: InstanceType;
  readonly offering?: Offering;
}

/**
 * The first (cheapest) option of a planned NodeClaim and the offering it would launch with (the engine's
 * launchOffering: equally cheap zones are told apart by `load`, zone -> nodes of the pool).
 */
export function launchOf(
  plan: NewNodeClaimPlan,
  types: readonly InstanceType[],
  load?: ReadonlyMap<string, number>,
): LaunchGuess {
  const first = plan.instanceTypes[0];
  const it = first ? types.find((t) => t.name === first.name) : undefined;
  if (!it) return {};
  const best: Offering | undefined = launchOffering(fromSelectorRequirements(plan.requirements), it, load);
  return { instanceType: it, ...(best ? { offering: best } : {}) };
}

/** Karpenter's only compiled on-demand table, used for types a region's table lacks (as Karpenter does at startup). */
const FALLBACK_REGION = 'us-east-1';

const datesIn = (text: string): string[] => [...new Set(text.match(/\d{4}-\d{2}-\d{2}/g) ?? [])].sort();

/** Where the report's prices come from: the region's tables, their dates, and which types fell back. */
export function priceInfo(
  region: string,
  rows: readonly { instanceType?: string; capacityType?: string; fate: string }[],
  live?: Built['live'],
): PriceInfo {
  const types = [...new Set(rows.map((r) => r.instanceType).filter((t): t is string => t !== undefined))].sort();
  const reservedNodes = rows.filter((r) => r.capacityType === 'reserved' && r.fate !== 'new').length;
  if (live) return livePriceInfo(region, types, live, reservedNodes);
  const p = regionPrices(region);
  const fallbackTypes = types.filter((t) => p.onDemand.get(t)?.source === 'fallback');
  const own = datesIn(p.onDemandSource).join(', ') || 'unknown';
  const fallback = fallbackTypes.length ? datesIn(regionPrices(FALLBACK_REGION).onDemandSource).join(', ') : '';
  return {
    onDemand: {
      source: p.onDemandSource,
      asOf:
        fallback && fallback !== own
          ? `${own} (${FALLBACK_REGION} table of ${fallback} for types without a regional price)`
          : own,
    },
    spot: { source: p.spotSource, asOf: datesIn(p.spotSource)[0] ?? 'unknown', estimate: true },
    live: false,
    fallbackTypes,
    ...(fallbackTypes.length ? { fallbackSource: `${FALLBACK_REGION}'s table of ${fallback}` } : {}),
    reservedNodes,
  };
}

/** Prices read from the AWS APIs at `fetchedAt`; types the Pricing API did not answer keep the built-in price. */
function livePriceInfo(
  region: string,
  types: readonly string[],
  live: NonNullable<Built['live']>,
  reservedNodes: number,
): PriceInfo {
  const fallbackTypes = types.filter((t) => live.fallbackTypes.has(t));
  return {
    onDemand: {
      source: `AWS Price List API (GetProducts: AmazonEC2, ${region}, Linux, shared tenancy; bare metal as Dedicated), read at ${live.fetchedAt}`,
      asOf: live.fetchedAt,
    },
    spot: {
      source: `EC2 DescribeSpotPriceHistory (${region}, Linux/UNIX, the latest price per type and zone), read at ${live.fetchedAt}`,
      asOf: live.fetchedAt,
      estimate: false,
    },
    live: true,
    fallbackTypes,
    ...(fallbackTypes.length ? { fallbackSource: `the built-in table for ${region} (no live price)` } : {}),
    reservedNodes,
  };
}
