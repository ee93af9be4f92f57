// The NodeClaim as the lifecycle sub-reconcilers change it during one reconcile: they edit this draft,
// and reconcile.ts writes the differences back in two patches (metadata, then status), as Karpenter does.
import type { NodeClaimInfo } from '../../../../engine/index.ts';
import { conditionsOf, withCondition, type KubeCondition } from '../../../operator/conditions.ts';
import type { KubeObject } from '../../../operator/kube.ts';

export interface Draft {
  readonly obj: KubeObject;
  readonly info: NodeClaimInfo;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  status: Record<string, unknown>;
  conditions: KubeCondition[];
}

export function draftOf(obj: KubeObject, info: NodeClaimInfo): Draft {
  return {
    obj,
    info,
    labels: { ...(obj.metadata.labels ?? {}) },
    annotations: { ...(obj.metadata.annotations ?? {}) },
    status: { ...(obj.status ?? {}) },
    conditions: conditionsOf(obj).map((c) => ({ ...c })),
  };
}

export function setCondition(
  d: Draft,
  type: string,
  status: KubeCondition['status'],
  now: number,
  reason?: string,
  message?: string,
): void {
  d.conditions = withCondition(d.conditions, type, status, now, {
    ...(reason !== undefined ? { reason } : {}),
    ...(message !== undefined ? { message } : {}),
    ...(d.obj.metadata.generation !== undefined ? { generation: d.obj.metadata.generation } : {}),
  });
}

export function condition(d: Draft, type: string): KubeCondition | undefined {
  return d.conditions.find((c) => c.type === type);
}

export const conditionIs = (d: Draft, type: string, status: KubeCondition['status']): boolean =>
  condition(d, type)?.status === status;

/** What a sub-reconciler tells the lifecycle: go on, stop here (with a requeue), or the NodeClaim is gone. */
export type Step =
  | { readonly kind: 'continue' }
  | { readonly kind: 'stop'; readonly requeueMs?: number }
  | { readonly kind: 'deleted' };

export const next: Step = { kind: 'continue' };
export const stop = (requeueMs?: number): Step =>
  requeueMs === undefined ? { kind: 'stop' } : { kind: 'stop', requeueMs };
export const deleted: Step = { kind: 'deleted' };
