// The AWS region the provider works in, found the way Karpenter finds it (docs/karpenter/aws-provider.md §10: "from
// the AWS SDK config"): AWS_REGION or AWS_DEFAULT_REGION (IRSA and Pod Identity set them), then the SDK's
// shared config (AWS_PROFILE, ~/.aws/config), then the instance metadata service (IMDSv2) of the node the
// controller runs on. Every step that fails is named in the error.
import { SSMClient } from '@aws-sdk/client-ssm';

export interface RegionSources {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The SDK's shared-config region (rejects when there is none). */
  readonly sdkConfig?: () => Promise<string>;
  /** The region from instance metadata, or undefined when IMDS cannot be reached. */
  readonly imds?: () => Promise<string | undefined>;
}

export async function resolveRegion(src: RegionSources): Promise<string> {
  const fromEnv = src.env['AWS_REGION'] || src.env['AWS_DEFAULT_REGION'];
  if (fromEnv) return fromEnv;
  const tried = ['AWS_REGION and AWS_DEFAULT_REGION are not set'];
  try {
    const r = await (src.sdkConfig ?? sdkConfigRegion)();
    if (r) return r;
  } catch (e) {
    tried.push(`the AWS SDK config has none (${(e as Error).message})`);
  }
  const fromImds = await (src.imds ?? imdsRegion)().catch((e: unknown) => {
    tried.push(`instance metadata failed (${(e as Error).message})`);
    return undefined;
  });
  if (fromImds) return fromImds;
  if (tried.length < 3) tried.push('instance metadata could not be reached');
  throw new Error(`the AWS provider needs a region: ${tried.join('; ')}; set AWS_REGION (the chart's controller.env)`);
}

/** The region an SDK client built without one would use (shared config files, AWS_PROFILE). */
async function sdkConfigRegion(): Promise<string> {
  const client = new SSMClient({});
  try {
    return await client.config.region();
  } finally {
    client.destroy();
  }
}

/** IMDSv2: a session token, then placement/region; 1 s each (off EC2 nothing answers). */
async function imdsRegion(base = 'http://169.254.169.254'): Promise<string | undefined> {
  try {
    const token = await fetch(`${base}/latest/api/token`, {
      method: 'PUT',
      headers: { 'x-aws-ec2-metadata-token-ttl-seconds': '60' },
      signal: AbortSignal.timeout(1000),
    });
    if (!token.ok) return undefined;
    const res = await fetch(`${base}/latest/meta-data/placement/region`, {
      headers: { 'x-aws-ec2-metadata-token': await token.text() },
      signal: AbortSignal.timeout(1000),
    });
    return res.ok ? (await res.text()).trim() || undefined : undefined;
  } catch {
    return undefined;
  }
}
