// --live-prices: each region's prices read from the AWS APIs by the AWS provider's own pricing code
// (controller/cloudprovider/aws/pricing.ts: Price List GetProducts for on-demand, EC2 DescribeSpotPriceHistory
// for spot, through the SDK v3 clients of sdk-clients.ts), once per region of the run, before the jobs start.
// The jobs get the prices as plain data (JobSpec.livePrices), so pool workers make no AWS calls.
import { awsClients, sdkPorts } from '../../controller/cloudprovider/aws/sdk-clients.ts';
import { PricingProvider } from '../../controller/cloudprovider/aws/pricing.ts';
import type { LivePrices } from '../../engine/index.ts';
import type { Io } from '../io.ts';
import { InputError } from './errors.ts';
import { jobRegion, type JobSpec } from './job.ts';

/**
 * Commercial regions (us-east-1, eu-west-3, ap-southeast-5, il-central-1, ...): the Price List API answers
 * for them in US dollars. GovCloud (us-gov-*), China (cn-*) and the isolated partitions are not among them.
 */
const COMMERCIAL_REGION = /^(us|eu|ap|sa|ca|me|af|il|mx)-[a-z]+-\d+$/;

type PriceReader = (region: string) => Promise<LivePrices>;

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** The region's on-demand and spot prices, now. Any failure is an InputError naming the region. */
function checkCommercial(region: string): void {
  if (!COMMERCIAL_REGION.test(region)) {
    throw new InputError(
      `--live-prices: ${region} is not a commercial AWS region (GovCloud, China and isolated regions are not read)`,
    );
  }
}

async function readLivePrices(region: string, now: () => number = Date.now): Promise<LivePrices> {
  checkCommercial(region);
  const ports = sdkPorts(awsClients({ region }));
  const p = new PricingProvider({
    ec2: ports.ec2,
    pricing: ports.pricing,
    region,
    isolatedVPC: false,
    clock: { now },
    staticPrices: { onDemand: {} },
  });
  const fetchedAt = new Date(now()).toISOString();
  try {
    await p.refresh();
  } catch (e) {
    const parts = e instanceof AggregateError ? e.errors.map(describe) : [describe(e)];
    throw new InputError(`--live-prices: cannot read the prices of ${region}: ${[...new Set(parts)].join('; ')}`);
  }
  const spot = Object.fromEntries(
    [...p.spotPrices()].map(([type, zones]) => [type, Object.fromEntries(zones)] as const),
  );
  return { region, fetchedAt, onDemand: Object.fromEntries(p.onDemandPrices()), spot };
}

/**
 * The jobs with the live prices of their regions. A job whose input cannot be read keeps none: it fails
 * on its own with the input's error when it runs. Prices are read once per region.
 */
export async function withLivePrices(
  jobs: readonly JobSpec[],
  io: Io,
  read: PriceReader = (r) => readLivePrices(r),
): Promise<JobSpec[]> {
  const regions = new Map<number, string>();
  for (const j of jobs) {
    const r = await jobRegion(j).catch(() => undefined);
    if (r !== undefined) regions.set(j.index, r);
  }
  const tables = new Map<string, LivePrices>();
  const wanted = [...new Set(regions.values())].sort();
  wanted.forEach(checkCommercial);
  for (const region of wanted) {
    io.err(`reading live prices for ${region} (AWS Price List API, EC2 DescribeSpotPriceHistory)\n`);
    tables.set(region, await read(region));
  }
  return jobs.map((j) => {
    const t = tables.get(regions.get(j.index) ?? '');
    return t ? { ...j, livePrices: t } : j;
  });
}
