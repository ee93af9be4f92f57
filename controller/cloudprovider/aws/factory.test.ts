import { DescribeInstanceTypeOfferingsCommand, DescribeInstanceTypesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { GetProductsCommand, PricingClient } from '@aws-sdk/client-pricing';
import { KubeConfig } from '@kubernetes/client-node';
import 'aws-sdk-client-mock-vitest/extend';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { mockedAws } from '../../../test/fakes/aws.ts';
import type { CloudProviderContext } from '../../main.ts';
import { realClock } from '../../operator/clock.ts';
import { KubeClient } from '../../operator/kube.ts';
import { newLogger } from '../../operator/logger.ts';
import { Metrics } from '../../operator/metrics.ts';
import { resolveOptions } from '../../operator/options.ts';
import { Cluster } from '../../state/cluster.ts';
import { awsProviderFactory, awsSettingsOf, kubeConfigCA, kubernetesVersionOf } from './factory.ts';
import { resolveRegion } from './region.ts';

function kubeConfig(cluster: Record<string, unknown> = {}): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: false, ...cluster }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

function context(env: Record<string, string> = {}, kc = kubeConfig()): CloudProviderContext {
  const options = resolveOptions([], {
    CLUSTER_NAME: 'my-cluster',
    CLUSTER_ENDPOINT: 'https://ABC.gr7.ap-northeast-2.eks.amazonaws.com',
    ...env,
  });
  const log = newLogger({ level: 'silent' });
  const cluster = new Cluster({ clock: realClock, log, listed: () => true });
  return {
    options,
    clock: realClock,
    log,
    cluster,
    nodeClass: () => undefined,
    kube: new KubeClient(kc),
    metrics: new Metrics(),
  };
}

describe('awsSettingsOf', () => {
  it("maps the controller's options to the provider's settings", () => {
    const s = awsSettingsOf(
      context({
        CLUSTER_CA_BUNDLE: 'Q0E=',
        VM_MEMORY_OVERHEAD_PERCENT: '0.1',
        RESERVED_ENIS: '2',
        ISOLATED_VPC: 'true',
        INTERRUPTION_QUEUE: 'q',
      }),
      'ap-northeast-2',
    );
    expect(s).toEqual({
      clusterName: 'my-cluster',
      region: 'ap-northeast-2',
      clusterEndpoint: 'https://ABC.gr7.ap-northeast-2.eks.amazonaws.com',
      clusterCABundle: 'Q0E=',
      vmMemoryOverheadPercent: 0.1,
      reservedENIs: 2,
      isolatedVPC: true,
      interruptionQueue: 'q',
      refreshMs: 60_000,
    });
  });

  it("takes the CA bundle from the controller's kubeconfig when none is set, as Karpenter does", () => {
    const ctx = context({}, kubeConfig({ caData: 'S1VCRUNB' }));
    expect(kubeConfigCA(ctx)).toBe('S1VCRUNB');
    expect(awsSettingsOf(ctx, 'us-west-2').clusterCABundle).toBe('S1VCRUNB');
    expect(awsSettingsOf(context(), 'us-west-2').clusterCABundle).toBeUndefined();
  });

  it('refuses to start without the cluster endpoint, naming the flag and the variable', () => {
    const ctx = context({ CLUSTER_ENDPOINT: '' });
    expect(() => awsSettingsOf(ctx, 'us-west-2')).toThrow(
      /--cluster-endpoint \(CLUSTER_ENDPOINT\) is required by the AWS provider/,
    );
  });
});

describe('resolveRegion', () => {
  it('takes AWS_REGION, then AWS_DEFAULT_REGION, then the SDK config, then instance metadata', async () => {
    const none = async () => Promise.reject(new Error('Region is missing'));
    expect(await resolveRegion({ env: { AWS_REGION: 'eu-west-1', AWS_DEFAULT_REGION: 'us-east-1' } })).toBe(
      'eu-west-1',
    );
    expect(await resolveRegion({ env: { AWS_DEFAULT_REGION: 'us-east-1' } })).toBe('us-east-1');
    expect(await resolveRegion({ env: {}, sdkConfig: async () => 'ap-south-1', imds: async () => 'x' })).toBe(
      'ap-south-1',
    );
    expect(await resolveRegion({ env: {}, sdkConfig: none, imds: async () => 'ap-northeast-2' })).toBe(
      'ap-northeast-2',
    );
  });

  it('says what it tried when nothing knows the region', async () => {
    await expect(
      resolveRegion({
        env: {},
        sdkConfig: async () => Promise.reject(new Error('Region is missing')),
        imds: async () => undefined,
      }),
    ).rejects.toThrow(
      'the AWS provider needs a region: AWS_REGION and AWS_DEFAULT_REGION are not set; the AWS SDK config has none (Region is missing); instance metadata could not be reached; set AWS_REGION',
    );
  });
});

