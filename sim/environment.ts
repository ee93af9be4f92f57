// The simulator: the simulated cluster (sim/cluster), the simulated cloud, and the real operator
// (main.ts) talking to the loopback API server through client-node. Tests run it on a manual clock; the
// `sim` command on a scaled one.
//
//   const sim = await startSimulation();          // manual clock
//   await sim.apply(yamlText);                     // through client-node, like kubectl apply
//   await sim.clock.advanceUntil(() => ..., 120_000);
//   await sim.close();
import type { KubeConfig } from '@kubernetes/client-node';
import { parseDocuments, parseEC2NodeClass, toNodeClass, type EC2NodeClass, type Engine } from '../engine/index.ts';
import { addCapacityReservation, simNetwork, type SimNetwork } from './cloud/network.ts';
import { SimCloudProvider } from './cloud/provider.ts';
import type { CloudProvider } from '../controller/cloudprovider/types.ts';
import { newOperator, type Operator, type OperatorDeps } from '../controller/main.ts';
import { newLogger, type Logger } from '../controller/operator/logger.ts';
import { resolveOptions, type LogLevel } from '../controller/operator/options.ts';
import { KINDS, KubeClient, type KubeObject, type Kind } from '../controller/operator/kube.ts';
import { manualClock, type SimClock } from './clock.ts';
import { simulationEngine } from './engine.ts';
import { startSimCluster, type SimCluster } from './cluster/cluster.ts';
import type { KubeletDelays } from './cluster/kubelet.ts';
import { installAdmission } from './admission.ts';
import { caughtUp } from './settle.ts';
import type { Backoff } from '../controller/state/informers.ts';
import type { DestinationStream } from 'pino';

export interface SimulationOptions {
  /** Default a manual clock. */
  readonly clock?: SimClock;
  /** Default ap-northeast-2 (the guide's region). */
  readonly region?: string;
  /** Default my-cluster (the guide's examples select subnets tagged karpenter.sh/discovery: my-cluster). */
  readonly clusterName?: string;
  readonly kubeletDelays?: Partial<KubeletDelays>;
  /** Option overrides by flag name (batch-idle-duration, ...). */
  readonly options?: Readonly<Record<string, string>>;
  readonly logLevel?: LogLevel | 'silent';
  readonly logDestination?: DestinationStream;
  readonly launchMs?: number;
  readonly terminateMs?: number;
  readonly only?: readonly string[];
  readonly informerBackoff?: Backoff;
  /** API server port (default ephemeral). */
  readonly port?: number;
  /** Serve the API server over https with a self-signed certificate (for kubectl users; default http). */
  readonly tls?: boolean;
  /** The API server's bearer token (default a random one); false turns authentication off. */
  readonly token?: string | false;
  /** The first replica's leader-election identity and timings (election is on when options enable it). */
  readonly leaderElection?: OperatorDeps['leaderElection'];
  /** Wraps the cloud the first replica sees (failure drills: a launch that never returns, ...). */
  readonly cloud?: (cp: CloudProvider) => CloudProvider;
  /** Capacity reservations in the simulated account (EC2NodeClasses select them with capacityReservationSelectorTerms). */
  readonly capacityReservations?: readonly SimReservationSpec[];
  /** The engine the replicas decide on (default: the process's shared simulation engine, sim/engine.ts). */
  readonly engine?: Engine;
}

/** A capacity reservation as a scenario declares it. */
export interface SimReservationSpec {
  readonly id: string;
  readonly instanceType: string;
  readonly zone: string;
  readonly count: number;
  readonly reservationType?: 'default' | 'capacity-block';
  readonly instanceMatchCriteria?: 'open' | 'targeted';
  readonly tags?: Record<string, string>;
}

