// awsCloudProvider(): the AWS implementation of the cloud-provider seam, composed from the parts in this
// folder. The controller builds the SDK ports once (sdk-clients.ts), passes a node-class lookup backed by its
// informer cache, calls refresh() at startup and start() for the periodic work, and runs
// reconcileNodeClass() from its EC2NodeClass controller, writing back the status and annotations it returns.
import { Histogram, Registry, type Counter } from 'prom-client';
import type { EC2NodeClass, InstanceType, NodePool } from '../../../engine/index.ts';
import { NodeClassNotReadyError, type CloudProvider, type DriftQuery, type LaunchRequest } from '../types.ts';
import { ReservationCapacity } from './capacityreservation.ts';
import { catalogExtraFacts, catalogStaticPrices } from './catalog.ts';
import { isDrifted } from './drift.ts';
import { AWS_REPAIR_POLICIES } from './repair.ts';
import { awsInstanceTagging } from './tagging.ts';
import { UnavailableOfferings } from './ice-cache.ts';
import { Instances } from './instance.ts';
import type { ExtraFactsLookup } from './instancetype/facts.ts';
import { INSTANCE_TYPES_REFRESH_MS, InstanceTypeProvider } from './instancetype/provider.ts';
import { markingSpotInterruptions, type InstancePlacement } from './interruption/ice.ts';
import { interruptionMetrics, type InterruptionMetrics } from './interruption/metrics.ts';
import { SqsInterruptionSource } from './interruption/sqs.ts';
import { launch } from './launch/create.ts';
import { fleetBatcher } from './launch/fleet.ts';
import { LaunchTemplates } from './launch/launchtemplate.ts';
import { deleteInstanceProfile, profilePath } from './nodeclass/instanceprofile.ts';
import { reconcileNodeClass, type NodeClassReconcileResult } from './nodeclass/reconcile.ts';
import { runPeriodically, type Timers } from './periodic.ts';
import { PRICING_REFRESH_MS, PricingProvider, type StaticPrices } from './pricing.ts';
import type { AwsPorts } from './sdk.ts';
import { systemClock, validateSettings, type AwsSettings, type Clock } from './settings.ts';
import { TtlCache } from './ttl-cache.ts';

export interface AwsCloudProviderDeps {
  readonly settings: AwsSettings;
  readonly ports: AwsPorts;
  /**
   * The EC2NodeClass by name, from the controller's informer cache (status included), parsed with
   * parseNodeClass (nodeclass/object.ts) so that Ready's observedGeneration is kept.
   */
  readonly nodeClass: (name: string) => EC2NodeClass | undefined;
  /** "1.31", from the API server's /version (Karpenter refreshes it every 5 min). */
  readonly kubernetesVersion: () => Promise<string>;
  /** The region's static on-demand prices; default catalogStaticPrices(region) (us-east-1 fallback applied). */
  readonly staticPrices?: StaticPrices;
  readonly clock?: Clock;
  readonly timers?: Timers;
  readonly registry?: Registry;
  /** Facts DescribeInstanceTypes lacks (pod ENIs, bandwidth); default catalogExtraFacts. */
  readonly extraFacts?: ExtraFactsLookup;
  readonly minValuesPolicy?: 'Strict' | 'BestEffort';
  /** Feature gate ReservedCapacity (FEATURE_GATES; default on): capacity reservations are resolved and offered. */
  readonly reservedCapacity?: boolean;
  /** Where the provider logs; the call site picks the level (default warn). */
  readonly log?: (message: string, fields: Record<string, unknown>, level?: 'debug' | 'warn') => void;
  readonly uuid?: () => string;
  /** The operator's families for the batcher and launch failures (default: batcher histograms on `registry`). */
  readonly providerMetrics?: {
    readonly batchSize: Histogram<'batcher'>;
    readonly batchTime: Histogram<'batcher'>;
    readonly launchFailures?: Counter<'zone' | 'zone_id' | 'capacity_type' | 'reason'>;
    readonly terminationFailures?: Counter<'zone' | 'zone_id'>;
  };
  /** Counters for unparseable interruption messages; default new ones on `registry`. */
  readonly interruptionMetrics?: InterruptionMetrics;
  /** Type and zone of a running instance, for marking spot-interrupted offerings unavailable. */
  readonly instanceAt?: (instanceId: string) => InstancePlacement | undefined;
}

