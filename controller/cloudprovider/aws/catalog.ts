// What the provider takes from the engine's committed EC2 catalog (engine/catalog): the static on-demand
// prices it starts from, and the facts DescribeInstanceTypes does not return (VPC-limits branch interfaces
// for vpc.amazonaws.com/pod-eni and IPv4 per interface for Windows' vpc.amazonaws.com/PrivateIPv4Address,
// Karpenter's baseline bandwidth table for instance-network-bandwidth).
import { ec2InstanceInfos, regionPrices, regionsInCatalog } from '../../../engine/index.ts';
import type { ExtraFacts, ExtraFactsLookup } from './instancetype/facts.ts';
import type { StaticPrices } from './pricing.ts';

/** Karpenter ships its static on-demand table for us-east-1 and uses it in any region it has no table for. */
const FALLBACK_PRICE_REGION = 'us-east-1';

/**
 * The static on-demand prices for a region: the catalog's table for it (types it lacks already priced from
 * us-east-1, as Karpenter does until the Pricing API answers), or the whole us-east-1 table for a region the
 * catalog does not have.
 */
export function catalogStaticPrices(region: string): StaticPrices & { readonly region: string } {
  const from = regionsInCatalog().includes(region) ? region : FALLBACK_PRICE_REGION;
  const onDemand: Record<string, number> = {};
  for (const [type, { price }] of regionPrices(from).onDemand) onDemand[type] = price;
  return { onDemand, region: from };
}

let extra: ReadonlyMap<string, ExtraFacts> | undefined;

/** pod-eni, VPC-limits IPv4 per interface and network bandwidth by instance type, from the catalog (built once: the data is immutable). */
export const catalogExtraFacts: ExtraFactsLookup = (instanceType) => {
  extra ??= new Map(
    ec2InstanceInfos().map((i) => [
      i.name,
      {
        ...(i.podENIs !== undefined ? { podENIs: i.podENIs } : {}),
        ...(i.vpcIPv4PerInterface !== undefined ? { vpcIPv4PerInterface: i.vpcIPv4PerInterface } : {}),
        ...(i.networkBandwidthMbps !== undefined ? { networkBandwidthMbps: i.networkBandwidthMbps } : {}),
      },
    ]),
  );
  return extra.get(instanceType);
};
