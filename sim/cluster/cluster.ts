// The simulated cluster: the API server on loopback plus the control plane around it (scheduler,
// kubelets, Deployment/ReplicaSet, DaemonSet and disruption controllers), all on one clock.
//
//   const cluster = await startSimCluster({ clock: manualClock() });
//   const kc = cluster.kubeConfig();            // real client-node over HTTP
//   cluster.kubelet.registerInstance({...});    // what the sim cloud provider calls
//   await cluster.clock.advance(60_000);        // manual clock: timers fire, the sim settles between them
//   await cluster.close();
import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../../controller/operator/clock.ts';
import type { TopologySpreadConstraint } from '../../engine/index.ts';
import {
  startApiServer,
  type Api,
  type ApiServer,
  type ApiServerOptions,
  type Faults,
  type RequestLog,
  type Store,
} from '../apiserver/index.ts';
import { manualClock, SimClock } from '../clock.ts';
import { DaemonSetController } from './daemonset.ts';
import { DeploymentController } from './deployment.ts';
import { Kubelet, type KubeletDelays } from './kubelet.ts';
import { kubeConfigFor } from '../kubeconfig.ts';
import { DisruptionController } from './pdb.ts';
import { settleReactors, type Reactor } from './reactor.ts';
import { Scheduler } from './scheduler.ts';

interface SimClusterOptions {
  /** Default: a manual SimClock. A SimClock gets the cluster's settle() between the timers it fires. */
  readonly clock?: Clock;
  readonly kubeletDelays?: Partial<KubeletDelays>;
  /** API server options (port, token, heartbeatMs, eventWindow, seed, extraResources, version, namespaces). */
  readonly apiServer?: Omit<ApiServerOptions, 'clock' | 'onError'>;
  /** Add karpenter.sh/unregistered:NoExecute when nodes register (default true). */
  readonly unregisteredTaint?: boolean;
  /** Unexpected errors inside the simulation; they are also collected in `errors`. Default console.error. */
  readonly onError?: (err: unknown) => void;
  /** The simulated kube-scheduler's PodTopologySpread defaultConstraints. */
  readonly defaultConstraints?: readonly TopologySpreadConstraint[];
}

export interface SimCluster {
  readonly url: string;
  /** The API server's bearer token (undefined when it runs without authentication). */
  readonly token: string | undefined;
  /** The API server's certificate when it serves https. */
  readonly ca: string | undefined;
  readonly clock: Clock;
  readonly server: ApiServer;
  readonly store: Store;
  readonly api: Api;
  readonly kubelet: Kubelet;
  readonly scheduler: Scheduler;
  readonly deployments: DeploymentController;
  readonly daemonsets: DaemonSetController;
  readonly disruption: DisruptionController;
  readonly faults: Faults;
  readonly requests: RequestLog;
  /** Unexpected errors raised inside the simulation (a healthy run leaves this empty). */
  readonly errors: unknown[];
  /** A client-node KubeConfig for the loopback server. */
  kubeConfig(): KubeConfig;
  /** Resolves once every simulated component is idle (no wall-clock waiting beyond macrotask turns). */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export async function startSimCluster(opts: SimClusterOptions = {}): Promise<SimCluster> {
  const clock = opts.clock ?? manualClock();
  const errors: unknown[] = [];
  const report = opts.onError ?? ((err: unknown) => console.error('sim cluster:', err));
  const onError = (err: unknown): void => {
    errors.push(err);
    report(err);
  };
  const server = await startApiServer({ ...(opts.apiServer ?? {}), clock, onError });
  const api = server.api;
  const kubelet = new Kubelet({
    api,
    clock,
    onError,
    ...(opts.kubeletDelays ? { delays: opts.kubeletDelays } : {}),
    ...(opts.unregisteredTaint !== undefined ? { unregisteredTaint: opts.unregisteredTaint } : {}),
  });
  const scheduler = new Scheduler({
    api,
    clock,
    onError,
    ...(opts.defaultConstraints ? { defaultConstraints: opts.defaultConstraints } : {}),
  });
  const deployments = new DeploymentController(api, onError);
  const daemonsets = new DaemonSetController(api, onError);
  const disruption = new DisruptionController(api, clock, onError);
  const reactors: Reactor[] = [
    scheduler.reactor,
    kubelet.pods.reactor,
    deployments.reactor,
    daemonsets.reactor,
    disruption.reactor,
  ];
  const settle = (): Promise<void> => settleReactors(reactors);
  const removeSettler = clock instanceof SimClock ? clock.addSettler(settle) : () => {};
  let closed = false;
  return {
    url: server.url,
    token: server.token,
    ca: server.ca,
    clock,
    server,
    store: api.store,
    api,
    kubelet,
    scheduler,
    deployments,
    daemonsets,
    disruption,
    faults: server.faults,
    requests: server.requests,
    errors,
    kubeConfig: () => kubeConfigFor(server),
    settle,
    async close() {
      if (closed) return;
      closed = true;
      removeSettler();
      scheduler.close();
      kubelet.close();
      deployments.close();
      daemonsets.close();
      disruption.close();
      await server.close();
    },
  };
}
