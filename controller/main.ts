// The composition root: the only place that builds infrastructure. Options -> Kubernetes client ->
// cloud provider (wrapped per controller by the metrics decorator) -> cluster state (informers) -> the
// controller list -> the runtime, plus the metrics and health endpoints. `karpenter-ts controller` runs it
// against a cluster; the simulator (controller/simulation) runs the same operator against a loopback one.
import { KubeConfig } from '@kubernetes/client-node';
import { DEFAULT_ENGINE_OPTIONS, type EC2NodeClass, type EngineOptions, type ProvisionSolver } from '../engine/index.ts';
import { withMetrics } from './cloudprovider/metrics.ts';
import type { CloudProvider } from './cloudprovider/types.ts';
import type { ControllerContext } from './controllers/context.ts';
import type { DisruptionMethod } from './controllers/disruption/types.ts';
import { newControllers, type ControllerSet } from './controllers/index.ts';
import { Activity } from './operator/activity.ts';
import { realClock, type Clock } from './operator/clock.ts';
import { Recorder } from './operator/events.ts';
import { serve, type HttpServer } from './operator/health.ts';
import { KubeClient } from './operator/kube.ts';
import { newLogger, type Logger } from './operator/logger.ts';
import { Metrics } from './operator/metrics.ts';
import type { ResolvedOptions } from './operator/options.ts';
import { Runtime } from './operator/runtime.ts';
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
  readonly solver?: ProvisionSolver;
  readonly informerBackoff?: Backoff;
  readonly disruptionMethods?: readonly DisruptionMethod[];
  /** Only these controllers (tests). */
  readonly only?: readonly string[];
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
  /** Starts informers, then the controllers (they act once cluster state has synced). */
  start(): Promise<void>;
  /** Serves /metrics and /healthz, /readyz on the configured ports (0 = off). */
  serve(host?: string): Promise<HttpServer[]>;
  /** Work that can run now: a reconcile, a queued key, a request in flight. */
  busy(): boolean;
  stop(): Promise<void>;
}

export function engineOptionsOf(o: ResolvedOptions): EngineOptions {
  return {
    ...DEFAULT_ENGINE_OPTIONS,
    preferencePolicy: o.preferencePolicy,
    minValuesPolicy: o.minValuesPolicy,
    featureGates: { spotToSpotConsolidation: o.featureGates.spotToSpotConsolidation, reservedCapacity: o.featureGates.reservedCapacity },
  };
}

export async function newOperator(deps: OperatorDeps): Promise<Operator> {
  const { options } = deps;
  const clock = deps.clock ?? realClock;
  const log = deps.log ?? newLogger({ level: options.logLevel });
  const activity = new Activity();
  const metrics = new Metrics({ processMetrics: deps.clock === undefined });
  const kube = new KubeClient(deps.kubeConfig, { activity });
  const { cluster, informers } = newClusterState({ kube, kubeConfig: deps.kubeConfig, clock, log, ...(deps.informerBackoff ? { backoff: deps.informerBackoff } : {}) });
  const nodeClass = (name: string) => cluster.nodeClass(name)?.nodeClass;
  const cloudProvider = await deps.cloudProvider({ options, clock, log: log.child({ component: 'cloudprovider' }), cluster, nodeClass, kube, metrics });
  const events = new Recorder({ kube, clock, log, activity });
  const engineOptions = engineOptionsOf(options);
  for (const [gate, on] of Object.entries(options.featureGates)) {
    if (on && (gate === 'nodeRepair' || gate === 'staticCapacity' || gate === 'capacityBuffer' || gate === 'nodeOverlay')) log.warn({ gate }, 'feature gate is on but not implemented yet; it has no effect');
  }
  const contextFor = (name: string): ControllerContext => ({
    clock, kube, cluster, events, metrics, activity, options, engineOptions,
    log: log.child({ controller: name }),
    cloudProvider: withMetrics(cloudProvider, metrics, name),
    ...(deps.solver ? { solver: deps.solver } : {}),
  });
  const controllers = newControllers(contextFor, {
    ...(cloudProvider.nodeClasses ? { nodeClasses: cloudProvider.nodeClasses } : {}),
    ...(cloudProvider.interruptions ? { interruptions: cloudProvider.interruptions } : {}),
    ...(deps.disruptionMethods ? { disruptionMethods: deps.disruptionMethods } : {}),
    ...(deps.only ? { only: deps.only } : {}),
  });
  const runtime = new Runtime({ clock, log }, controllers.all);
  const unsyncedSince = { at: clock.now() };
  const gauges = clock.setInterval(5_000, () => {
    const synced = cluster.synced();
    if (synced) unsyncedSince.at = clock.now();
    metrics.clusterStateSynced.set(synced ? 1 : 0);
    metrics.clusterStateUnsyncedTime.set(synced ? 0 : (clock.now() - unsyncedSince.at) / 1000);
    metrics.clusterStateNodeCount.set(cluster.stateNodes().length);
  });
  const servers: HttpServer[] = [];
  return {
    clock, log, kube, cluster, informers, metrics, events, activity, cloudProvider, controllers, runtime,
    async start() {
      await informers.start();
      cloudProvider.start?.();
      runtime.start();
    },
    async serve(host) {
      if (options.metricsPort) servers.push(await serve(options.metricsPort, { metrics: () => metrics.text() }, host));
      if (options.healthProbePort) servers.push(await serve(options.healthProbePort, { ready: () => informers.listed() }, host));
      return servers;
    },
    busy: () => runtime.busy() || activity.busy(),
    async stop() {
      gauges.cancel();
      await runtime.stop();
      await cloudProvider.stop?.();
      informers.stop();
      await Promise.all(servers.splice(0).map((s) => s.close()));
    },
  };
}

/** Loads the kubeconfig the way Karpenter does: the --kubeconfig file, else in-cluster, else the default rules. */
export function loadKubeConfig(path: string, env: Readonly<Record<string, string | undefined>>): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else if (env['KUBERNETES_SERVICE_HOST']) kc.loadFromCluster();
  else kc.loadFromDefault();
  if (!kc.getCurrentCluster()) throw new Error(path ? `kubeconfig ${path} has no current cluster` : 'no kubeconfig found (not in a cluster, and no KUBECONFIG or ~/.kube/config)');
  return kc;
}
