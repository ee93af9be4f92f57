import { DescribeInstanceTypeOfferingsCommand, DescribeInstanceTypesCommand } from '@aws-sdk/client-ec2';
import 'aws-sdk-client-mock-vitest/extend';
import { describe, expect, it } from 'vitest';
import { reqs } from '../../../../engine/index.ts';
import {
  FakeClock,
  fixtureInstanceTypes,
  fixtureOfferings,
  fixturePrices,
  mockedAws,
  readyNodeClass,
} from '../../../../test/fakes/aws.ts';
import { UnavailableOfferings } from '../ice-cache.ts';
import type { EC2NodeClass } from '../../../../engine/index.ts';
import { PricingProvider } from '../pricing.ts';
import { INSTANCE_TYPE_FILTERS, InstanceTypeProvider } from './provider.ts';

const MiB = 2 ** 20;

async function setup(
  extraFacts?: (
    n: string,
  ) => { podENIs?: number; networkBandwidthMbps?: number; vpcIPv4PerInterface?: number } | undefined,
) {
  const aws = mockedAws();
  aws.ec2.on(DescribeInstanceTypesCommand).resolves({ InstanceTypes: fixtureInstanceTypes() });
  aws.ec2.on(DescribeInstanceTypeOfferingsCommand).resolves({ InstanceTypeOfferings: fixtureOfferings() });
  const clock = new FakeClock();
  const ice = new UnavailableOfferings(clock);
  const pricing = new PricingProvider({
    ec2: aws.ports.ec2,
    pricing: aws.ports.pricing,
    region: 'us-west-2',
    isolatedVPC: false,
    clock,
    staticPrices: { onDemand: fixturePrices() },
  });
  const provider = new InstanceTypeProvider({
    ec2: aws.ports.ec2,
    pricing,
    ice,
    settings: { region: 'us-west-2', vmMemoryOverheadPercent: 0.075, reservedENIs: 0 },
    ...(extraFacts ? { extraFacts } : {}),
  });
  await provider.refresh();
  return { aws, clock, ice, pricing, provider };
}

const withZones = (nc: EC2NodeClass, zones: string[]): EC2NodeClass => ({
  ...nc,
  status: { ...nc.status, subnets: nc.status.subnets.filter((s) => s.zone !== undefined && zones.includes(s.zone)) },
});