/** Another operator replica against the same simulated cluster and cloud. */
interface ReplicaOptions {
  /** Option overrides by flag name, on top of the first replica's. */
  readonly options?: Readonly<Record<string, string>>;
  readonly leaderElection?: OperatorDeps['leaderElection'];
  readonly cloud?: (cp: CloudProvider) => CloudProvider;
  /** Log lines carry `replica: <name>` (default the identity, or replica-N). */
  readonly name?: string;
  /** Failure-drill control runs: the replica acts before its caches have synced (see OperatorDeps). */
  readonly unsafeSkipCacheSync?: boolean;
  /** How the replica reaches the API server (default directly; timeout drills: through sim/silence.ts). */
  readonly kubeConfig?: KubeConfig;
}

export interface Simulation {
  readonly clock: SimClock;
  readonly cluster: SimCluster;
  readonly operator: Operator;
  readonly provider: SimCloudProvider;
  readonly network: SimNetwork;
  readonly log: Logger;
  /** A client as a user (kubectl) has it: never fenced by any replica's leader election. */
  readonly kube: KubeClient;
  /** Every operator started against this cluster, `operator` first (failure drills). */
  readonly replicas: readonly Operator[];
  /** Starts another replica of the controller (leader election, restarts after a kill). */
  startReplica(o?: ReplicaOptions): Promise<Operator>;
  kubeConfig(): KubeConfig;
  /** Creates or updates every object in a YAML text through client-node (server-side admission applies). */
  apply(yaml: string): Promise<KubeObject[]>;
  /** Lets the simulation and the controller run until nothing more can happen without the clock. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

const KIND_OF: Readonly<Record<string, Kind>> = {
  Node: 'Node',
  Pod: 'Pod',
  DaemonSet: 'DaemonSet',
  Deployment: 'Deployment',
  PodDisruptionBudget: 'PodDisruptionBudget',
  NodePool: 'NodePool',
  NodeClaim: 'NodeClaim',
  EC2NodeClass: 'EC2NodeClass',
  NodeOverlay: 'NodeOverlay',
  CapacityBuffer: 'CapacityBuffer',
  PodTemplate: 'PodTemplate',
  Service: 'Service',
};

/**
 * "Nothing more can happen without the clock": the simulated cluster is idle, no reconcile, queued key or
 * request is in flight, and the informers have seen every change. Returned for a SimClock's addSettler.
 */
export function settler(cluster: SimCluster, operators: Operator | (() => readonly Operator[])): () => Promise<void> {
  // Several replicas (leader-election drills): every one still running counts; a killed one does not.
  const live = typeof operators === 'function' ? operators : () => [operators];
  return async () => {
    for (let idle = 0, turns = 0; idle < 3; turns++) {
      await cluster.settle();
      await new Promise((r) => setImmediate(r));
      const busy = live().some((o) => o.busy() || !caughtUp(cluster, o.informers));
      idle = busy ? 0 : idle + 1;
      if (turns > 200_000)
        throw new Error(
          `simulation did not settle (busy: ${
            live()
              .flatMap((o) => o.runtime.busyNames())
              .join(', ') || 'informers or requests'
          })`,
        );
      if (busy && turns > 50) await new Promise((r) => setTimeout(r, 1));
    }
  };
}

/** The EC2NodeClasses in the API server, parsed once per resourceVersion. */
function storedNodeClasses(cluster: SimCluster): (name: string) => EC2NodeClass | undefined {
  const parsed = new Map<string, { rv: string; nc: EC2NodeClass | undefined }>();
  return (name) => {
    const obj = cluster.store.get('ec2nodeclasses.karpenter.k8s.aws', '', name);
    if (!obj) return undefined;
    const rv = obj.metadata.resourceVersion ?? '';
    const hit = parsed.get(name);
    if (hit?.rv === rv) return hit.nc;
    const r = parseEC2NodeClass(obj);
    const nc = r.ok ? r.value : undefined;
    parsed.set(name, { rv, nc });
    return nc;
  };
}

/**
 * The objects of a YAML text, in order: a document with a syntax error is an error naming the document and the
 * line; an empty document is no object.
 */
export function yamlObjects<T extends object>(yaml: string): T[] {
  const out: T[] = [];
  for (const doc of parseDocuments(yaml)) {
    if (doc.syntaxErrors.length)
      throw new Error(
        `apply: document ${doc.index}: ${doc.syntaxErrors.map((e) => `${e.line ? `line ${e.line}: ` : ''}${e.message}`).join('; ')}`,
      );
    if (doc.value && typeof doc.value === 'object') out.push(doc.value as T);
  }
  return out;
}

/** Creates or updates (spec, labels, annotations) every object of a YAML text through client-node. */
async function applyYaml(kube: KubeClient, yaml: string): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const obj of yamlObjects<KubeObject>(yaml)) {
    const kind = KIND_OF[String(obj.kind)];
    if (!kind) throw new Error(`apply: unsupported kind ${String(obj.kind)} (${String(obj.metadata?.name)})`);
    const body = {
      ...obj,
      metadata: {
        ...obj.metadata,
        ...(KINDS[kind].namespaced ? { namespace: obj.metadata?.namespace ?? 'default' } : {}),
      },
    };
    const existing = await kube.find(kind, body.metadata.name!, body.metadata.namespace);
    out.push(
      existing
        ? await kube.patch(
            kind,
            body.metadata.name!,
            {
              spec: body.spec ?? null,
              // A PodTemplate's shape is its top-level template.
              ...(obj['template'] !== undefined ? { template: obj['template'] } : {}),
              metadata: { labels: body.metadata.labels ?? null, annotations: body.metadata.annotations ?? null },
            },
            body.metadata.namespace ? { namespace: body.metadata.namespace } : {},
          )
        : await kube.create(kind, body),
    );
  }
  return out;
}

