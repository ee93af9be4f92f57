// createCloudProvider: the AWS provider as `karpenter-ts controller` builds it (main.ts's CloudProviderFactory).
// From the controller's resolved options (CLUSTER_NAME, CLUSTER_ENDPOINT, CLUSTER_CA_BUNDLE, CLUSTER_CIDR,
// INTERRUPTION_QUEUE, ISOLATED_VPC, VM_MEMORY_OVERHEAD_PERCENT, RESERVED_ENIS, MIN_VALUES_POLICY) and the
// SDK's region it builds the SDK clients and the provider, and connects it to the operator:
//
// * node classes come from the informer cache, parsed with the provider's parser (Ready's generation kept);
// * the Kubernetes version (AMI aliases) is the API server's /version, cached 5 minutes (Karpenter's
//   providers.version); the CA bundle defaults to the controller's own kubeconfig CA, as Karpenter's does;
// * its metrics (batcher histograms, unparseable interruption messages) go to the operator's registry;
// * a spot interruption marks its offering unavailable, with type and zone from the NodeClaim;
// * the node-class controller resolves through awsNodeClasses (status, hash, instance-profile clean-up);
// * start()/stop() run the periodic refreshes (instance types and prices every 12 h, launch templates 1 min).
import { readFileSync } from 'node:fs';
import { INSTANCE_TYPE_LABEL, ZONE_LABEL, type EC2NodeClass } from '../../../engine/index.ts';
import type { CloudProviderContext, CloudProviderFactory } from '../../main.ts';
import type { KubeObject } from '../../operator/kube.ts';
import type { CloudProvider } from '../types.ts';
import { timeoutReporter } from '../../operator/timeouts.ts';
import { awsNodeClasses, type AwsNodeClasses } from './nodeclasses.ts';
import { parseNodeClass } from './nodeclass/object.ts';
import { realTimers, type Timers } from './periodic.ts';
import { awsCloudProvider, type AwsCloudProvider, type AwsCloudProviderDeps } from './provider.ts';
import { resolveRegion, type RegionSources } from './region.ts';
import { describeCluster, type DiscoveredCluster } from './eks.ts';
import { instrumentSdkClients } from './sdkmetrics.ts';
import { awsClients, sdkPorts, type AwsClients, type ClientOptions } from './sdk-clients.ts';
import { INSTANCE_PROFILE_ANNOTATION, type AwsSettings } from './settings.ts';

const KUBERNETES_VERSION_TTL_MS = 5 * 60_000;

interface AwsFactoryOptions {
  /** Where AWS_REGION / AWS_DEFAULT_REGION are read (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Region lookups after the environment (tests replace them). */
  readonly region?: Omit<RegionSources, 'env'>;
  /** Prebuilt SDK clients (tests: clients answered by aws-sdk-client-mock or a loopback endpoint). */
  readonly clients?: (region: string) => AwsClients;
  /** Extra SDK client options (endpoint, retries). */
  readonly clientOptions?: Omit<ClientOptions, 'region'>;
  /** Timers of the batching windows and periodic refreshes (default the wall clock's, unref'd). */
  readonly timers?: Timers;
}

/** The seam's CloudProvider, with the AWS provider behind it for tools and tests. */
export interface AwsProviderHandle extends CloudProvider {
  readonly aws: AwsCloudProvider;
  readonly nodeClasses: AwsNodeClasses;
  readonly settings: AwsSettings;
}

/** Base64 of the CA the controller trusts for the API server (kubeconfig caData, or its caFile). */
export function kubeConfigCA(ctx: Pick<CloudProviderContext, 'kube'>): string | undefined {
  const cluster = ctx.kube.kubeConfig.getCurrentCluster();
  if (cluster?.caData) return cluster.caData;
  if (cluster?.caFile) return readFileSync(cluster.caFile).toString('base64');
  return undefined;
}

