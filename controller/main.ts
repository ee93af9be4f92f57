// The composition root: the only place that builds infrastructure. Options -> Kubernetes client ->
// cloud provider (wrapped per controller by the metrics decorator) -> cluster state (informers) -> the
// controller list -> the runtime, plus the metrics and health endpoints. `karpenter-ts controller` runs it
// against a cluster; the simulator (sim/) runs the same operator against a loopback one.
import { KubeConfig } from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import {
  createEngine,
  DEFAULT_ENGINE_OPTIONS,
  type ClusterEngine,
  type EC2NodeClass,
  type Engine,
  type EngineOptions,
  type WorkerMemory,
} from '../engine/index.ts';
import { withFence } from './cloudprovider/fence.ts';
import { withMetrics } from './cloudprovider/metrics.ts';
import type { CloudProvider } from './cloudprovider/types.ts';
import type { ControllerContext } from './controllers/context.ts';
import type { DisruptionMethod } from './controllers/disruption/types.ts';
import { newControllers, type ControllerSet } from './controllers/index.ts';
import { OverlayStore } from './controllers/nodeoverlay/store.ts';
import { Activity } from './operator/activity.ts';
import { EventLoopLag } from './operator/eventloop.ts';
import { observeKubeRequest } from './operator/clientmetrics.ts';
import { realClock, type Clock, type Timer } from './operator/clock.ts';
import { Recorder } from './operator/events.ts';
import { Fence } from './operator/fence.ts';
import { serve, type HttpServer, type Readiness } from './operator/health.ts';
import { KubeClient, type KubeClientOptions } from './operator/kube.ts';
import {
  defaultIdentity,
  inClusterNamespace,
  LEASE_DEFAULTS,
  LeaderElector,
  type LeaderElectionConfig,
} from './operator/leaderelection.ts';
import { newLogger, type Logger } from './operator/logger.ts';
import { cpuCount, engineWorkers } from './operator/reconciles.ts';
import { Metrics } from './operator/metrics.ts';
import { engineSemiSpace, engineWorkerHeap } from './operator/heap.ts';
import type { ResolvedOptions } from './operator/options.ts';
import { COMMIT, VERSION } from './operator/version.ts';
import { Runtime } from './operator/runtime.ts';
import { timeoutReporter } from './operator/timeouts.ts';
import type { Cluster } from './state/cluster.ts';
import { newClusterState } from './state/feed.ts';
import type { Backoff, Informers } from './state/informers.ts';

/** What a cloud provider is built from; it may read node classes and NodeClaims from cluster state. */
export interface CloudProviderContext {
  readonly options: ResolvedOptions;
  readonly clock: Clock;
  readonly log: Logger;
  readonly cluster: Cluster;
  readonly nodeClass: (name: string) => EC2NodeClass | undefined;
  /** The API server (its /version, its kubeconfig's CA). */
  readonly kube: KubeClient;
  /** The operator's metrics: a provider registers its own series on `metrics.registry`. */
  readonly metrics: Metrics;
}

export type CloudProviderFactory = (ctx: CloudProviderContext) => CloudProvider | Promise<CloudProvider>;

export interface OperatorDeps {
  readonly options: ResolvedOptions;
  readonly kubeConfig: KubeConfig;
  readonly cloudProvider: CloudProviderFactory;
  readonly clock?: Clock;
  readonly log?: Logger;
  /**
   * The engine the controllers decide on (a simulator or a test shares one between operators); default: the
   * operator's own, with a worker a requested core (at most two), closed when it stops.
   */
  readonly engine?: Engine;
  readonly informerBackoff?: Backoff;
  readonly disruptionMethods?: readonly DisruptionMethod[];
  /** Only these controllers (tests). */
  readonly only?: readonly string[];
  /** Leader election: this replica's identity and timings (default `<hostname>_<uuid>`, client-go's 15/10/2 s). */
  readonly leaderElection?: Partial<
    Pick<LeaderElectionConfig, 'identity' | 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'>
  >;
  /** Called when this replica could not renew its lease and stopped acting (`controller` exits 1, as Karpenter). */
  readonly onLostLeadership?: () => void;
  /**
   * Tests only, for the control runs of the cache-sync drills: controllers start, and cluster state counts
   * as synced, before their kinds have listed (what this build did before it waited for its caches).
   */
  readonly unsafeSkipCacheSync?: boolean;
}