export interface AwsCloudProvider extends CloudProvider {
  readonly unavailableOfferings: UnavailableOfferings;
  readonly pricing: PricingProvider;
  readonly instanceTypeProvider: InstanceTypeProvider;
  /** Instances left per capacity reservation, as this controller counts them. */
  readonly reservationCapacity: ReservationCapacity;
  /** The EC2NodeClass status reconciler: write back statusObject(result.status) and result.annotations. */
  reconcileNodeClass(nc: EC2NodeClass): Promise<NodeClassReconcileResult>;
  /** On node-class deletion: deletes its launch templates and its managed instance profile. */
  finalizeNodeClass(nc: EC2NodeClass): Promise<void>;
  /** Post-registration tags (Name, karpenter.sh/nodeclaim, eks:eks-cluster-name). */
  tagInstance(providerID: string, tags: Record<string, string>): Promise<void>;
  /** Instance types, offerings and prices, once (startup). Rejects with every failure. */
  refresh(): Promise<void>;
  /** Periodic refreshes (12 h types and prices, 1 min launch-template sweep); returns a stop function. */
  start(): () => void;
}

export function awsCloudProvider(deps: AwsCloudProviderDeps): AwsCloudProvider {
  const parts = buildParts(deps);
  const { settings, instanceTypeProvider, pricing, instances, ice, reservationCapacity, discovery } = parts;
  const typeFor = instanceTypeOf(deps, instanceTypeProvider);
  const interruptions = interruptionsOf(deps, parts);
  const cloudProvider = {
    name: 'aws',
    create: async (req: LaunchRequest) => {
      await discovery.ensure();
      return launch(req, launchDeps(deps, parts));
    },
    delete: (providerID: string) => instances.delete(providerID),
    get: (providerID: string) => instances.get(providerID),
    list: () => instances.list(),
    getInstanceTypes: async (nodePool: NodePool) => {
      const name = nodePool.template.nodeClassRef.name;
      const nc = deps.nodeClass(name);
      if (!nc) throw new NodeClassNotReadyError(`EC2NodeClass ${name} of NodePool ${nodePool.name} does not exist`);
      await discovery.ensure();
      return instanceTypeProvider.list(nc);
    },
    isDrifted: (q: DriftQuery) =>
      isDrifted(q, {
        nodeClass: deps.nodeClass,
        instances,
        instanceType: typeFor,
        reservedCapacity: parts.reservedCapacity,
        ...(settings.clusterCABundle ? { caBundle: settings.clusterCABundle } : {}),
      }),
    repairPolicies: () => AWS_REPAIR_POLICIES,
    instanceTagging: awsInstanceTagging({ instances, clusterName: settings.clusterName }),
    ...(interruptions ? { interruptions } : {}),
  } satisfies CloudProvider;

  return {
    ...cloudProvider,
    unavailableOfferings: ice,
    pricing,
    instanceTypeProvider,
    reservationCapacity,
    reconcileNodeClass: (nc) => reconcileClass(nc, deps, parts),
    finalizeNodeClass: (nc) => finalizeClass(nc, deps, parts),
    tagInstance: (providerID, tags) => instances.tag(providerID, tags),
    refresh: () => refreshAll(parts),
    start: () => startPeriodic(deps, parts),
  };
}

/** The provider's parts, built once from its dependencies and shared by its methods. */
interface Parts {
  readonly settings: ReturnType<typeof validateSettings>;
  readonly clock: Clock;
  readonly registry: Registry;
  readonly ice: UnavailableOfferings;
  readonly reservedCapacity: boolean;
  readonly reservationCapacity: ReservationCapacity;
  readonly pricing: PricingProvider;
  readonly instanceTypeProvider: InstanceTypeProvider;
  readonly templates: LaunchTemplates;
  readonly fleet: ReturnType<typeof fleetBatcher>;
  readonly ssmCache: TtlCache<string, string>;
  /** Free addresses by subnet id, from the last node-class resolution. */
  readonly subnetIps: Map<string, number>;
  readonly instances: Instances;
  readonly discovery: Discovery;
}

