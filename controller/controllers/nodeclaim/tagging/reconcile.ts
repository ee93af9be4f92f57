// nodeclaim.tagging (the AWS provider's controller of that name, aws/karpenter-provider-aws v1.14.1
// pkg/controllers/nodeclaim/tagging), for a cloud provider with instance tagging: tags that need the node
// (AWS: Name = the node name) are written on the instance once the NodeClaim's node has registered.
//
// 1. Gone, deleting, no node name yet, or already annotated as tagged -> done.
// 2. A tag write less than a second ago -> wait out the second (tag writes share EC2's mutating-call budget
//    with launches; Karpenter makes at most one per second, one NodeClaim at a time).
// 3. Tag: an instance that is gone is left alone (termination handles it); a providerID the provider cannot
//    read is logged once and not retried; other errors retry with backoff.
// 4. Annotate the NodeClaim with the provider's tagged annotations.
import { isNodeClaimNotFound, type InstanceTagging } from '../../../cloudprovider/types.ts';
import { ignoreNotFound } from '../../../operator/kube.ts';
import { done, requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { NodeClaimEntry } from '../../../state/statenode.ts';
import type { ControllerContext } from '../../context.ts';

const TAG_WRITE_INTERVAL_MS = 1_000;

/** Whether the NodeClaim still needs its instance tagged (Karpenter's isTaggable). */
function taggable(
  e: NodeClaimEntry | undefined,
  tagging: InstanceTagging,
): e is NodeClaimEntry & { info: { nodeName: string; providerId: string } } {
  if (!e || e.info.deletionTimestamp !== undefined || !e.info.nodeName || !e.info.providerId) return false;
  const annotations = e.obj.metadata.annotations ?? {};
  return !Object.entries(tagging.taggedAnnotations).every(([k, v]) => annotations[k] === v);
}

export function newNodeClaimTagging(ctx: ControllerContext, tagging: InstanceTagging): Controller {
  let lastWrite = -Infinity;

  async function reconcile(name: string): Promise<ReconcileResult> {
    const e = ctx.cluster.nodeClaim(name);
    if (!taggable(e, tagging)) return done;
    const wait = lastWrite + TAG_WRITE_INTERVAL_MS - ctx.clock.now();
    if (wait > 0) return requeueAfter(wait);
    const claim = { name, nodeName: e.info.nodeName, providerID: e.info.providerId };
    let result;
    try {
      result = await tagging.tag(claim);
    } catch (err) {
      if (isNodeClaimNotFound(err)) return done;
      throw new Error(`tagging the instance of nodeclaim ${name}`, { cause: err });
    }
    if (result.kind === 'invalid') {
      ctx.log.error(
        { nodeclaim: name, providerID: claim.providerID, reason: result.reason },
        'failed parsing instance id; not tagging',
      );
      return done;
    }
    if (result.kind === 'tagged') {
      lastWrite = ctx.clock.now();
      ctx.log.info(
        { nodeclaim: name, node: claim.nodeName, providerID: claim.providerID, tags: result.tags },
        'tagged instance',
      );
    }
    const patched = await ctx.kube
      .patch('NodeClaim', name, { metadata: { annotations: { ...tagging.taggedAnnotations } } })
      .catch(ignoreNotFound);
    if (patched) ctx.cluster.applyNodeClaim(patched);
    return done;
  }

  return {
    name: 'nodeclaim.tagging',
    concurrency: 1,
    reads: ['NodeClaim'],
    reconcile,
    register(enqueue) {
      for (const c of ctx.cluster.nodeClaims()) if (taggable(c, tagging)) enqueue(c.info.name);
      return ctx.cluster.subscribe((c) => {
        if (c.kind === 'NodeClaim' && c.type === 'upsert' && taggable(ctx.cluster.nodeClaim(c.name), tagging))
          enqueue(c.name);
      });
    },
  };
}