export interface Operator {
  readonly clock: Clock;
  readonly log: Logger;
  readonly kube: KubeClient;
  readonly cluster: Cluster;
  readonly informers: Informers;
  readonly metrics: Metrics;
  readonly events: Recorder;
  readonly activity: Activity;
  readonly cloudProvider: CloudProvider;
  readonly controllers: ControllerSet;
  readonly runtime: Runtime;
  /** The leader elector (undefined with --disable-leader-election). */
  readonly elector: LeaderElector | undefined;
  /** Whether this replica may act: it leads, or runs without leader election; false once stopped. */
  leading(): boolean;
  /** False once stopped or killed (or after losing its lease: a replica that lost it never acts again). */
  alive(): boolean;
  /**
   * Starts informers, then the controllers (they act once cluster state has synced); with leader
   * election, the controllers start only once this replica holds the lease.
   */
  start(): Promise<void>;
  /** Serves /metrics and /healthz, /readyz on the configured ports (0 = off). */
  serve(host?: string): Promise<HttpServer[]>;
  /** Work that can run now: a reconcile, a queued key, a request in flight. */
  busy(): boolean;
  /** What each engine worker's memory holds (heap, wasm memory, models). */
  engineMemory(): Promise<WorkerMemory[]>;
  /** A clean stop: running reconciles finish, then the lease is handed back. */
  stop(): Promise<void>;
  /**
   * A crash, for failure drills: every write and cloud call is refused from now on, timers stop, running
   * reconciles are abandoned, and the lease is left to expire.
   */
  kill(): void;
}

export function engineOptionsOf(o: ResolvedOptions): EngineOptions {
  return {
    ...DEFAULT_ENGINE_OPTIONS,
    preferencePolicy: o.preferencePolicy,
    minValuesPolicy: o.minValuesPolicy,
    ignoreDRARequests: o.ignoreDRARequests,
    featureGates: {
      spotToSpotConsolidation: o.featureGates.spotToSpotConsolidation,
      reservedCapacity: o.featureGates.reservedCapacity,
    },
    ...(o.schedulerConfig?.podTopologySpread?.defaultConstraints.length
      ? { defaultTopologySpreadConstraints: o.schedulerConfig.podTopologySpread.defaultConstraints }
      : {}),
  };
}

export async function newOperator(deps: OperatorDeps): Promise<Operator> {
  const { options } = deps;
  const clock = deps.clock ?? realClock;
  const log = operatorLogger(deps);
  const activity = new Activity();
  const metrics = new Metrics({ version: VERSION, commit: COMMIT, processMetrics: deps.clock === undefined });
  const election = electionConfig(options, deps);
  // Shut until this replica leads (with leader election); see operator/fence.ts.
  const fence = new Fence(election ? 'this replica is not the leader' : undefined);
  const kubeLog = log.child({ component: 'kube-client' });
  const onTimeout = timeoutReporter(kubeLog, metrics);
  const kube = controllerKube(deps, { activity, fence, log: kubeLog, metrics, onTimeout });
  const { cluster, informers } = clusterState(deps, kube, clock, log, metrics);
  // The provisioner's first sighting and decision of each pod are kept on its record in cluster state.
  metrics.podTimes.keepIn((namespace, name, uid) => cluster.workloads.timesOf(namespace, name, uid));
  const nodeClass = (name: string) => cluster.nodeClass(name)?.nodeClass;
  const cloudProvider = await deps.cloudProvider({
    options,
    clock,
    log: log.child({ component: 'cloudprovider' }),
    cluster,
    nodeClass,
    kube,
    metrics,
  });
  // Events have a token bucket of their own (KubeClient.withOwnRateLimit): a burst of them cannot starve reconciles.
  const events = new Recorder({ kube: kube.withOwnRateLimit(), clock, log, activity });
  logSchedulerDefaults(options, log);
  const shared = { clock, kube, cluster, events, metrics, activity, options, log };
  const engine = operatorEngine(deps.engine, deps.options);
  const controllers = controllerSet(deps, shared, cloudProvider, withFence(cloudProvider, fence), engine);
  const runtime = operatorRuntime(deps, shared, informers, controllers);
  const life: Life = {
    dead: false,
    provider: providerLifecycle(cloudProvider),
    gauges: syncGauges(clock, cluster, metrics),
    engine,
    lag: eventLoopLag(metrics),
  };
  const elector = election
    ? leaderElector(deps, election, {
        clock,
        log,
        metrics,
        fence,
        runtime,
        life,
        kube: kubeClient(deps, { activity, onTimeout }),
      })
    : undefined;
  if (election) {
    metrics.leaderElectionStatus.set({ name: election.name }, 0);
    // Renewals always read the Lease first (client-go's slow path is the only path here): nothing to count.
    metrics.leaderElectionSlowpath.inc({ name: election.name }, 0);
  }
  return operatorHandle({ ...shared, informers, cloudProvider, controllers, runtime, elector, fence, life });
}

