// Wires one informer per kind into cluster state.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../operator/clock.ts';
import type { KubeClient } from '../operator/kube.ts';
import type { Logger } from '../operator/logger.ts';
import { Cluster } from './cluster.ts';
import { Informers, type Backoff } from './informers.ts';

export interface ClusterStateDeps {
  readonly kube: KubeClient;
  readonly kubeConfig: KubeConfig;
  readonly clock: Clock;
  readonly log: Logger;
  readonly backoff?: Backoff;
}

export function newClusterState(deps: ClusterStateDeps): { cluster: Cluster; informers: Informers } {
  const informers = new Informers({ ...deps, log: deps.log.child({ component: 'informers' }) });
  const cluster = new Cluster({ clock: deps.clock, log: deps.log.child({ component: 'cluster-state' }), listed: () => informers.listed() });
  const w = cluster.workloads;
  informers.add('Node', { apply: (o) => cluster.applyNode(o), remove: (o) => cluster.removeNode(o) });
  informers.add('NodeClaim', { apply: (o) => cluster.applyNodeClaim(o), remove: (o) => cluster.removeNodeClaim(o) });
  informers.add('NodePool', { apply: (o) => cluster.applyNodePool(o), remove: (o) => cluster.removeNodePool(o) });
  informers.add('EC2NodeClass', { apply: (o) => cluster.applyNodeClass(o), remove: (o) => cluster.removeNodeClass(o) });
  informers.add('DaemonSet', { apply: (o) => w.applyDaemonSet(o), remove: (o) => w.removeDaemonSet(o) });
  informers.add('Pod', { apply: (o) => w.applyPod(o), remove: (o) => w.removePod(o) });
  informers.add('PodDisruptionBudget', { apply: (o) => w.applyPdb(o), remove: (o) => w.removePdb(o) });
  return { cluster, informers };
}
