import { readFileSync } from 'node:fs';
import { DescribeSpotPriceHistoryCommand } from '@aws-sdk/client-ec2';
import { GetProductsCommand } from '@aws-sdk/client-pricing';
import 'aws-sdk-client-mock-vitest/extend';
import { describe, expect, it } from 'vitest';
import { FakeClock, mockedAws } from '../../../test/fakes/aws.ts';
import { onDemandQueries, parsePriceList, PricingProvider } from './pricing.ts';

const sample = JSON.parse(readFileSync(new URL('./testdata/pricing-getproducts.json', import.meta.url), 'utf8')) as {
  item: unknown;
};
const item = (type: string, usd: string, cny?: string) =>
  JSON.stringify({
    product: { attributes: { instanceType: type } },
    terms: {
      OnDemand: { t: { priceDimensions: { d: { pricePerUnit: { USD: usd, ...(cny ? { CNY: cny } : {}) } } } } },
    },
  });

function provider(region = 'us-west-2', isolatedVPC = false) {
  const aws = mockedAws(region);
  const clock = new FakeClock();
  const p = new PricingProvider({
    ec2: aws.ports.ec2,
    pricing: aws.ports.pricing,
    region,
    isolatedVPC,
    clock,
    staticPrices: { onDemand: { 'm5.large': 0.096, 'c6g.large': 0.068 } },
  });
  return { aws, clock, p };
}

describe('parsePriceList', () => {
  it('reads the real GetProducts item (m5.large, $0.096)', () => {
    expect(parsePriceList([JSON.stringify(sample.item)], 'USD')).toEqual(new Map([['m5.large', 0.096]]));
  });

  it('skips zero, unparsable and malformed entries, and reads CNY in China', () => {
    const got = parsePriceList(
      [item('a.large', '0.0000000000'), item('b.large', 'n/a'), 'not json', item('c.large', '1.5', '9.9')],
      'CNY',
    );
    expect(got).toEqual(new Map([['c.large', 9.9]]));
  });
});

describe('PricingProvider', () => {
  it('starts from the static table, and prices spot at on-demand in any zone until spot is refreshed', () => {
    const { p } = provider();
    expect(p.onDemandPrice('m5.large')).toBe(0.096);
    expect(p.spotPrice('m5.large', 'us-west-2a')).toBe(0.096);
    expect(p.onDemandPrice('x1.32xlarge')).toBeUndefined();
  });

  it('runs the two GetProducts queries and merges their prices over the static ones', async () => {
    const { aws, p } = provider();
    aws.pricing.on(GetProductsCommand).callsFake((input: { Filters: { Field: string; Value: string }[] }) => {
      const metal = input.Filters.some((f) => f.Value === 'Compute Instance (bare metal)');
      return { PriceList: metal ? [item('m5.metal', '4.608')] : [item('m5.large', '0.1')] };
    });
    await p.updateOnDemand();
    expect(p.onDemandPrice('m5.large')).toBe(0.1);
    expect(p.onDemandPrice('m5.metal')).toBe(4.608);
    expect(p.onDemandPrice('c6g.large')).toBe(0.068);
    expect(aws.pricing).toHaveReceivedCommandTimes(GetProductsCommand, 2);
    const [shared, metal] = onDemandQueries('us-west-2');
    expect(shared).toContainEqual({ field: 'tenancy', value: 'Shared' });
    expect(shared).toContainEqual({ field: 'productFamily', value: 'Compute Instance' });
    expect(metal).toContainEqual({ field: 'tenancy', value: 'Dedicated' });
    for (const f of [
      'regionCode',
      'serviceCode',
      'preInstalledSw',
      'operatingSystem',
      'capacitystatus',
      'marketoption',
    ])
      expect(shared!.map((x) => x.field)).toContain(f);
  });

  it('fails an on-demand refresh when either query returns nothing, keeping the old prices', async () => {
    const { aws, p } = provider();
    aws.pricing.on(GetProductsCommand).resolves({ PriceList: [] });
    await expect(p.updateOnDemand()).rejects.toThrow(/no prices/);
    expect(p.onDemandPrice('m5.large')).toBe(0.096);
  });

  it('keeps the static table when the Pricing API fails', async () => {
    const { aws, p } = provider();
    aws.pricing.on(GetProductsCommand).rejects(new Error('AccessDenied'));
    await expect(p.refresh()).rejects.toThrow(/AccessDenied/);
    expect(p.onDemandPrice('m5.large')).toBe(0.096);
  });

  it('never calls the Pricing API in an isolated VPC or in GovCloud', async () => {
    for (const [region, isolated] of [
      ['us-west-2', true],
      ['us-gov-west-1', false],
    ] as const) {
      const { aws, p } = provider(region, isolated);
      await p.updateOnDemand();
      expect(aws.pricing).not.toHaveReceivedCommand(GetProductsCommand);
    }
  });

  it('after a spot refresh prices only the (type, zone) pairs seen, the last record winning', async () => {
    const { aws, clock, p } = provider();
    aws.ec2
      .on(DescribeSpotPriceHistoryCommand)
      .resolvesOnce({
        SpotPriceHistory: [
          { InstanceType: 'm5.large', AvailabilityZone: 'us-west-2a', SpotPrice: '0.0423', Timestamp: new Date() },
        ],
        NextToken: 'n',
      })
      .resolvesOnce({
        SpotPriceHistory: [
          { InstanceType: 'm5.large', AvailabilityZone: 'us-west-2a', SpotPrice: '0.0389', Timestamp: new Date() },
          { InstanceType: 'm5.large', AvailabilityZone: 'us-west-2b', SpotPrice: '0.0437', Timestamp: new Date() },
        ],
      });
    await p.updateSpot();
    expect(p.spotPrice('m5.large', 'us-west-2a')).toBe(0.0389);
    expect(p.spotPrice('m5.large', 'us-west-2b')).toBe(0.0437);
    expect(p.spotPrice('m5.large', 'us-west-2c')).toBeUndefined();
    expect(p.spotPrice('c6g.large', 'us-west-2a')).toBeUndefined();
    expect(aws.ec2).toHaveReceivedCommandWith(DescribeSpotPriceHistoryCommand, {
      ProductDescriptions: ['Linux/UNIX', 'Linux/UNIX (Amazon VPC)'],
      StartTime: new Date(clock.now()),
    });
  });

  it('treats an empty spot history as a failure', async () => {
    const { aws, p } = provider();
    aws.ec2.on(DescribeSpotPriceHistoryCommand).resolves({ SpotPriceHistory: [] });
    await expect(p.updateSpot()).rejects.toThrow(/no prices/);
    expect(p.spotPrice('m5.large', 'us-west-2a')).toBe(0.096);
  });
});