/** The operator's logger (or the one given), having warned of each setting that has no effect here. */
function operatorLogger(deps: OperatorDeps): Logger {
  const { options } = deps;
  const log =
    deps.log ??
    newLogger({
      level: options.logLevel,
      outputPaths: options.logOutputPaths,
      errorOutputPaths: options.logErrorOutputPaths,
    });
  for (const i of options.ignored)
    log.warn({ flag: `--${i.flag}`, env: i.env }, `setting has no effect in karpenter-ts: ${i.reason}`);
  return log;
}

/** The controllers' Kubernetes client: fenced while this replica does not lead, measured, rate-limited. */
function controllerKube(
  deps: OperatorDeps,
  p: {
    readonly activity: Activity;
    readonly fence: Fence;
    /** The client's logger (component kube-client). */
    readonly log: Logger;
    readonly metrics: Metrics;
    readonly onTimeout: KubeClientOptions['onTimeout'];
  },
): KubeClient {
  return kubeClient(deps, {
    activity: p.activity,
    onTimeout: p.onTimeout,
    guard: (method, path) => p.fence.check(`${method} ${path}`),
    observe: (m, path, code, ms) => observeKubeRequest(p.metrics, m, path, code, ms),
    onConnectionLost: (m, path, err) =>
      p.log.info(
        { request: `${m} ${path}`, err },
        'connection closed by the API server under a GET; sent again on another connection',
      ),
    rateLimit: { qps: deps.options.kubeClientQPS, burst: deps.options.kubeClientBurst },
  });
}

/** Cluster state and the informers that feed it, as the options shape them. */
function clusterState(
  deps: OperatorDeps,
  kube: KubeClient,
  clock: Clock,
  log: Logger,
  metrics: Metrics,
): { cluster: Cluster; informers: Informers } {
  const { options } = deps;
  return newClusterState({
    kube,
    kubeConfig: deps.kubeConfig,
    clock,
    log,
    onRejected: (kind, stage) => metrics.watchEventsRejected.inc({ kind, stage }),
    dra: !options.ignoreDRARequests,
    watchTimeoutMs: options.kubeRequestTimeoutMs,
    defaultSpread: Boolean(options.schedulerConfig?.podTopologySpread?.defaultConstraints.length),
    nodeOverlays: options.featureGates.nodeOverlay,
    capacityBuffers: options.featureGates.capacityBuffer,
    ...(deps.informerBackoff ? { backoff: deps.informerBackoff } : {}),
    ...(deps.unsafeSkipCacheSync ? { unsafeSkipCacheSync: true } : {}),
  });
}

function logSchedulerDefaults(options: ResolvedOptions, log: Logger): void {
  const defaults = options.schedulerConfig?.podTopologySpread?.defaultConstraints;
  if (defaults?.length)
    log.info(
      { defaultTopologySpreadConstraints: defaults },
      'scheduler-config is set: applying these default topology spread constraints during scheduling to pods that declare none of their own',
    );
}

