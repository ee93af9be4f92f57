// The simulator: the simulated cluster (controller/sim), the simulated cloud, and the real operator
// (main.ts) talking to the loopback API server through client-node. Tests run it on a manual clock; the
// `sim` command on a scaled one.
//
//   const sim = await startSimulation();          // manual clock
//   await sim.apply(yamlText);                     // through client-node, like kubectl apply
//   await sim.clock.advanceUntil(() => ..., 120_000);
//   await sim.close();
import type { KubeConfig } from '@kubernetes/client-node';
import { parseDocuments, toNodeClass } from '../../engine/index.ts';
import { simNetwork, type SimNetwork } from '../cloudprovider/sim/network.ts';
import { SimCloudProvider } from '../cloudprovider/sim/provider.ts';
import { newOperator, type Operator } from '../main.ts';
import { newLogger, type Logger } from '../operator/logger.ts';
import { resolveOptions, type LogLevel } from '../operator/options.ts';
import type { KubeObject, Kind } from '../operator/kube.ts';
import { manualClock, type SimClock } from '../sim/clock.ts';
import { startSimCluster, type SimCluster } from '../sim/cluster.ts';
import type { KubeletDelays } from '../sim/kubelet.ts';
import { installAdmission } from './admission.ts';
import { caughtUp } from './settle.ts';
import type { Backoff } from '../state/informers.ts';
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
}

export interface Simulation {
  readonly clock: SimClock;
  readonly cluster: SimCluster;
  readonly operator: Operator;
  readonly provider: SimCloudProvider;
  readonly network: SimNetwork;
  readonly log: Logger;
  kubeConfig(): KubeConfig;
  /** Creates or updates every object in a YAML text through client-node (server-side admission applies). */
  apply(yaml: string): Promise<KubeObject[]>;
  /** Lets the simulation and the controller run until nothing more can happen without the clock. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

const KIND_OF: Readonly<Record<string, Kind>> = {
  Node: 'Node', Pod: 'Pod', DaemonSet: 'DaemonSet', Deployment: 'Deployment', PodDisruptionBudget: 'PodDisruptionBudget',
  NodePool: 'NodePool', NodeClaim: 'NodeClaim', EC2NodeClass: 'EC2NodeClass',
};

/**
 * "Nothing more can happen without the clock": the simulated cluster is idle, no reconcile, queued key or
 * request is in flight, and the informers have seen every change. Returned for a SimClock's addSettler.
 */
export function settler(cluster: SimCluster, operator: Operator): () => Promise<void> {
  return async () => {
    for (let idle = 0, turns = 0; idle < 3; turns++) {
      await cluster.settle();
      await new Promise((r) => setImmediate(r));
      const busy = operator.busy() || !caughtUp(cluster, operator.informers);
      idle = busy ? 0 : idle + 1;
      if (turns > 200_000) throw new Error(`simulation did not settle (busy: ${operator.runtime.busyNames().join(', ') || 'informers or requests'})`);
      if (busy && turns > 50) await new Promise((r) => setTimeout(r, 1));
    }
  };
}

export async function startSimulation(opts: SimulationOptions = {}): Promise<Simulation> {
  const clock = opts.clock ?? manualClock();
  const region = opts.region ?? 'ap-northeast-2';
  const clusterName = opts.clusterName ?? 'my-cluster';
  const log = newLogger({ level: opts.logLevel ?? 'silent', now: () => clock.now(), ...(opts.logDestination ? { destination: opts.logDestination } : {}) });
  const cluster = await startSimCluster({
    clock, ...(opts.kubeletDelays ? { kubeletDelays: opts.kubeletDelays } : {}), ...(opts.port !== undefined ? { apiServer: { port: opts.port } } : {}),
    onError: (err) => log.error({ err: String(err) }, 'simulated cluster error'),
  });
  installAdmission(cluster.server);
  const network = simNetwork(region, clusterName);
  const options = resolveOptions([], {}, { 'cluster-name': clusterName, 'metrics-port': '0', 'health-probe-port': '0', ...(opts.options ?? {}) });
  let provider: SimCloudProvider | undefined;
  const operator = await newOperator({
    options, clock, log, kubeConfig: cluster.kubeConfig(),
    ...(opts.only ? { only: opts.only } : {}), ...(opts.informerBackoff ? { informerBackoff: opts.informerBackoff } : {}),
    cloudProvider: ({ nodeClass }) => (provider = new SimCloudProvider({
      clock, region, nodeClass, kubelet: cluster.kubelet, network, zonesOf: (nc) => toNodeClass(nc).zones,
      ...(opts.launchMs !== undefined ? { launchMs: opts.launchMs } : {}), ...(opts.terminateMs !== undefined ? { terminateMs: opts.terminateMs } : {}),
    })),
  });
  const settle = settler(cluster, operator);
  const removeSettler = clock.addSettler(settle);
  await operator.start();
  const kc = cluster.kubeConfig();
  return {
    clock, cluster, operator, provider: provider!, network, log,
    kubeConfig: () => kc,
    async apply(yaml) {
      const out: KubeObject[] = [];
      for (const doc of parseDocuments(yaml)) {
        if (doc.syntaxErrors.length) throw new Error(`apply: document ${doc.index}: ${doc.syntaxErrors.map((e) => `${e.line ? `line ${e.line}: ` : ''}${e.message}`).join('; ')}`);
        const obj = doc.value as KubeObject | null;
        if (!obj || typeof obj !== 'object') continue;
        const kind = KIND_OF[String(obj.kind)];
        if (!kind) throw new Error(`apply: unsupported kind ${String(obj.kind)} (${String(obj.metadata?.name)})`);
        const body = { ...obj, metadata: { ...obj.metadata, ...(kind === 'Deployment' || kind === 'Pod' || kind === 'DaemonSet' || kind === 'PodDisruptionBudget' ? { namespace: obj.metadata?.namespace ?? 'default' } : {}) } };
        const existing = await operator.kube.find(kind, body.metadata.name!, body.metadata.namespace);
        out.push(existing
          ? await operator.kube.patch(kind, body.metadata.name!, { spec: body.spec ?? null, metadata: { labels: body.metadata.labels ?? null, annotations: body.metadata.annotations ?? null } }, body.metadata.namespace ? { namespace: body.metadata.namespace } : {})
          : await operator.kube.create(kind, body));
      }
      await settle();
      return out;
    },
    settle,
    async close() {
      removeSettler();
      await operator.stop();
      await cluster.close();
      clock.dispose();
    },
  };
}
