// What a static NodePool (spec.replicas) holds, read from cluster state the way Karpenter's NodePoolState
// counts it (core pkg/controllers/state/statenodepool.go, main after v1.14.1): active NodeClaims (launched or
// not), those a disruption command is replacing (pending disruption: marked for deletion by the orchestration
// queue, or carrying its DisruptionReason condition; a replacement is on its way, so they count for scale-up
// but not for scale-down), and deleting ones (a deletion timestamp).
import type { NodeClaimEntry } from '../../state/statenode.ts';
import type { Cluster } from '../../state/cluster.ts';
import { isTrue } from '../../operator/conditions.ts';
import { NODEPOOL_LABEL } from '../keys.ts';

interface StaticCounts {
  readonly active: readonly NodeClaimEntry[];
  readonly pendingDisruption: number;
  readonly deleting: number;
}

export function staticCounts(cluster: Cluster, pool: string): StaticCounts {
  const active: NodeClaimEntry[] = [];
  let pendingDisruption = 0;
  let deleting = 0;
  for (const c of cluster.nodeClaims()) {
    if (c.info.labels[NODEPOOL_LABEL] !== pool) continue;
    const pid = c.info.providerId;
    if (c.info.deletionTimestamp !== undefined) deleting++;
    else if ((pid && cluster.isMarkedForDeletion(pid)) || isTrue(c.obj, 'DisruptionReason')) pendingDisruption++;
    else active.push(c);
  }
  return { active, pendingDisruption, deleting };
}

type Versioned = { spec?: Record<string, unknown>; status?: Record<string, unknown> };

const ready = (o: Versioned): boolean =>
  ((o.status?.['conditions'] ?? []) as Array<{ type?: string; status?: string }>).some(
    (x) => x.type === 'Ready' && x.status === 'True',
  );

/** Karpenter's HasNodePoolReplicaOrStatusChanged: new, replicas changed, or the pool just became Ready. */
export function replicasOrReadinessChanged(obj: Versioned, old: Versioned | undefined): boolean {
  if (!old) return true;
  return obj.spec?.['replicas'] !== old.spec?.['replicas'] || (ready(obj) && !ready(old));
}

/** Karpenter's HasNodePoolReplicaCountChanged: new, or replicas changed. */
export function replicasChanged(obj: Versioned, old: Versioned | undefined): boolean {
  return !old || obj.spec?.['replicas'] !== old.spec?.['replicas'];
}