function buildParts(deps: AwsCloudProviderDeps): Parts {
  const settings = validateSettings(deps.settings);
  const clock = deps.clock ?? systemClock;
  const { ec2 } = deps.ports;
  const registry = deps.registry ?? new Registry();
  const ice = new UnavailableOfferings(clock);
  const reservedCapacity = deps.reservedCapacity ?? true;
  const reservationCapacity = new ReservationCapacity();
  const pricing = new PricingProvider({
    ec2,
    pricing: deps.ports.pricing,
    region: settings.region,
    isolatedVPC: settings.isolatedVPC,
    clock,
    staticPrices: deps.staticPrices ?? catalogStaticPrices(settings.region),
  });
  const instanceTypeProvider = new InstanceTypeProvider({
    ec2,
    pricing,
    ice,
    settings,
    extraFacts: deps.extraFacts ?? catalogExtraFacts,
    reservedCapacity,
    reservations: reservationCapacity,
    ...(deps.log ? { onSkip: (why: string) => deps.log?.('skipping an instance type', { why }, 'debug') } : {}),
  });
  const { batchSize, batchTime } = batcherMetrics(deps, registry);
  const fleet = fleetBatcher(ec2, deps.timers, (size, ms) => {
    batchSize.observe({ batcher: 'create_fleet' }, size);
    batchTime.observe({ batcher: 'create_fleet' }, ms / 1000);
  });
  const instances = new Instances({
    ec2,
    clusterName: settings.clusterName,
    instanceType: instanceTypeOf(deps, instanceTypeProvider),
    onReservedTerminated: (id, instanceId) => reservationCapacity.terminated(id, instanceId),
    onTerminateFailed: (zone, zoneId) => deps.providerMetrics?.terminationFailures?.inc({ zone, zone_id: zoneId }),
    ...(deps.timers ? { timers: deps.timers } : {}),
  });
  return {
    settings,
    clock,
    registry,
    ice,
    reservedCapacity,
    reservationCapacity,
    pricing,
    instanceTypeProvider,
    templates: new LaunchTemplates(ec2, clock, settings.clusterName),
    fleet,
    ssmCache: new TtlCache<string, string>(clock, 24 * 3600_000),
    subnetIps: new Map(),
    instances,
    discovery: discoveryOf(instanceTypeProvider),
  };
}

/** The batcher histograms: the operator's families, else new ones on `registry`. */
function batcherMetrics(
  deps: AwsCloudProviderDeps,
  registry: Registry,
): { batchSize: Histogram<'batcher'>; batchTime: Histogram<'batcher'> } {
  return {
    batchSize:
      deps.providerMetrics?.batchSize ??
      new Histogram({
        name: 'karpenter_cloudprovider_batcher_batch_size',
        help: 'Requests per batched AWS call.',
        labelNames: ['batcher'],
        buckets: [1, 2, 4, 5, 10, 15, 20, 25, 50, 100, 250, 500, 1000],
        registers: [registry],
      }),
    batchTime:
      deps.providerMetrics?.batchTime ??
      new Histogram({
        name: 'karpenter_cloudprovider_batcher_batch_time_seconds',
        help: 'Duration of batched AWS calls.',
        labelNames: ['batcher'],
        registers: [registry],
      }),
  };
}

/** An instance type of a node class by name (undefined if either is unknown). */
function instanceTypeOf(
  deps: AwsCloudProviderDeps,
  provider: InstanceTypeProvider,
): (nodeClassName: string | undefined, typeName: string) => InstanceType | undefined {
  return (nodeClassName, typeName) => {
    const nc = nodeClassName ? deps.nodeClass(nodeClassName) : undefined;
    return nc ? provider.list(nc).find((t) => t.name === typeName) : undefined;
  };
}

/** Instance-type discovery, run once before the first launch or listing (again after it fails). */
interface Discovery {
  ensure(): Promise<void>;
  /** A refresh succeeded: later calls need not discover. */
  done(): void;
}

function discoveryOf(provider: InstanceTypeProvider): Discovery {
  let discovered: Promise<void> | undefined;
  return {
    ensure: () =>
      (discovered ??= provider.refresh().catch((e: unknown) => {
        discovered = undefined;
        throw new Error('discovering instance types', { cause: e });
      })),
    done: () => {
      discovered = Promise.resolve();
    },
  };
}

/** The SQS interruption queue (when one is set), marking spot-interrupted offerings unavailable when it can. */
function interruptionsOf(deps: AwsCloudProviderDeps, parts: Parts): CloudProvider['interruptions'] {
  const { settings } = parts;
  const sqsSource = settings.interruptionQueue
    ? new SqsInterruptionSource({
        sqs: deps.ports.sqs,
        queueName: settings.interruptionQueue,
        metrics: deps.interruptionMetrics ?? interruptionMetrics(parts.registry),
        ...(deps.log ? { log: deps.log } : {}),
      })
    : undefined;
  return sqsSource && deps.instanceAt
    ? markingSpotInterruptions(sqsSource, parts.ice, deps.instanceAt, parts.reservationCapacity)
    : sqsSource;
}

function launchDeps(deps: AwsCloudProviderDeps, parts: Parts): Parameters<typeof launch>[1] {
  return {
    settings: parts.settings,
    clock: parts.clock,
    nodeClass: deps.nodeClass,
    instanceTypes: parts.instanceTypeProvider,
    ice: parts.ice,
    templates: parts.templates,
    fleet: parts.fleet,
    subnetIps: (id) => parts.subnetIps.get(id),
    reservedCapacity: parts.reservedCapacity,
    reservations: parts.reservationCapacity,
    ...(deps.minValuesPolicy ? { minValuesPolicy: deps.minValuesPolicy } : {}),
    launchFailed: (f) =>
      deps.providerMetrics?.launchFailures?.inc({
        zone: f.zone,
        zone_id: f.zoneId,
        capacity_type: f.capacityType,
        reason: f.reason,
      }),
  };
}