/** The runtime over the controllers: it waits for the informers' caches (unless told not to), and is scraped. */
function operatorRuntime(
  deps: OperatorDeps,
  shared: Shared,
  informers: Informers,
  controllers: ControllerSet,
): Runtime {
  const { clock, log, metrics } = shared;
  const runtime = new Runtime(
    {
      clock,
      log,
      ...(deps.unsafeSkipCacheSync ? {} : { caches: informers }),
      onConflict: (controller) => metrics.reconcileConflicts.inc({ controller }),
      metrics,
    },
    controllers.all,
  );
  metrics.beforeScrape.push(() => runtime.observe());
  return runtime;
}

/** A Kubernetes client with the operator's timeouts (the leader elector's is never fenced). */
function kubeClient(
  deps: OperatorDeps,
  o: Pick<KubeClientOptions, 'activity' | 'onTimeout' | 'guard' | 'observe' | 'onConnectionLost' | 'rateLimit'>,
): KubeClient {
  return new KubeClient(deps.kubeConfig, {
    ...o,
    requestTimeoutMs: deps.options.kubeRequestTimeoutMs,
    listTimeoutMs: deps.options.kubeListTimeoutMs,
  });
}

/** What every controller shares, before its own name, logger and metrics-labelled cloud provider. */
interface Shared {
  readonly clock: Clock;
  readonly kube: KubeClient;
  readonly cluster: Cluster;
  readonly events: Recorder;
  readonly metrics: Metrics;
  readonly activity: Activity;
  readonly options: ResolvedOptions;
  readonly log: Logger;
}

function controllerSet(
  deps: OperatorDeps,
  shared: Shared,
  cloudProvider: CloudProvider,
  fenced: CloudProvider,
  engine: OperatorEngine,
): ControllerSet {
  const engineOptions = engineOptionsOf(shared.options);
  // NodeOverlay: every controller sees the overlaid instance types; the nodeoverlay controller reads the provider's own.
  const overlays = shared.options.featureGates.nodeOverlay ? new OverlayStore() : undefined;
  const base = (name: string): CloudProvider => withMetrics(fenced, shared.metrics, name);
  const contextFor = (name: string): ControllerContext => ({
    ...shared,
    engineOptions,
    log: shared.log.child({ controller: name }),
    cloudProvider: overlays ? overlays.decorate(base(name)) : base(name),
    engine: engine.cluster(name),
  });
  return newControllers(contextFor, {
    ...(cloudProvider.nodeClasses ? { nodeClasses: cloudProvider.nodeClasses } : {}),
    ...(cloudProvider.interruptions ? { interruptions: cloudProvider.interruptions } : {}),
    ...(cloudProvider.instanceTagging ? { instanceTagging: cloudProvider.instanceTagging } : {}),
    ...(deps.disruptionMethods ? { disruptionMethods: deps.disruptionMethods } : {}),
    ...(deps.only ? { only: deps.only } : {}),
    featureGates: shared.options.featureGates,
    ...(overlays ? { nodeOverlays: { store: overlays, base } } : {}),
    repairPolicies: cloudProvider.repairPolicies().length,
    disableObservability: shared.options.disableClusterStateObservability,
  });
}

/**
 * Controllers that decide over the whole cluster share one warm model (the same snapshot from cluster state):
 * one copy of every node and pod in one worker instead of one per controller. Their calls take turns on it.
 */
const WHOLE_CLUSTER: ReadonlySet<string> = new Set(['provisioner', 'disruption', 'disruption.queue']);

interface OperatorEngine {
  /** The controller's warm model of the cluster. */
  cluster(controller: string): ClusterEngine;
  memory(): Promise<WorkerMemory[]>;
  close(): Promise<void>;
}

/**
 * The operator's own engine: a worker a requested core, at most two (operator/reconciles.ts, engineWorkers): the
 * cluster's model lives on one; a second serves the static NodePools' models and takes a call whose model's worker
 * died meanwhile. Their heap is limited apart from the main thread's if asked.
 */