/** The provider's settings; `discovered` fills what the options leave out (eks:DescribeCluster). */
export function awsSettingsOf(
  ctx: CloudProviderContext,
  region: string,
  discovered: DiscoveredCluster = {},
): AwsSettings {
  const o = ctx.options;
  const endpoint = o.clusterEndpoint || discovered.endpoint;
  if (!endpoint) {
    throw new Error(
      '--cluster-endpoint (CLUSTER_ENDPOINT) is required by the AWS provider when eks:DescribeCluster cannot tell it: nodes need the API server URL in their user data',
    );
  }
  const ca = o.clusterCABundle || kubeConfigCA(ctx);
  const cidr = o.clusterCIDR || discovered.serviceCIDR;
  return {
    clusterName: o.clusterName,
    region,
    clusterEndpoint: endpoint,
    ...(ca ? { clusterCABundle: ca } : {}),
    ...(cidr ? { clusterCIDR: cidr } : {}),
    vmMemoryOverheadPercent: o.vmMemoryOverheadPercent,
    reservedENIs: o.reservedENIs,
    isolatedVPC: o.isolatedVPC,
    ...(o.interruptionQueue ? { interruptionQueue: o.interruptionQueue } : {}),
    refreshMs: Math.min(o.amiRefreshIntervalMs, o.subnetRefreshIntervalMs),
  };
}

/** "1.32" from the API server's /version (EKS minors carry a "+"), refreshed every 5 minutes. */
export function kubernetesVersionOf(ctx: Pick<CloudProviderContext, 'kube' | 'clock'>): () => Promise<string> {
  let cached: { at: number; value: string } | undefined;
  return async () => {
    const now = ctx.clock.now();
    if (cached && now - cached.at < KUBERNETES_VERSION_TTL_MS) return cached.value;
    const v = await ctx.kube.serverVersion();
    const major = v.major?.replace(/\D+$/, '');
    const minor = v.minor?.replace(/\D+$/, '');
    if (!major || !minor)
      throw new Error(`the API server's /version has no major and minor version (${JSON.stringify(v)})`);
    cached = { at: now, value: `${major}.${minor}` };
    return cached.value;
  };
}

/** Node classes from the informer cache through the provider's parser, once per object version. */
function nodeClassLookup(ctx: CloudProviderContext): (name: string) => EC2NodeClass | undefined {
  const parsed = new WeakMap<KubeObject, EC2NodeClass>();
  return (name) => {
    const entry = ctx.cluster.nodeClass(name);
    if (!entry?.nodeClass) return undefined;
    let nc = parsed.get(entry.obj);
    if (!nc) {
      const r = parseNodeClass(entry.obj);
      nc = r.ok ? r.value : entry.nodeClass;
      parsed.set(entry.obj, nc);
    }
    return nc;
  };
}

export function awsProviderFactory(f: AwsFactoryOptions = {}): CloudProviderFactory {
  return async (ctx) => {
    const region = await resolveRegion({ env: f.env ?? process.env, ...(f.region ?? {}) });
    const clients = sdkClients(ctx, f, region);
    const settings = awsSettingsOf(ctx, region, await discoverCluster(ctx, clients));
    const ports = sdkPorts(clients);
    const aws = awsCloudProvider(providerDeps(ctx, f, settings, ports));
    const nodeClasses = awsNodeClasses({
      provider: aws,
      iam: ports.iam,
      clusterName: settings.clusterName,
      region,
      isolatedVPC: settings.isolatedVPC,
      profileInUse: (profile) =>
        ctx.cluster.nodeClaims().some((c) => c.info.annotations[INSTANCE_PROFILE_ANNOTATION] === profile),
    });
    logReady(ctx, settings);
    return providerHandle(aws, nodeClasses, settings);
  };
}

/**
 * The SDK clients (the options' or the factory's), every call bounded by --aws-request-timeout per attempt; a call
 * whose attempts all timed out is logged and counted, and every call counted in the operator's metrics.
 */
function sdkClients(ctx: CloudProviderContext, f: AwsFactoryOptions, region: string): AwsClients {
  const bounds = {
    requestTimeoutMs: ctx.options.awsRequestTimeoutMs,
    onTimeout: timeoutReporter(ctx.log, ctx.metrics),
  };
  const clients = f.clients ? f.clients(region) : awsClients({ region, ...bounds, ...(f.clientOptions ?? {}) });
  instrumentSdkClients(clients, ctx.metrics);
  return clients;
}