/** The EC2NodeClass status reconciler; keeps each subnet's free addresses for launches. */
async function reconcileClass(nc: EC2NodeClass, deps: AwsCloudProviderDeps, parts: Parts) {
  const { settings } = parts;
  const r = await reconcileNodeClass(nc, {
    ec2: deps.ports.ec2,
    ssm: deps.ports.ssm,
    iam: deps.ports.iam,
    clusterName: settings.clusterName,
    region: settings.region,
    ...(settings.clusterCABundle ? { clusterCABundle: settings.clusterCABundle } : {}),
    kubernetesVersion: deps.kubernetesVersion,
    clock: parts.clock,
    ssmCache: parts.ssmCache,
    reservedCapacity: parts.reservedCapacity,
    reservationCapacity: parts.reservationCapacity,
    ...(deps.uuid ? { uuid: deps.uuid } : {}),
    ...(settings.refreshMs ? { refreshMs: settings.refreshMs } : {}),
  });
  for (const sn of r.subnets) parts.subnetIps.set(sn.id, sn.availableIps);
  return r;
}

/**
 * On node-class deletion: its launch templates, then the instance profile its status names, when that profile is
 * the class's own: under the IAM path the class's profiles are made under (/karpenter/<region>/<cluster>/<uid>/, the
 * only profiles Karpenter's node-class finalizer deletes: pkg/controllers/nodeclass/controller.go,
 * cleanupInstanceProfiles). It is deleted with whatever role it holds now, not the one spec.role names (a profile
 * that holds another role would fail with DeleteConflict). A profile elsewhere (spec.instanceProfile's, or one
 * another owner made) is left as it is, and said so; one already gone is nothing to do.
 */
async function finalizeClass(nc: EC2NodeClass, deps: AwsCloudProviderDeps, parts: Parts): Promise<void> {
  await parts.templates.deleteAll(nc.name);
  const name = nc.status.instanceProfile;
  // No IAM call in an isolated VPC: Karpenter skips instance-profile clean-up there.
  if (!name || parts.settings.isolatedVPC) return;
  const path = profilePath(parts.settings.region, parts.settings.clusterName, nc.uid ?? nc.name);
  const profile = await deps.ports.iam.getInstanceProfile(name);
  if (!profile) return;
  if (profile.Path !== path) {
    deps.log?.(
      `EC2NodeClass ${nc.name} is deleted; its status.instanceProfile ${name} is not one of its own (IAM path ` +
        `${profile.Path ?? '(none)'}, not ${path}): left as it is`,
      { nodeClass: nc.name, instanceProfile: name },
      nc.spec.instanceProfile === name ? 'debug' : 'warn',
    );
    return;
  }
  await deleteInstanceProfile(deps.ports.iam, name);
}

/** Instance types and prices together; rejects with every failure. */
async function refreshAll(parts: Parts): Promise<void> {
  const results = await Promise.allSettled([parts.instanceTypeProvider.refresh(), parts.pricing.refresh()]);
  if (results[0].status === 'fulfilled') parts.discovery.done();
  const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  if (errors.length)
    throw new AggregateError(
      errors,
      `refreshing the AWS provider: ${errors.map((e) => (e as Error).message).join('; ')}`,
    );
}

/** The periodic refreshes (types, prices) and the launch-template sweep; returns a stop function. */
function startPeriodic(deps: AwsCloudProviderDeps, parts: Parts): () => void {
  const onError = (what: string) => (e: unknown) => deps.log?.(`${what} failed`, { error: (e as Error).message });
  const timers = deps.timers ? { timers: deps.timers } : {};
  const jobs = [
    runPeriodically(() => parts.instanceTypeProvider.refresh(), {
      intervalMs: INSTANCE_TYPES_REFRESH_MS,
      onError: onError('refreshing instance types'),
      ...timers,
    }),
    runPeriodically(() => parts.pricing.refresh(), {
      intervalMs: PRICING_REFRESH_MS,
      onError: onError('refreshing prices'),
      ...timers,
    }),
    runPeriodically(async () => void (await parts.templates.sweep()), {
      intervalMs: 60_000,
      onError: onError('deleting expired launch templates'),
      ...timers,
    }),
  ];
  return () => jobs.forEach((j) => j.stop());
}
