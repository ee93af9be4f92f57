// The persisted disruption marks (docs/karpenter/disruption.md §5.7, §A.4): the karpenter.sh/disrupted:NoSchedule
// taint on a Node and the DisruptionReason condition on its NodeClaim. Both are lists another writer may
// change at the same time (the kubelet, node.termination, the lifecycle controller), so every write carries
// the resourceVersion it was computed from and a 409 re-reads the object and tries again.
import { conditionsOf, withCondition, withoutCondition } from '../../operator/conditions.ts';
import { isConflict, isNotFound, type KubeObject } from '../../operator/kube.ts';
import type { ControllerContext } from '../context.ts';
import { DISRUPTED_TAINT } from '../keys.ts';

type TaintJson = { key: string; value?: string; effect: string };
const ATTEMPTS = 5;

const taintsOf = (o: KubeObject): TaintJson[] => (o.spec?.['taints'] ?? []) as TaintJson[];

/** The Node carries karpenter.sh/disrupted:NoSchedule (matched on key and effect). */
export const hasDisruptedTaint = (o: KubeObject): boolean =>
  taintsOf(o).some((t) => t.key === DISRUPTED_TAINT.key && t.effect === DISRUPTED_TAINT.effect);

/** The NodeClaim's DisruptionReason condition is True. */
export const hasDisruptionReason = (o: KubeObject): boolean =>
  conditionsOf(o).some((c) => c.type === 'DisruptionReason' && c.status === 'True');

/**
 * Writes `next(current)` unless it returns undefined (nothing to do), re-reading the object after a
 * conflict. A missing object is not an error: there is nothing left to mark.
 */
async function update(
  current: () => KubeObject | undefined,
  reread: () => Promise<KubeObject | undefined>,
  write: (o: KubeObject) => Promise<KubeObject> | undefined,
): Promise<void> {
  let obj = current();
  for (let attempt = 1; obj; attempt++) {
    const pending = write(obj);
    if (!pending) return;
    try {
      await pending;
      return;
    } catch (err) {
      if (isNotFound(err)) return;
      if (!isConflict(err) || attempt >= ATTEMPTS) throw err;
      obj = await reread();
    }
  }
}

/** Adds (on) or removes (off) the disrupted taint on the Node with this providerID. */
export async function setDisruptedTaint(ctx: ControllerContext, providerId: string, on: boolean): Promise<void> {
  const name = ctx.cluster.nodeByProviderID(providerId)?.info.name;
  if (!name) return;
  await update(
    () => ctx.cluster.node(name)?.obj,
    () => ctx.kube.find('Node', name),
    (o) => {
      if (hasDisruptedTaint(o) === on) return undefined;
      const rest = taintsOf(o).filter((t) => t.key !== DISRUPTED_TAINT.key);
      const taints = on ? [...rest, { ...DISRUPTED_TAINT }] : rest;
      return ctx.kube
        .patch('Node', name, { metadata: { resourceVersion: o.metadata.resourceVersion }, spec: { taints } })
        .then((u) => {
          ctx.cluster.applyNode(u);
          return u;
        });
    },
  );
}

/** Sets DisruptionReason=True with the reason on the NodeClaim, or clears it (reason undefined). */
export async function setDisruptionReason(
  ctx: ControllerContext,
  nodeClaimName: string,
  reason: string | undefined,
): Promise<void> {
  await update(
    () => ctx.cluster.nodeClaim(nodeClaimName)?.obj,
    () => ctx.kube.find('NodeClaim', nodeClaimName),
    (o) => {
      const cur = conditionsOf(o).find((c) => c.type === 'DisruptionReason');
      if (reason === undefined ? !cur : cur?.status === 'True' && cur.reason === reason) return undefined;
      const conditions =
        reason === undefined
          ? withoutCondition(conditionsOf(o), 'DisruptionReason')
          : withCondition(conditionsOf(o), 'DisruptionReason', 'True', ctx.clock.now(), { reason, message: reason });
      const rv = o.metadata.resourceVersion;
      return ctx.kube
        .patchStatus('NodeClaim', nodeClaimName, { conditions }, rv ? { resourceVersion: rv } : {})
        .then((u) => {
          ctx.cluster.applyNodeClaim(u);
          return u;
        });
    },
  );
}

/** Both marks on (reason) or off (undefined) for one candidate. */
export async function markDisrupted(
  ctx: ControllerContext,
  c: { providerId: string; nodeClaimName: string },
  reason: string | undefined,
): Promise<void> {
  await setDisruptedTaint(ctx, c.providerId, reason !== undefined);
  await setDisruptionReason(ctx, c.nodeClaimName, reason);
}