/** As Karpenter: an endpoint left out is looked up; so is the service CIDR, on EKS, when not set. */
async function discoverCluster(ctx: CloudProviderContext, clients: AwsClients): Promise<DiscoveredCluster> {
  const o = ctx.options;
  const lookup = !o.clusterEndpoint || (!o.clusterCIDR && o.eksControlPlane);
  return lookup && clients.eks ? describeCluster(clients.eks, o.clusterName) : {};
}

/** The AWS provider connected to the operator: node classes, metrics, options, logs, and the NodeClaims' instances. */
function providerDeps(
  ctx: CloudProviderContext,
  f: AwsFactoryOptions,
  settings: AwsSettings,
  ports: AwsCloudProviderDeps['ports'],
): AwsCloudProviderDeps {
  const log = ctx.log;
  return {
    settings,
    ports,
    nodeClass: nodeClassLookup(ctx),
    kubernetesVersion: kubernetesVersionOf(ctx),
    clock: ctx.clock,
    timers: f.timers ?? realTimers,
    registry: ctx.metrics.registry,
    interruptionMetrics: { received: ctx.metrics.interruptionReceived, deleted: ctx.metrics.interruptionDeleted },
    providerMetrics: {
      batchSize: ctx.metrics.batchSize,
      batchTime: ctx.metrics.batchTime,
      launchFailures: ctx.metrics.instanceLaunchFailures,
      terminationFailures: ctx.metrics.instanceTerminationFailures,
    },
    minValuesPolicy: ctx.options.minValuesPolicy,
    reservedCapacity: ctx.options.featureGates.reservedCapacity,
    log: (message, fields, level = 'warn') => log[level](fields, message),
    instanceAt: (id) => {
      const claim = ctx.cluster.nodeClaims().find((c) => c.info.providerId?.endsWith(`/${id}`));
      const type = claim?.info.labels[INSTANCE_TYPE_LABEL];
      const zone = claim?.info.labels[ZONE_LABEL];
      return type && zone ? { instanceType: type, zone } : undefined;
    },
  };
}

function logReady(ctx: CloudProviderContext, settings: AwsSettings): void {
  if (!settings.clusterCIDR)
    ctx.log.warn(
      {},
      'no --cluster-cidr (CLUSTER_CIDR): AL2023 nodes cannot be launched without the service CIDR nodeadm needs',
    );
  ctx.log.info(
    {
      region: settings.region,
      cluster: settings.clusterName,
      interruptionQueue: settings.interruptionQueue ?? '',
      isolatedVPC: settings.isolatedVPC,
    },
    'AWS cloud provider ready',
  );
}

/** The seam's CloudProvider over the AWS provider; start() runs its periodic jobs once, stop() ends them. */
function providerHandle(aws: AwsCloudProvider, nodeClasses: AwsNodeClasses, settings: AwsSettings): AwsProviderHandle {
  let stopJobs: (() => void) | undefined;
  return {
    name: aws.name,
    create: (req) => aws.create(req),
    delete: (id) => aws.delete(id),
    get: (id) => aws.get(id),
    list: () => aws.list(),
    getInstanceTypes: (pool) => aws.getInstanceTypes(pool),
    isDrifted: (q) => aws.isDrifted(q),
    repairPolicies: () => aws.repairPolicies(),
    ...(aws.instanceTagging ? { instanceTagging: aws.instanceTagging } : {}),
    ...(aws.interruptions ? { interruptions: aws.interruptions } : {}),
    nodeClasses,
    start: () => {
      stopJobs ??= aws.start();
    },
    stop: () => {
      stopJobs?.();
      stopJobs = undefined;
    },
    aws,
    settings,
  };
}

/** What `karpenter-ts controller` loads (cli/commands/controller.ts). */
export const createCloudProvider: CloudProviderFactory = awsProviderFactory();
