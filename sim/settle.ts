// When the controller's informers have seen everything the simulated API server has stored: each
// informer that is watching has a resourceVersion at least the latest change of its kind. Informers
// waiting on the clock (restart backoff, reconnect delay) cannot catch up until time moves, so they do
// not hold a settle up.
import type { SimCluster } from './cluster/cluster.ts';
import type { Informers } from '../controller/state/informers.ts';
import type { Kind } from '../controller/operator/kube.ts';

const STORE_KEY: Readonly<Partial<Record<Kind, string>>> = {
  Node: 'nodes',
  Pod: 'pods',
  DaemonSet: 'daemonsets.apps',
  PodDisruptionBudget: 'poddisruptionbudgets.policy',
  NodePool: 'nodepools.karpenter.sh',
  NodeClaim: 'nodeclaims.karpenter.sh',
  EC2NodeClass: 'ec2nodeclasses.karpenter.k8s.aws',
};

const latest = new WeakMap<SimCluster, Map<string, number>>();

function latestChanges(cluster: SimCluster): Map<string, number> {
  let m = latest.get(cluster);
  if (!m) {
    const map = new Map<string, number>();
    m = map;
    latest.set(cluster, map);
    for (const key of Object.values(STORE_KEY)) {
      for (const o of cluster.store.list(key))
        map.set(key, Math.max(map.get(key) ?? 0, Number(o.metadata.resourceVersion)));
    }
    cluster.store.subscribe((e) => map.set(e.resource, e.rv));
  }
  return m;
}

export function caughtUp(cluster: SimCluster, informers: Informers): boolean {
  const changes = latestChanges(cluster);
  for (const s of informers.status()) {
    if (s.state === 'backoff' || s.state === 'waiting' || s.state === 'stopped') continue;
    const key = STORE_KEY[s.kind];
    const want = key ? (changes.get(key) ?? 0) : 0;
    if (s.state !== 'watching' || Number(s.resourceVersion || 0) < want) return false;
  }
  return true;
}
