// What wakes the static NodePool controllers (static.provisioning and static.deprovisioning): every static pool
// when they start, then a static pool when its NodePool changes in a way the controller cares about, or when one
// of its NodeClaims does.
import type { Change } from '../../state/changes.ts';
import type { Cluster } from '../../state/cluster.ts';
import type { KubeObject } from '../../operator/kube.ts';
import { NODEPOOL_LABEL } from '../keys.ts';

interface StaticWatch {
  /** Whether a NodePool update (with spec.replicas set) concerns the controller. */
  readonly poolChanged: (obj: KubeObject, old: KubeObject | undefined) => boolean;
  /** Whether a NodeClaim change concerns the controller (its pool is enqueued when that pool is static). */
  readonly claimChanged: (c: Change) => boolean;
}

/** Enqueues every static NodePool by name, then subscribes to the changes `watch` names; returns the unsubscribe. */
export function watchStaticPools(cluster: Cluster, enqueue: (name: string) => void, watch: StaticWatch): () => void {
  for (const p of cluster.nodePools()) if (p.pool?.replicas !== undefined) enqueue(p.obj.metadata.name!);
  return cluster.subscribe((c) => {
    if (
      c.kind === 'NodePool' &&
      c.type === 'upsert' &&
      c.obj.spec?.['replicas'] !== undefined &&
      watch.poolChanged(c.obj, c.old)
    )
      enqueue(c.name);
    if (c.kind === 'NodeClaim' && watch.claimChanged(c)) {
      const pool = c.obj.metadata.labels?.[NODEPOOL_LABEL];
      if (pool && cluster.nodePool(pool)?.pool?.replicas !== undefined) enqueue(pool);
    }
  });
}
