// What a provisioning pass tells the CapacityBuffers (Karpenter core pkg/controllers/provisioning/buffers.go,
// main at 2266468), from the plan the engine made for the real pending pods and the virtual pods together:
//
// - per buffer, its Provisioning condition: False/NotReadyForProvisioning when ReadyForProvisioning is not
//   True; False/BufferEmpty when it has no replicas; False/RequiresNewCapacity when any of its virtual pods
//   needed a new NodeClaim or did not schedule; True/FitsExistingCapacity when every one fits on the nodes
//   the cluster already has (in-flight ones included); left as it is when the plan saw none of its pods;
// - per existing node (by providerID), how many virtual pods the plan put there: cluster state hands the
//   count to the disruption engine, whose emptiness leaves such a node alone ("has buffer pods").
import { bufferOf, type ProvisionPlan, type Snapshot } from '../../../engine/index.ts';
import { conditionsOf, findCondition, sameConditions, withCondition } from '../../operator/conditions.ts';
import { isConflict, isNotFound } from '../../operator/kube.ts';
import { errText } from '../../operator/runtime.ts';
import { bufferKey, type BufferEntry } from '../../state/buffers.ts';
import type { ControllerContext } from '../context.ts';
import { READY_FOR_PROVISIONING } from './reconcile.ts';

const PROVISIONING = 'Provisioning';

/** Where a buffer's virtual pods went in one plan. */
interface BufferPlacement {
  existing: number;
  requiresNewClaim: number;
  failed: number;
}

/** The plan's virtual pods by buffer key, and per providerID the count placed on existing nodes. */
function classifyBufferPods(
  plan: ProvisionPlan,
  snapshot: Pick<Snapshot, 'nodes'>,
  virtual: ReadonlyMap<string, string>,
): { byBuffer: Map<string, BufferPlacement>; byNode: Map<string, number> } {
  const byBuffer = new Map<string, BufferPlacement>();
  const byNode = new Map<string, number>();
  const of = (key: string): BufferPlacement => {
    let s = byBuffer.get(key);
    if (!s) byBuffer.set(key, (s = { existing: 0, requiresNewClaim: 0, failed: 0 }));
    return s;
  };
  const providerOf = new Map(snapshot.nodes.map((n) => [n.name, n.providerId]));
  for (const [node, uids] of plan.existing)
    for (const uid of uids) {
      const key = virtual.get(uid);
      if (!key) continue;
      of(key).existing++;
      const pid = providerOf.get(node);
      if (pid) byNode.set(pid, (byNode.get(pid) ?? 0) + 1);
    }
  for (const nc of plan.newNodeClaims)
    for (const uid of nc.pods) {
      const key = virtual.get(uid);
      if (key) of(key).requiresNewClaim++;
    }
  for (const e of [...plan.unschedulable, ...plan.ignored]) {
    const key = virtual.get(e.uid);
    if (key) of(key).failed++;
  }
  return { byBuffer, byNode };
}

type Verdict = { status: 'True' | 'False'; reason: string; message: string } | undefined;

/** The Provisioning condition a buffer gets from one plan, or undefined to leave it as it is. */
function provisioningVerdict(entry: BufferEntry, s: BufferPlacement | undefined): Verdict {
  if (findCondition(entry.obj, READY_FOR_PROVISIONING)?.status !== 'True')
    return { status: 'False', reason: 'NotReadyForProvisioning', message: 'Buffer is not ReadyForProvisioning' };
  const desired = Number((entry.obj.status as { replicas?: number } | undefined)?.replicas ?? 0);
  if (!desired) return { status: 'False', reason: 'BufferEmpty', message: 'Buffer has zero desired replicas' };
  if (!s) return undefined;
  if (s.requiresNewClaim > 0 || s.failed > 0)
    return {
      status: 'False',
      reason: 'RequiresNewCapacity',
      message: `${s.requiresNewClaim}/${desired} virtual pods required new capacity, ${s.failed} failed`,
    };
  if (s.existing === desired)
    return {
      status: 'True',
      reason: 'FitsExistingCapacity',
      message: `All ${desired} virtual pods fit on existing capacity`,
    };
  return undefined;
}

/** After a provisioning plan: the per-node counts into cluster state, each buffer's Provisioning condition. */
export async function observeBufferPlan(
  ctx: ControllerContext,
  plan: ProvisionPlan,
  snapshot: Snapshot,
): Promise<void> {
  const buffers = ctx.cluster.workloads.buffers;
  const virtual = new Map<string, string>();
  for (const p of buffers.virtualPods()) {
    const key = bufferOf(p);
    if (key) virtual.set(p.uid, key);
  }
  const { byBuffer, byNode } = classifyBufferPods(plan, snapshot, virtual);
  buffers.setNodeCounts(byNode);
  for (const entry of buffers.buffers()) {
    const v = provisioningVerdict(entry, byBuffer.get(bufferKey(entry.obj)));
    if (!v) continue;
    const g = entry.obj.metadata.generation;
    const conds = withCondition(conditionsOf(entry.obj), PROVISIONING, v.status, ctx.clock.now(), {
      reason: v.reason,
      message: v.message,
      ...(g !== undefined ? { generation: g } : {}),
    });
    if (sameConditions(conditionsOf(entry.obj), conds)) continue;
    try {
      const updated = await ctx.kube.patchStatus(
        'CapacityBuffer',
        entry.obj.metadata.name!,
        { conditions: conds },
        {
          namespace: entry.obj.metadata.namespace ?? 'default',
          ...(entry.obj.metadata.resourceVersion ? { resourceVersion: entry.obj.metadata.resourceVersion } : {}),
        },
      );
      buffers.applyBuffer(updated);
    } catch (err) {
      // The buffer controller wrote first (or the buffer is gone): the next pass writes it.
      if (isConflict(err) || isNotFound(err)) continue;
      ctx.log.error(
        { capacitybuffer: bufferKey(entry.obj), err: errText(err) },
        'updating CapacityBuffer provisioning status',
      );
    }
  }
}