function apiServerOptions(opts: SimulationOptions): { port?: number; tls?: boolean; token?: string | false } {
  return {
    ...(opts.port !== undefined ? { port: opts.port } : {}),
    ...(opts.tls !== undefined ? { tls: opts.tls } : {}),
    ...(opts.token !== undefined ? { token: opts.token } : {}),
  };
}

export async function startSimulation(opts: SimulationOptions = {}): Promise<Simulation> {
  const clock = opts.clock ?? manualClock();
  const region = opts.region ?? 'ap-northeast-2';
  const clusterName = opts.clusterName ?? 'my-cluster';
  const log = newLogger({
    level: opts.logLevel ?? 'silent',
    now: () => clock.now(),
    ...(opts.logDestination ? { destination: opts.logDestination } : {}),
  });
  const cluster = await startCluster(opts, clock, clusterName, log);
  installAdmission(cluster.server);
  const network = simNetwork(region, clusterName);
  for (const r of opts.capacityReservations ?? []) addCapacityReservation(network, r);
  const replicas = newReplicas({
    opts,
    clock,
    log,
    cluster,
    network,
    region,
    overrides: baseOverrides(opts, clusterName),
  });
  const operator = await replicas.make(
    {
      ...(opts.leaderElection ? { leaderElection: opts.leaderElection } : {}),
      ...(opts.cloud ? { cloud: opts.cloud } : {}),
    },
    true,
  );
  // `kubectl get --raw /metrics` against the simulated API server shows the controller's metrics.
  cluster.server.serveMetrics(() => (replicas.live()[0] ?? operator).metrics.text());
  const settle = settler(cluster, replicas.live);
  const removeSettler = clock.addSettler(settle);
  await operator.start();
  const kc = cluster.kubeConfig();
  const kube = new KubeClient(kc);
  return {
    clock,
    cluster,
    operator,
    provider: replicas.cloud()!,
    network,
    log,
    kube,
    replicas: replicas.all,
    kubeConfig: () => kc,
    async startReplica(o = {}) {
      const op = await replicas.make(o, false);
      await op.start();
      await settle();
      return op;
    },
    async apply(yaml) {
      const out = await applyYaml(kube, yaml);
      await settle();
      return out;
    },
    settle,
    async close() {
      removeSettler();
      // No replica takes over while the others stop.
      for (const r of replicas.live()) r.elector?.halt();
      for (const r of replicas.live()) await r.stop();
      await cluster.close();
      clock.dispose();
    },
  };
}

