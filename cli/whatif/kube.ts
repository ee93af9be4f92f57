// Listing a cluster's objects for a snapshot with the controller's own Kubernetes client
// (controller/operator/kube.ts: @kubernetes/client-node's kubeconfig and transport, objects in their wire
// form): a live cluster through a kubeconfig, or the simulator's API server, which speaks the same API.
import type { KubeConfig } from '@kubernetes/client-node';
import { isNotFound, KubeClient, type KubeObject } from '../../controller/operator/kube.ts';
import { SNAPSHOT_KINDS, type SnapshotKind } from './format.ts';
import { redact } from './redact.ts';

type Plain = Record<string, unknown>;

/** Kinds served by CRDs: a cluster without Karpenter has none of them, which is not an error. */
const OPTIONAL: ReadonlySet<SnapshotKind> = new Set(['NodePool', 'NodeClaim', 'EC2NodeClass']);

/** Every object of one kind, with what a snapshot must not hold (env values, managed fields, ...: redact.ts) dropped. */
async function listKind(client: KubeClient, kind: SnapshotKind): Promise<Plain[]> {
  let items: readonly KubeObject[];
  try {
    items = (await client.list(kind)).items;
  } catch (e) {
    if (OPTIONAL.has(kind) && isNotFound(e)) return [];
    throw e;
  }
  return items.map((o) => redact(kind, { ...(o as unknown as Plain), apiVersion: SNAPSHOT_KINDS[kind], kind }));
}

export async function listCluster(kc: KubeConfig): Promise<{ readonly [K in SnapshotKind]: Plain[] }> {
  const client = new KubeClient(kc);
  const kinds = Object.keys(SNAPSHOT_KINDS) as SnapshotKind[];
  const lists = await Promise.all(kinds.map((k) => listKind(client, k)));
  return Object.fromEntries(kinds.map((k, i) => [k, lists[i]!])) as { readonly [K in SnapshotKind]: Plain[] };
}
