import { describe, expect, it } from 'vitest';
import { regionPrices } from '../../../engine/index.ts';
import { catalogExtraFacts, catalogStaticPrices } from './catalog.ts';

describe('catalogStaticPrices', () => {
  it("takes the region's table, whose gaps the catalog already priced from us-east-1", () => {
    const p = catalogStaticPrices('ap-northeast-2');
    expect(p.region).toBe('ap-northeast-2');
    expect(p.onDemand['m5.large']).toBe(0.118); // regional, differs from us-east-1's 0.096
    const fallback = [...regionPrices('ap-northeast-2').onDemand].find(([, v]) => v.source === 'fallback')!;
    expect(p.onDemand[fallback[0]]).toBe(regionPrices('us-east-1').onDemand.get(fallback[0])!.price);
    expect(Object.keys(p.onDemand)).toHaveLength(regionPrices('ap-northeast-2').onDemand.size);
  });

  it('uses the whole us-east-1 table in a region the catalog does not have, as Karpenter does', () => {
    const p = catalogStaticPrices('eu-west-3');
    expect(p.region).toBe('us-east-1');
    expect(p.onDemand).toEqual(catalogStaticPrices('us-east-1').onDemand);
    expect(p.onDemand['m5.large']).toBe(0.096);
  });
});

describe('catalogExtraFacts', () => {
  it('gives the VPC-limits pod ENIs and IPv4 per interface, and the baseline bandwidth DescribeInstanceTypes lacks', () => {
    expect(catalogExtraFacts('m5.large')).toEqual({ podENIs: 9, vpcIPv4PerInterface: 10, networkBandwidthMbps: 750 });
    // Not in the VPC limits table: no pod ENIs and no IPv4 per interface from it.
    expect(catalogExtraFacts('g2.2xlarge')).not.toHaveProperty('vpcIPv4PerInterface');
    expect(catalogExtraFacts('t3.large')).toMatchObject({ podENIs: 0, networkBandwidthMbps: 512 });
    expect(catalogExtraFacts('no-such.type')).toBeUndefined();
  });
});