describe('InstanceTypeProvider', () => {
  it('discovers with Karpenter filters and builds every fixture type that has an offering', async () => {
    const { aws, provider } = await setup();
    expect(aws.ec2).toHaveReceivedCommandWith(DescribeInstanceTypesCommand, { Filters: INSTANCE_TYPE_FILTERS });
    const names = provider.list(readyNodeClass()).map((t) => t.name);
    expect(names).toContain('m5.large');
    // The fixture's offerings list no t4g zone: those types have nothing to offer and are left out.
    expect(names).toHaveLength(14);
    expect(names.filter((n) => n.startsWith('t4g.'))).toEqual([]);
  });

  it('computes allocatable with the formulas (m5.large: 1930m, 6903Mi, 29 pods)', async () => {
    const { provider } = await setup();
    const m5 = provider.list(readyNodeClass()).find((t) => t.name === 'm5.large')!;
    expect(m5.allocatable).toMatchObject({ cpu: 1930, memory: 6903 * MiB, pods: 29 });
  });

  it('offers only zones that have a node-class subnet, per capacity type, priced', async () => {
    const { provider, pricing } = await setup();
    const m5 = provider
      .list(withZones(readyNodeClass(), ['test-zone-1a', 'test-zone-1b']))
      .find((t) => t.name === 'm5.large')!;
    expect(m5.offerings.map((o) => `${o.capacityType}/${o.zone}/${o.zoneId}`).sort()).toEqual([
      'on-demand/test-zone-1a/tz1-az1',
      'on-demand/test-zone-1b/tz1-az2',
      'spot/test-zone-1a/tz1-az1',
      'spot/test-zone-1b/tz1-az2',
    ]);
    expect(m5.offerings.every((o) => o.available && o.price === pricing.onDemandPrice('m5.large'))).toBe(true);
    expect([...reqs.get(m5.requirements, 'topology.kubernetes.io/zone').values].sort()).toEqual([
      'test-zone-1a',
      'test-zone-1b',
    ]);
    expect([...reqs.get(m5.requirements, 'topology.k8s.aws/zone-id').values].sort()).toEqual(['tz1-az1', 'tz1-az2']);
  });

  it('marks ICE offerings unavailable until the 3-minute entry expires', async () => {
    const { provider, ice, clock } = await setup();
    const nc = readyNodeClass();
    const offering = () =>
      provider
        .list(nc)
        .find((t) => t.name === 'm5.large')!
        .offerings.find((o) => o.capacityType === 'spot' && o.zone === 'test-zone-1a')!;
    expect(offering().available).toBe(true);
    ice.markUnavailable('spot', 'm5.large', 'test-zone-1a', 'InsufficientInstanceCapacity');
    expect(offering().available).toBe(false);
    const other = provider
      .list(nc)
      .find((t) => t.name === 'm5.large')!
      .offerings.filter((o) => o.available);
    expect(other).toHaveLength(5);
    clock.step(3 * 60_000);
    expect(offering().available).toBe(true);
  });

  it('makes a zone unavailable when all of its subnets are out of addresses', async () => {
    const { provider, ice } = await setup();
    ice.markSubnetUnavailable('subnet-b', 'InsufficientFreeAddressesInSubnet');
    const m5 = provider.list(readyNodeClass()).find((t) => t.name === 'm5.large')!;
    expect(m5.offerings.filter((o) => !o.available).map((o) => o.zone)).toEqual(['test-zone-1b', 'test-zone-1b']);
  });

  it('leaves out offerings without a price once spot prices are known', async () => {
    const { provider, pricing, aws } = await setup();
    const { DescribeSpotPriceHistoryCommand } = await import('@aws-sdk/client-ec2');
    aws.ec2.on(DescribeSpotPriceHistoryCommand).resolves({
      SpotPriceHistory: [
        { InstanceType: 'm5.large', AvailabilityZone: 'test-zone-1a', SpotPrice: '0.03', Timestamp: new Date() },
      ],
    });
    await pricing.updateSpot();
    const m5 = provider.list(readyNodeClass()).find((t) => t.name === 'm5.large')!;
    expect(m5.offerings.filter((o) => o.capacityType === 'spot').map((o) => [o.zone, o.price])).toEqual([
      ['test-zone-1a', 0.03],
    ]);
  });

  it('uses amd64 types only for Windows and labels them windows', async () => {
    const { provider } = await setup();
    const types = provider.list(readyNodeClass({ amiSelectorTerms: [{ alias: 'windows2022@latest' }] }));
    expect(types.some((t) => t.name === 'c6g.large')).toBe(false);
    const m5 = types.find((t) => t.name === 'm5.large')!;
    expect([...reqs.get(m5.requirements, 'kubernetes.io/os').values]).toEqual(['windows']);
    expect([...reqs.get(m5.requirements, 'node.kubernetes.io/windows-build').values]).toEqual(['10.0.20348']);
    expect(m5.capacity.pods).toBe(110);
  });

  it('gives Windows types vpc.amazonaws.com/PrivateIPv4Address from the VPC limits table, 0 for a type it lacks', async () => {
    // DescribeInstanceTypes says 10 IPv4 per interface for m5.large; the table is what counts.
    const { provider } = await setup((n) => (n === 'm5.large' ? { vpcIPv4PerInterface: 12 } : undefined));
    const types = provider.list(readyNodeClass({ amiSelectorTerms: [{ alias: 'windows2022@latest' }] }));
    expect(types.find((t) => t.name === 'm5.large')!.capacity['vpc.amazonaws.com/PrivateIPv4Address']).toBe(11);
    const other = types.find((t) => t.name !== 'm5.large')!;
    expect(other.capacity['vpc.amazonaws.com/PrivateIPv4Address'] ?? 0).toBe(0);
    const linux = (await setup((n) => (n === 'm5.large' ? { vpcIPv4PerInterface: 12 } : undefined))).provider;
    expect(
      linux.list(readyNodeClass()).find((t) => t.name === 'm5.large')!.capacity['vpc.amazonaws.com/PrivateIPv4Address'],
    ).toBeUndefined();
  });
});

// Labels and allocatable of every fixture type against Karpenter's published values: golden.test.ts.
describe('instance-type facts', () => {
  it('takes ENIs from the default network card (p5.48xlarge: 100 pods)', async () => {
    const { provider } = await setup();
    expect(provider.list(readyNodeClass()).find((t) => t.name === 'p5.48xlarge')!.capacity.pods).toBe(100);
  });

  it('adds pod ENIs from the catalog lookup', async () => {
    const { provider } = await setup((n) => (n === 'm5.large' ? { podENIs: 9 } : undefined));
    expect(
      provider.list(readyNodeClass()).find((t) => t.name === 'm5.large')!.capacity['vpc.amazonaws.com/pod-eni'],
    ).toBe(9);
  });
});