function ownEngine(options: ResolvedOptions): Engine {
  const resourceLimits = engineWorkerHeap(options.engineWorkerHeapMiB);
  const minSemiSpaceMb = engineSemiSpace(process.env['NODE_OPTIONS']);
  return createEngine({
    threads: engineWorkers(cpuCount(options.cpuRequests)),
    ...(resourceLimits ? { resourceLimits } : {}),
    ...(minSemiSpaceMb === undefined ? {} : { minSemiSpaceMb }),
  });
}

/**
 * The operator's decisions: a warm cluster model per controller, but one for the controllers that decide over
 * the whole cluster (provisioning and disruption), on the given engine or one of its own.
 */
function operatorEngine(shared: Engine | undefined, options: ResolvedOptions): OperatorEngine {
  const engine = shared ?? ownEngine(options);
  const id = randomUUID();
  const models = new Map<string, ClusterEngine>();
  return {
    cluster(controller) {
      const model = WHOLE_CLUSTER.has(controller) ? 'cluster' : controller;
      let c = models.get(model);
      if (!c) models.set(model, (c = engine.cluster(`${id}/${model}`)));
      return c;
    },
    memory: () => engine.pool.memory(),
    async close() {
      await Promise.all([...models.values()].map((c) => c.close()));
      models.clear();
      if (!shared) await engine.close();
    },
  };
}

/** karpenter_ts_event_loop_lag_seconds, from now on. */
function eventLoopLag(metrics: Metrics): EventLoopLag {
  const lag = new EventLoopLag();
  metrics.watchEventLoop(lag);
  lag.start();
  return lag;
}

/** The cluster-state gauges, every 5 s. */
function syncGauges(clock: Clock, cluster: Cluster, metrics: Metrics): Timer {
  const unsyncedSince = { at: clock.now() };
  return clock.setInterval(5_000, () => {
    const synced = cluster.synced();
    if (synced) unsyncedSince.at = clock.now();
    metrics.clusterStateSynced.set(synced ? 1 : 0);
    metrics.clusterStateUnsyncedTime.set(synced ? 0 : (clock.now() - unsyncedSince.at) / 1000);
    metrics.clusterStateNodeCount.set(cluster.stateNodes().length);
  });
}

/** The provider's background work (refreshes, clean-ups that write to the cloud) runs only where the controllers run: on the leader. */
function providerLifecycle(cloudProvider: CloudProvider): { start(): void; stop(): Promise<void> } {
  let started = false;
  return {
    start() {
      if (started) return;
      started = true;
      cloudProvider.start?.();
    },
    async stop() {
      if (!started) return;
      started = false;
      await cloudProvider.stop?.();
    },
  };
}

/** What the operator's start, stop, kill and leader election share. */
interface Life {
  dead: boolean;
  readonly provider: { start(): void; stop(): Promise<void> };
  readonly gauges: Timer;
  readonly engine: OperatorEngine;
  readonly lag: EventLoopLag;
}

interface ElectorParts {
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly fence: Fence;
  readonly runtime: Runtime;
  readonly life: Life;
  readonly kube: KubeClient;
}

/** Leading opens the fence and starts the provider and controllers; losing the lease stops this replica for good. */
function leaderElector(deps: OperatorDeps, election: LeaderElectionConfig, p: ElectorParts): LeaderElector {
  return new LeaderElector(
    {
      kube: p.kube,
      clock: p.clock,
      log: p.log.child({ component: 'leader-election' }),
      onStartedLeading: () => {
        if (p.life.dead) return;
        p.metrics.leaderElectionStatus.set({ name: election.name }, 1);
        p.fence.open();
        p.life.provider.start();
        p.runtime.start();
      },
      onStoppedLeading: (why) => {
        p.metrics.leaderElectionStatus.set({ name: election.name }, 0);
        p.fence.shut(why === 'lost' ? 'this replica lost the leader lease' : 'this replica stopped leading');
        if (why !== 'lost') return;
        p.life.dead = true;
        p.runtime.halt();
        void p.life.provider.stop();
        deps.onLostLeadership?.();
      },
    },
    election,
  );
}

