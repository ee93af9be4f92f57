// nodepool.hash (docs/karpenter/disruption.md §4.2): keeps the NodePool's karpenter.sh/nodepool-hash and
// karpenter.sh/nodepool-hash-version annotations equal to the engine's template hash, the one the
// provisioner stamps on NodeClaims, so nodeclaim.drift can compare them. When the pool's hash version is
// not the current one (an older controller wrote it), its NodeClaims are moved to the current version first,
// taking the pool's new hash unless they are already Drifted: a change of hash algorithm must not drift
// every node, and a node that drifted stays drifted.
import { nodePoolHash, NODEPOOL_HASH_VERSION } from '../../../../engine/index.ts';
import { findCondition } from '../../../operator/conditions.ts';
import { ignoreNotFound } from '../../../operator/kube.ts';
import { done, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { ControllerContext } from '../../context.ts';
import { NODEPOOL_HASH_ANNOTATION, NODEPOOL_HASH_VERSION_ANNOTATION } from '../../keys.ts';

export function newNodePoolHash(ctx: ControllerContext): Controller {
  async function migrateNodeClaims(pool: string, hash: string): Promise<void> {
    for (const c of ctx.cluster.nodeClaims()) {
      if (
        c.info.nodePoolName !== pool ||
        c.info.annotations[NODEPOOL_HASH_VERSION_ANNOTATION] === NODEPOOL_HASH_VERSION
      )
        continue;
      const drifted = findCondition(c.obj, 'Drifted') !== undefined;
      const annotations = {
        [NODEPOOL_HASH_VERSION_ANNOTATION]: NODEPOOL_HASH_VERSION,
        ...(drifted ? {} : { [NODEPOOL_HASH_ANNOTATION]: hash }),
      };
      const updated = await ctx.kube
        .patch('NodeClaim', c.info.name, { metadata: { annotations } })
        .catch(ignoreNotFound);
      if (updated) ctx.cluster.applyNodeClaim(updated);
    }
  }

  async function reconcile(name: string): Promise<ReconcileResult> {
    const entry = ctx.cluster.nodePool(name);
    if (!entry?.pool || entry.obj.metadata.deletionTimestamp) return done;
    const hash = nodePoolHash(entry.pool);
    const a = entry.obj.metadata.annotations ?? {};
    if (a[NODEPOOL_HASH_ANNOTATION] === hash && a[NODEPOOL_HASH_VERSION_ANNOTATION] === NODEPOOL_HASH_VERSION)
      return done;
    if (a[NODEPOOL_HASH_VERSION_ANNOTATION] !== NODEPOOL_HASH_VERSION) await migrateNodeClaims(name, hash);
    ctx.cluster.applyNodePool(
      await ctx.kube.patch('NodePool', name, {
        metadata: {
          annotations: { [NODEPOOL_HASH_ANNOTATION]: hash, [NODEPOOL_HASH_VERSION_ANNOTATION]: NODEPOOL_HASH_VERSION },
        },
      }),
    );
    return done;
  }
  return {
    name: 'nodepool.hash',
    reads: ['NodePool', 'NodeClaim'],
    reconcile,
    register(enqueue) {
      for (const p of ctx.cluster.nodePools()) enqueue(p.obj.metadata.name!);
      return ctx.cluster.subscribe((c) => {
        if (c.kind === 'NodePool' && c.type === 'upsert') enqueue(c.name);
      });
    },
  };
}
