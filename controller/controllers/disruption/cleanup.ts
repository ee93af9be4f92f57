// The clean-up at the start of every disruption pass (docs/karpenter/disruption.md §1.2 step 4, §A.4): the taint and
// the DisruptionReason condition are the only disruption state that outlives the controller, so a node
// that carries them but belongs to no queued command and is not marked for deletion lost its command (a
// restart, a failure half-way): its marks come off. Nodes already being deleted keep them.
import { errText } from '../../operator/runtime.ts';
import type { ControllerContext } from '../context.ts';
import { hasDisruptedTaint, hasDisruptionReason, setDisruptedTaint, setDisruptionReason } from './marks.ts';

/** Returns how many nodes were cleaned. */
export async function cleanStaleMarks(ctx: ControllerContext, queued: ReadonlySet<string>): Promise<number> {
  let cleaned = 0;
  for (const sn of ctx.cluster.stateNodes()) {
    const pid = sn.providerId;
    if (!pid || !sn.hasNode || !sn.hasNodeClaim || queued.has(pid) || sn.markedForDeletion || sn.deleting) continue;
    const node = ctx.cluster.nodeByProviderID(pid);
    const claim = sn.nodeClaimName ? ctx.cluster.nodeClaim(sn.nodeClaimName) : undefined;
    const taint = node !== undefined && hasDisruptedTaint(node.obj);
    const condition = claim !== undefined && sn.initialized && hasDisruptionReason(claim.obj);
    if (!taint && !condition) continue;
    try {
      if (taint) await setDisruptedTaint(ctx, pid, false);
      if (condition) await setDisruptionReason(ctx, sn.nodeClaimName!, undefined);
      cleaned++;
      ctx.log.info(
        { node: sn.name, nodeclaim: sn.nodeClaimName },
        'removed disruption marks left by a command that is no longer running',
      );
    } catch (err) {
      ctx.log.warn({ node: sn.name, err: errText(err) }, 'removing stale disruption marks failed; retried next pass');
    }
  }
  return cleaned;
}