interface HandleParts extends Shared {
  readonly informers: Informers;
  readonly cloudProvider: CloudProvider;
  readonly controllers: ControllerSet;
  readonly runtime: Runtime;
  readonly elector: LeaderElector | undefined;
  readonly fence: Fence;
  readonly life: Life;
}

function operatorHandle(p: HandleParts): Operator {
  const { informers, runtime, elector, fence, life, metrics, options, activity } = p;
  const servers: HttpServer[] = [];
  return {
    clock: p.clock,
    log: p.log,
    kube: p.kube,
    cluster: p.cluster,
    informers,
    metrics,
    events: p.events,
    activity,
    cloudProvider: p.cloudProvider,
    controllers: p.controllers,
    runtime,
    elector,
    leading: () => !life.dead && fence.isOpen,
    alive: () => !life.dead,
    async start() {
      await informers.start();
      if (life.dead) return;
      if (elector) elector.run();
      else {
        life.provider.start();
        runtime.start();
      }
    },
    async serve(host) {
      if (options.metricsPort)
        servers.push(await serve(options.metricsPort, { metrics: () => metrics.exposition() }, host));
      if (options.healthProbePort)
        servers.push(await serve(options.healthProbePort, { ready: () => readiness(informers) }, host));
      return servers;
    },
    busy: () => !life.dead && (runtime.busy() || activity.busy()),
    engineMemory: () => life.engine.memory(),
    async stop() {
      life.gauges.cancel();
      await runtime.stop();
      await life.engine.close();
      life.lag.stop();
      await life.provider.stop();
      await elector?.release();
      fence.shut('the controller stopped');
      life.dead = true;
      informers.stop();
      await Promise.all(servers.splice(0).map((s) => s.close()));
    },
    kill() {
      life.dead = true;
      fence.shut('the controller was killed');
      elector?.halt();
      life.gauges.cancel();
      runtime.halt();
      void life.engine.close();
      life.lag.stop();
      void life.provider.stop();
      informers.stop();
      for (const s of servers.splice(0)) void s.close();
    },
  };
}

/** /readyz: ready once every kind has listed; otherwise which kinds have not, and what their informers do. */
export function readiness(informers: Informers): Readiness {
  const unsynced = new Set(informers.unsynced());
  const lines = informers
    .status()
    .filter((s) => unsynced.has(s.kind))
    .map((s) => `${s.kind}: not synced (informer ${s.state}, ${s.restarts} restarts)`);
  return { ready: lines.length === 0, detail: lines };
}

/** The Lease to elect a leader with, or undefined with --disable-leader-election. */
function electionConfig(options: ResolvedOptions, deps: OperatorDeps): LeaderElectionConfig | undefined {
  if (options.disableLeaderElection) return undefined;
  const namespace = options.leaderElectionNamespace || inClusterNamespace();
  if (!namespace) {
    throw new Error(
      'leader election needs a namespace for its Lease: not running in a cluster, so set --leader-election-namespace (LEADER_ELECTION_NAMESPACE), or run a single replica with --disable-leader-election',
    );
  }
  return {
    ...LEASE_DEFAULTS,
    identity: defaultIdentity(),
    ...deps.leaderElection,
    name: options.leaderElectionName,
    namespace,
  };
}

/** Loads the kubeconfig the way Karpenter does: the --kubeconfig file, else in-cluster, else the default rules. */
export function loadKubeConfig(path: string, env: Readonly<Record<string, string | undefined>>): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else if (env['KUBERNETES_SERVICE_HOST']) kc.loadFromCluster();
  else kc.loadFromDefault();
  if (!kc.getCurrentCluster())
    throw new Error(
      path
        ? `kubeconfig ${path} has no current cluster`
        : 'no kubeconfig found (not in a cluster, and no KUBECONFIG or ~/.kube/config)',
    );
  return kc;
}
