// Listing a cluster's objects for a snapshot through @kubernetes/client-node: a live cluster through a
// kubeconfig, or the simulator's API server (sim/apiserver), which speaks the same API.
import * as k8s from '@kubernetes/client-node';
import { SNAPSHOT_KINDS, type SnapshotKind } from './format.ts';
import { redact } from './redact.ts';

type Plain = Record<string, unknown>;

/**
 * The typed client turns timestamps into Date objects; a JSON round trip gives the wire form back
 * (RFC 3339 strings), which is what the engine's parsers and the snapshot file expect. What a snapshot
 * must not hold (env values, managed fields, ...: redact.ts) is dropped here, before anything is written.
 */
function plain(items: readonly unknown[], kind: SnapshotKind): Plain[] {
  return items.map((o) => redact(kind, { ...(JSON.parse(JSON.stringify(o)) as Plain), apiVersion: SNAPSHOT_KINDS[kind], kind }));
}

async function custom(api: k8s.CustomObjectsApi, group: string, plural: string, kind: SnapshotKind): Promise<Plain[]> {
  try {
    const list = (await api.listClusterCustomObject({ group, version: 'v1', plural })) as { items?: unknown[] };
    return plain(list.items ?? [], kind);
  } catch (e) {
    // The CRD is not installed (a cluster without Karpenter): no objects of that kind.
    if (e instanceof k8s.ApiException && e.code === 404) return [];
    throw e;
  }
}

export async function listCluster(kc: k8s.KubeConfig): Promise<{ readonly [K in SnapshotKind]: Plain[] }> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const policy = kc.makeApiClient(k8s.PolicyV1Api);
  const crd = kc.makeApiClient(k8s.CustomObjectsApi);
  const [nodes, pods, daemonSets, pdbs, nodePools, nodeClaims, nodeClasses] = await Promise.all([
    core.listNode(),
    core.listPodForAllNamespaces(),
    apps.listDaemonSetForAllNamespaces(),
    policy.listPodDisruptionBudgetForAllNamespaces(),
    custom(crd, 'karpenter.sh', 'nodepools', 'NodePool'),
    custom(crd, 'karpenter.sh', 'nodeclaims', 'NodeClaim'),
    custom(crd, 'karpenter.k8s.aws', 'ec2nodeclasses', 'EC2NodeClass'),
  ]);
  return {
    Node: plain(nodes.items, 'Node'),
    Pod: plain(pods.items, 'Pod'),
    NodePool: nodePools,
    NodeClaim: nodeClaims,
    EC2NodeClass: nodeClasses,
    DaemonSet: plain(daemonSets.items, 'DaemonSet'),
    PodDisruptionBudget: plain(pdbs.items, 'PodDisruptionBudget'),
  };
}