/** The simulated cluster; its kube-scheduler is configured as the controller is told it is (SCHEDULER_CONFIG). */
function startCluster(opts: SimulationOptions, clock: SimClock, clusterName: string, log: Logger): Promise<SimCluster> {
  const defaultConstraints = resolveOptions([], {}, { 'cluster-name': clusterName, ...(opts.options ?? {}) })
    .schedulerConfig?.podTopologySpread?.defaultConstraints;
  return startSimCluster({
    clock,
    ...(opts.kubeletDelays ? { kubeletDelays: opts.kubeletDelays } : {}),
    apiServer: apiServerOptions(opts),
    onError: (err) => log.error({ err: String(err) }, 'simulated cluster error'),
    ...(defaultConstraints?.length ? { defaultConstraints } : {}),
  });
}

/**
 * The options every replica starts from. The simulator runs one replica without leader election unless asked
 * (leader-election drills), and no client-side rate limit against the loopback server: the simulated clock runs
 * faster than the wall.
 */
function baseOverrides(opts: SimulationOptions, clusterName: string): Record<string, string> {
  return {
    'cluster-name': clusterName,
    'metrics-port': '0',
    'health-probe-port': '0',
    'disable-leader-election': 'true',
    'leader-election-namespace': 'kube-system',
    'kube-client-qps': '0',
    ...(opts.options ?? {}),
  };
}

interface ReplicaContext {
  readonly opts: SimulationOptions;
  readonly clock: SimClock;
  readonly log: Logger;
  readonly cluster: SimCluster;
  readonly network: SimNetwork;
  readonly region: string;
  readonly overrides: Readonly<Record<string, string>>;
}

/** The operator replicas of one simulation and the one simulated cloud they share (made by the first to ask). */
function newReplicas(ctx: ReplicaContext) {
  const { opts, clock, log, cluster } = ctx;
  const all: Operator[] = [];
  const live = (): Operator[] => all.filter((r) => r.alive());
  const storedNodeClass = storedNodeClasses(cluster);
  let cloud: SimCloudProvider | undefined;
  const provider = (): SimCloudProvider =>
    new SimCloudProvider({
      clock,
      region: ctx.region,
      kubelet: cluster.kubelet,
      network: ctx.network,
      zonesOf: (nc) => toNodeClass(nc).zones,
      reservedCapacity: resolveOptions([], {}, ctx.overrides).featureGates.reservedCapacity,
      // The cloud is shared by every replica; node classes come from whichever replica is still running,
      // else (an operator started outside this simulation, as test/support/restart.ts does) from the API server.
      nodeClass: (name) =>
        live()
          .map((r) => r.cluster.nodeClass(name)?.nodeClass)
          .find((nc) => nc !== undefined) ?? storedNodeClass(name),
      ...(opts.launchMs !== undefined ? { launchMs: opts.launchMs } : {}),
      ...(opts.terminateMs !== undefined ? { terminateMs: opts.terminateMs } : {}),
    });
  async function make(o: ReplicaOptions, first: boolean): Promise<Operator> {
    const options = resolveOptions([], {}, { ...ctx.overrides, ...(o.options ?? {}) });
    const name = o.name ?? o.leaderElection?.identity ?? `replica-${all.length + 1}`;
    const op = await newOperator({
      options,
      clock,
      log: first ? log : log.child({ replica: name }),
      kubeConfig: o.kubeConfig ?? cluster.kubeConfig(),
      engine: opts.engine ?? simulationEngine(),
      ...(opts.only ? { only: opts.only } : {}),
      ...(opts.informerBackoff ? { informerBackoff: opts.informerBackoff } : {}),
      ...(o.leaderElection ? { leaderElection: o.leaderElection } : {}),
      ...(o.unsafeSkipCacheSync ? { unsafeSkipCacheSync: true } : {}),
      cloudProvider: () => {
        cloud ??= provider();
        return o.cloud ? o.cloud(cloud) : cloud;
      },
    });
    all.push(op);
    return op;
  }
  return { all: all as readonly Operator[], live, make, cloud: () => cloud };
}
