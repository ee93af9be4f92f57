// nodepool.hash: keeps the NodePool's karpenter.sh/nodepool-hash (and -version) annotations equal to the
// hash of its template, the same hash the provisioner stamps on NodeClaims, so drift can compare them.
import { done, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { ControllerContext } from '../../context.ts';
import { NODEPOOL_HASH_ANNOTATION, NODEPOOL_HASH_VERSION, NODEPOOL_HASH_VERSION_ANNOTATION } from '../../keys.ts';
import { nodePoolHash } from '../../provisioning/nodeclaim.ts';

export function newNodePoolHash(ctx: ControllerContext): Controller {
  async function reconcile(name: string): Promise<ReconcileResult> {
    const entry = ctx.cluster.nodePool(name);
    if (!entry || entry.obj.metadata.deletionTimestamp) return done;
    const hash = nodePoolHash(entry.obj);
    const a = entry.obj.metadata.annotations ?? {};
    if (a[NODEPOOL_HASH_ANNOTATION] === hash && a[NODEPOOL_HASH_VERSION_ANNOTATION] === NODEPOOL_HASH_VERSION) return done;
    ctx.cluster.applyNodePool(await ctx.kube.patch('NodePool', name, { metadata: { annotations: { [NODEPOOL_HASH_ANNOTATION]: hash, [NODEPOOL_HASH_VERSION_ANNOTATION]: NODEPOOL_HASH_VERSION } } }));
    return done;
  }
  return {
    name: 'nodepool.hash',
    reconcile,
    register(enqueue) {
      for (const p of ctx.cluster.nodePools()) enqueue(p.obj.metadata.name!);
      return ctx.cluster.subscribe((c) => {
        if (c.kind === 'NodePool' && c.type === 'upsert') enqueue(c.name);
      });
    },
  };
}
