// --live-prices through `karpenter-ts whatif`, the AWS SDK v3 clients mocked at their send() (aws-sdk-client-mock):
// a region without built-in prices is a one-line error naming the region and the flag; with the flag the
// report is priced from the Price List and spot-history answers, says "live" and when, and reads each
// region once.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DescribeSpotPriceHistoryCommand, EC2Client, type SpotPrice } from '@aws-sdk/client-ec2';
import { GetProductsCommand, PricingClient } from '@aws-sdk/client-pricing';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-vitest/extend';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryIo } from '../io.ts';
import { main } from '../main.ts';

const dir = mkdtempSync(join(tmpdir(), 'karpenter-ts-live-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const REGION = 'eu-west-1';
// The guide's NodePool allows c, m and r types of generation 6 and later.
const ON_DEMAND: Readonly<Record<string, string>> = {
  'm6i.large': '0.107',
  'm6i.xlarge': '0.214',
  'c6i.large': '0.0912',
  'c6i.xlarge': '0.1824',
  'r6i.large': '0.141',
};
const METAL: Readonly<Record<string, string>> = { 'm6i.metal': '6.8480' };
const SPOT: readonly [string, string, string][] = [
  ['m6i.large', 'eu-west-1a', '0.0391'],
  ['m6i.large', 'eu-west-1b', '0.0415'],
  ['m6i.large', 'eu-west-1c', '0.0402'],
  ['c6i.large', 'eu-west-1a', '0.0377'],
  ['c6i.large', 'eu-west-1b', '0.0344'],
  ['c6i.xlarge', 'eu-west-1c', '0.0719'],
];

/** One PriceList entry as GetProducts returns it: a JSON string. */
const item = (type: string, usd: string): string =>
  JSON.stringify({
    product: { attributes: { instanceType: type } },
    terms: { OnDemand: { t: { priceDimensions: { d: { pricePerUnit: { USD: usd } } } } } },
  });

const pricing = mockClient(PricingClient);
const ec2 = mockClient(EC2Client);
beforeEach(() => {
  pricing.on(GetProductsCommand).callsFake((input: { Filters: { Field: string; Value: string }[] }) => {
    const metal = input.Filters.some((f) => f.Value === 'Compute Instance (bare metal)');
    return { PriceList: Object.entries(metal ? METAL : ON_DEMAND).map(([t, p]) => item(t, p)) };
  });
  ec2.on(DescribeSpotPriceHistoryCommand).resolves({
    SpotPriceHistory: SPOT.map(
      ([InstanceType, AvailabilityZone, SpotPrice]): SpotPrice => ({
        InstanceType: InstanceType as SpotPrice['InstanceType'],
        AvailabilityZone,
        SpotPrice,
        ProductDescription: 'Linux/UNIX',
        Timestamp: new Date('2026-11-30T11:00:00Z'),
      }),
    ),
  });
});
afterEach(() => {
  pricing.reset();
  ec2.reset();
});
// Test files share a worker (isolate: false): a mock left on the clients' send() would answer every later file's
// real SDK call with undefined (sdk-wire.test.ts failed so when it ran after this file).
afterAll(() => {
  pricing.restore();
  ec2.restore();
});

const NODE = (name: string, zone: string) => `apiVersion: v1
kind: Node
metadata: {name: ${name}, labels: {node.kubernetes.io/instance-type: m6i.xlarge, topology.kubernetes.io/zone: ${zone}, karpenter.sh/capacity-type: on-demand, karpenter.sh/nodepool: default, karpenter.sh/initialized: "true", karpenter.sh/registered: "true"}}
status: {allocatable: {cpu: 3920m, memory: 14Gi, pods: "58"}, conditions: [{type: Ready, status: "True"}]}
`;
const CLAIM = (name: string) => `apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: ${name}, labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: m6i.xlarge, karpenter.sh/capacity-type: on-demand}}
spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, requirements: []}
status: {nodeName: ${name}, providerID: aws:///${REGION}a/i-${name}, conditions: [{type: Initialized, status: "True", lastTransitionTime: "2026-11-30T10:00:00Z"}]}
`;
const POD = (name: string, node: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default}
spec: {nodeName: ${node}, containers: [{name: c, resources: {requests: {cpu: 300m, memory: 512Mi}}}]}
status: {phase: Running}
`;
const POOL = readFileSync(fileURLToPath(new URL('../../examples/guide/guide-01.yaml', import.meta.url)), 'utf8')
  .replace(/ap-northeast-2/g, REGION)
  .replace(/\n {6}- nodes: '0'\n.*\n.*duration: 1h/, '');
const CLASS = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec: {amiSelectorTerms: [{alias: al2023@latest}], role: KarpenterNodeRole-c, subnetSelectorTerms: [{tags: {a: b}}], securityGroupSelectorTerms: [{tags: {a: b}}]}
`;
const SNAPSHOT = 'eu.yaml';
writeFileSync(
  join(dir, SNAPSHOT),
  [
    NODE('n1', 'eu-west-1a'),
    CLAIM('n1'),
    NODE('n2', 'eu-west-1b'),
    CLAIM('n2'),
    POD('p1', 'n1'),
    POD('p2', 'n2'),
    POOL,
    CLASS,
  ].join('---\n'),
);

/**
 * A progress line (progress.ts): a run that takes longer than QUIET_MS (a loaded machine) writes these to stderr
 * between the others, in whatever order the work finishes.
 */
const PROGRESS_LINE = /^karpenter-ts whatif: (?:(?:\d+\/\d+ jobs?, )?\d+%(?:, about .+ left)?(?: \(.+\))?|done in .+)$/;

/** stderr without its progress lines; every other line kept, in order. */
const withoutProgress = (err: string): string =>
  err
    .split('\n')
    .filter((line) => !PROGRESS_LINE.test(line))
    .join('\n');

async function whatif(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIo({ cwd: dir });
  const code = await main(['whatif', ...args], io);
  return { code, out: io.stdout, err: withoutProgress(io.stderr) };
}

describe('whatif --live-prices', () => {
  it('refuses a region without built-in prices in one line that names the region and the flag', async () => {
    const r = await whatif(SNAPSHOT, '--json');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /^karpenter-ts whatif: eu\.yaml: region eu-west-1 has no built-in prices \(built in: [a-z0-9-, ]+\); run with --live-prices to read its prices from the AWS APIs\n$/,
    );
    expect(pricing).not.toHaveReceivedCommand(GetProductsCommand);
  });

  it('prices the report from the Price List and spot-history answers and says it is live, and when', async () => {
    const r = await whatif(
      SNAPSHOT,
      '--live-prices',
      '--mode',
      'consolidate',
      '--json',
      '--now',
      '2026-11-30T11:30:00Z',
    );
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain('reading live prices for eu-west-1');
    const j = JSON.parse(r.out);
    expect(j.prices.live).toBe(true);
    expect(j.prices.spot.estimate).toBe(false);
    expect(j.prices.onDemand.asOf).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(j.prices.onDemand.source).toContain('GetProducts');
    expect(j.prices.spot.source).toContain('DescribeSpotPriceHistory');
    // Today's nodes at the live on-demand price; the plan's new nodes at a live spot price of their zone.
    const before = j.nodes.filter((n: { fate: string }) => n.fate !== 'new');
    expect(before.map((n: { pricePerHour: number }) => n.pricePerHour)).toEqual([0.214, 0.214]);
    const added = j.nodes.filter((n: { fate: string }) => n.fate === 'new');
    expect(added.length, JSON.stringify(j.kept)).toBeGreaterThan(0);
    const spot = new Map(SPOT.map(([t, z, p]) => [`${t}/${z}`, Number(p)]));
    for (const n of added)
      expect(n.pricePerHour).toBe(
        n.capacityType === 'spot' ? spot.get(`${n.instanceType}/${n.zone}`) : Number(ON_DEMAND[n.instanceType]),
      );
    expect(j.costPerHourAfter).toBeLessThan(j.costPerHourBefore);
    // Both GetProducts queries (shared tenancy, bare metal) for the region; spot history once.
    expect(pricing).toHaveReceivedCommandTimes(GetProductsCommand, 2);
    expect(pricing).toHaveReceivedCommandWith(GetProductsCommand, {
      ServiceCode: 'AmazonEC2',
      Filters: expect.arrayContaining([{ Field: 'regionCode', Type: 'TERM_MATCH', Value: REGION }]),
    });
    expect(ec2).toHaveReceivedCommandTimes(DescribeSpotPriceHistoryCommand, 1);
  });

  it('says "live" in the terminal report', async () => {
    const r = await whatif(SNAPSHOT, '--live-prices', '--now', '2026-11-30T11:30:00Z');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(
      /prices: on-demand live from the AWS Pricing API \(read \d{4}-.*\); spot live from DescribeSpotPriceHistory \(read /,
    );
  });

  it('reads each region once for a batch, and keeps built-in prices for types the API does not answer', async () => {
    const r = await whatif(
      SNAPSHOT,
      SNAPSHOT,
      '--live-prices',
      '--grid',
      'region=eu-west-1,us-east-1',
      '--json',
      '--jobs',
      '1',
    );
    expect(r.code, r.err).toBe(0);
    expect(pricing).toHaveReceivedCommandTimes(GetProductsCommand, 4);
    expect(r.err.match(/reading live prices for/g)).toHaveLength(2);
  });

  it('refuses regions outside the commercial partition, and reports an AWS failure in one line', async () => {
    const gov = await whatif(SNAPSHOT, '--live-prices', '--region', 'us-gov-west-1');
    expect(gov.code).toBe(2);
    expect(gov.err).toBe(
      'karpenter-ts whatif: --live-prices: us-gov-west-1 is not a commercial AWS region (GovCloud, China and isolated regions are not read)\n',
    );
    pricing.on(GetProductsCommand).rejects(new Error('User is not authorized to perform: pricing:GetProducts'));
    const denied = await whatif(SNAPSHOT, '--live-prices');
    expect(denied.code).toBe(2);
    expect(denied.err).toMatch(
      /\nkarpenter-ts whatif: --live-prices: cannot read the prices of eu-west-1: .*not authorized to perform: pricing:GetProducts\n$/,
    );
  });
});