describe('kubernetesVersionOf', () => {
  it('reads major.minor from /version (dropping EKS\'s "+"), and asks again only after 5 minutes', async () => {
    let now = 0;
    let calls = 0;
    const kube = {
      serverVersion: async () => (calls++, { major: '1', minor: calls === 1 ? '31+' : '32' }),
    } as unknown as KubeClient;
    const version = kubernetesVersionOf({ kube, clock: { ...realClock, now: () => now } });
    expect(await version()).toBe('1.31');
    now = 4 * 60_000;
    expect(await version()).toBe('1.31');
    now = 5 * 60_000;
    expect(await version()).toBe('1.32');
    expect(calls).toBe(2);
  });

  it('refuses a /version without major and minor', async () => {
    const kube = { serverVersion: async () => ({ gitVersion: 'v1.32.0' }) } as unknown as KubeClient;
    await expect(kubernetesVersionOf({ kube, clock: realClock })()).rejects.toThrow(
      "the API server's /version has no major and minor version",
    );
  });
});

describe('awsProviderFactory', () => {
  it('builds the provider the controller runs: node-class resolution, interruptions from the queue, metrics on the operator registry, stoppable refreshes', async () => {
    const aws = mockedAws('ap-northeast-2');
    const ctx = context({ INTERRUPTION_QUEUE: 'my-cluster' });
    const cp = await awsProviderFactory({
      env: { AWS_REGION: 'ap-northeast-2' },
      clients: (region) => (expect(region).toBe('ap-northeast-2'), aws.clients),
    })(ctx);
    expect(cp.name).toBe('aws');
    expect(cp.nodeClasses).toBeDefined();
    expect(cp.interruptions).toBeDefined();
    expect(await ctx.metrics.text()).toContain('# TYPE karpenter_cloudprovider_batcher_batch_size histogram');
    aws.ec2.on(DescribeInstanceTypesCommand).resolves({ InstanceTypes: [] });
    aws.ec2.on(DescribeInstanceTypeOfferingsCommand).resolves({ InstanceTypeOfferings: [] });
    cp.start?.();
    cp.start?.(); // idempotent: one set of refresh jobs
    await new Promise((r) => setImmediate(r));
    expect(aws.ec2).toHaveReceivedCommandTimes(DescribeInstanceTypesCommand, 1);
    await cp.stop?.();
  });

  it('builds real SDK clients in the resolved region when given none', async () => {
    const ec2 = mockClient(EC2Client);
    const pricing = mockClient(PricingClient); // every client of the class: nothing leaves the process
    pricing.on(GetProductsCommand).resolves({ PriceList: [] });
    try {
      ec2.on(DescribeInstanceTypesCommand).resolves({ InstanceTypes: [] });
      ec2.on(DescribeInstanceTypeOfferingsCommand).resolves({ InstanceTypeOfferings: [] });
      const cp = await awsProviderFactory({
        env: { AWS_REGION: 'eu-central-1' },
        clientOptions: { credentials: { accessKeyId: 'a', secretAccessKey: 'b' } },
      })(context());
      expect(cp.interruptions).toBeUndefined(); // no INTERRUPTION_QUEUE
      cp.start?.();
      await new Promise((r) => setImmediate(r));
      await cp.stop?.();
      expect(ec2).toHaveReceivedCommand(DescribeInstanceTypesCommand);
      const client = ec2.send.thisValues[0] as EC2Client;
      expect(await client.config.region()).toBe('eu-central-1');
    } finally {
      ec2.restore();
      pricing.restore();
    }
  });
});
