// nodepool.readiness (docs/karpenter/disruption.md §6.6): ValidationSucceeded from the NodePool's own validation,
// NodeClassReady mirroring its EC2NodeClass's Ready condition, and the root Ready = both. Only Ready
// NodePools provision.
import {
  conditionsOf,
  findCondition,
  sameConditions,
  withCondition,
  type KubeCondition,
} from '../../../operator/conditions.ts';
import type { KubeObject } from '../../../operator/kube.ts';
import { done, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { NodePoolEntry } from '../../../state/changes.ts';
import type { ControllerContext } from '../../context.ts';

type Status = KubeCondition['status'];

/** What NodeClassReady says, and the EC2NodeClass generation it was read at. */
interface NodeClassReadiness {
  readonly status: Status;
  readonly reason: string;
  readonly message: string;
  readonly generation?: number;
}

/** The NodePool's spec.template.spec.nodeClassRef. */
function nodeClassRefOf(pool: KubeObject): { name?: string } | undefined {
  return (pool.spec?.['template'] as { spec?: { nodeClassRef?: { name?: string } } } | undefined)?.spec?.nodeClassRef;
}

/** NodeClassReady from the referenced EC2NodeClass: missing, terminating, unknown, stale, not ready, or ready. */
function nodeClassReadiness(ctx: ControllerContext, ref: { name?: string } | undefined): NodeClassReadiness {
  const nc = ref?.name ? ctx.cluster.nodeClass(ref.name) : undefined;
  if (!nc)
    return { status: 'False', reason: 'NodeClassNotFound', message: `EC2NodeClass ${ref?.name ?? ''} not found` };
  const generation = nc.obj.metadata.generation;
  const g = generation !== undefined ? { generation } : {};
  if (nc.obj.metadata.deletionTimestamp)
    return {
      status: 'False',
      reason: 'NodeClassTerminating',
      message: `EC2NodeClass ${ref!.name} is terminating`,
      ...g,
    };
  const ready = findCondition(nc.obj, 'Ready');
  if (!ready || ready.status === 'Unknown')
    return { status: 'Unknown', reason: 'NodeClassReadinessUnknown', message: 'Node Class readiness is unknown', ...g };
  // A Ready computed for an older spec says nothing about this one (a new AMI or subnet selector may not resolve).
  if (generation !== undefined && ready.observedGeneration !== undefined && ready.observedGeneration < generation) {
    return {
      status: 'Unknown',
      reason: 'NodeClassReadinessUnknown',
      message: `EC2NodeClass ${ref!.name} Ready was computed for generation ${ready.observedGeneration}, the spec is at generation ${generation}`,
      generation,
    };
  }
  if (ready.status === 'False')
    return { status: 'False', reason: ready.reason || 'NodeClassNotReady', message: ready.message ?? '', ...g };
  return { status: 'True', reason: 'NodeClassReady', message: '', ...g };
}

/** The pool's conditions with ValidationSucceeded, NodeClassReady and the root Ready set; why Ready is not True. */
function readinessConditions(
  entry: NodePoolEntry,
  nc: NodeClassReadiness,
  now: number,
): { conds: KubeCondition[]; ready: Status; why: string } {
  const gen = entry.obj.metadata.generation;
  const g = gen !== undefined ? { generation: gen } : {};
  let conds = conditionsOf(entry.obj);
  conds = entry.errors.length
    ? withCondition(conds, 'ValidationSucceeded', 'False', now, {
        reason: 'NodePoolValidationFailed',
        message: entry.errors.join('; '),
        ...g,
      })
    : withCondition(conds, 'ValidationSucceeded', 'True', now, { reason: 'ValidationSucceeded', ...g });
  conds = withCondition(conds, 'NodeClassReady', nc.status, now, { reason: nc.reason, message: nc.message, ...g });
  const valid = entry.errors.length === 0;
  const ready: Status = valid && nc.status === 'True' ? 'True' : !valid || nc.status === 'False' ? 'False' : 'Unknown';
  const why = !valid ? 'ValidationSucceeded is False' : nc.status !== 'True' ? `NodeClassReady is ${nc.status}` : '';
  conds = withCondition(conds, 'Ready', ready, now, {
    reason: ready === 'True' ? 'Ready' : 'UnhealthyDependents',
    message: why,
    ...g,
  });
  return { conds, ready, why };
}

export function newNodePoolReadiness(ctx: ControllerContext): Controller {
  async function reconcile(name: string): Promise<ReconcileResult> {
    const entry = ctx.cluster.nodePool(name);
    if (!entry) return done;
    const nc = nodeClassReadiness(ctx, nodeClassRefOf(entry.obj));
    const { conds, ready, why } = readinessConditions(entry, nc, ctx.clock.now());
    const status = entry.obj.status ?? {};
    if (
      sameConditions(conditionsOf(entry.obj), conds) &&
      (nc.generation === undefined || status['nodeClassObservedGeneration'] === nc.generation)
    )
      return done;
    ctx.cluster.applyNodePool(
      await ctx.kube.patchStatus('NodePool', name, {
        conditions: conds,
        ...(nc.generation !== undefined ? { nodeClassObservedGeneration: nc.generation } : {}),
      }),
    );
    if (ready !== 'True')
      ctx.log.info(
        { nodepool: name, reason: why, detail: nc.message || entry.errors.join('; ') },
        'nodepool is not ready',
      );
    return done;
  }

  return {
    name: 'nodepool.readiness',
    reads: ['NodePool', 'EC2NodeClass'],
    reconcile,
    register(enqueue) {
      for (const p of ctx.cluster.nodePools()) enqueue(p.obj.metadata.name!);
      return ctx.cluster.subscribe((c) => {
        if (c.kind === 'NodePool' && c.type === 'upsert') enqueue(c.name);
        if (c.kind === 'EC2NodeClass')
          for (const p of ctx.cluster.nodePools())
            if (nodeClassRefOf(p.obj)?.name === c.name) enqueue(p.obj.metadata.name!);
      });
    },
  };
}
