// Status conditions on objects held as JSON (NodeClaim, NodePool, EC2NodeClass), the way Karpenter's
// operatorpkg status library keeps them: setting a condition to the status it already has keeps its
// lastTransitionTime, which liveness timeouts and consolidateAfter depend on.
import { toKubeTime } from './clock.ts';
import type { KubeObject } from './kube.ts';

export interface KubeCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

export function conditionsOf(obj: KubeObject | undefined): KubeCondition[] {
  const c = obj?.status?.['conditions'];
  return Array.isArray(c) ? (c as KubeCondition[]) : [];
}

export function findCondition(obj: KubeObject | undefined, type: string): KubeCondition | undefined {
  return conditionsOf(obj).find((c) => c.type === type);
}

export function isTrue(obj: KubeObject | undefined, type: string): boolean {
  return findCondition(obj, type)?.status === 'True';
}

/** ms since the epoch of the condition's last transition, if recorded. */
export function transitionTime(c: KubeCondition | undefined): number | undefined {
  const t = c?.lastTransitionTime ? Date.parse(c.lastTransitionTime) : NaN;
  return Number.isNaN(t) ? undefined : t;
}

/**
 * Returns the list with `type` set (added or replaced). The transition time moves only when the status
 * changes; reason and message always take the new values (an empty reason becomes the status itself,
 * as the API requires a reason).
 */
export function withCondition(
  list: readonly KubeCondition[],
  type: string,
  status: KubeCondition['status'],
  now: number,
  opts: { reason?: string; message?: string; generation?: number } = {},
): KubeCondition[] {
  const prior = list.find((c) => c.type === type);
  const next: KubeCondition = {
    type,
    status,
    reason: opts.reason ?? (status === 'True' ? type : status === 'False' ? `Not${type}` : 'AwaitingReconciliation'),
    message: opts.message ?? '',
    lastTransitionTime:
      prior && prior.status === status && prior.lastTransitionTime ? prior.lastTransitionTime : toKubeTime(now),
    ...(opts.generation !== undefined ? { observedGeneration: opts.generation } : {}),
  };
  const out = list.filter((c) => c.type !== type);
  out.push(next);
  return out;
}

/** The list without `type`. */
export function withoutCondition(list: readonly KubeCondition[], type: string): KubeCondition[] {
  return list.filter((c) => c.type !== type);
}

/** Two condition lists hold the same conditions (order ignored). */
export function sameConditions(a: readonly KubeCondition[], b: readonly KubeCondition[]): boolean {
  if (a.length !== b.length) return false;
  const key = (c: KubeCondition): string =>
    JSON.stringify([
      c.type,
      c.status,
      c.reason ?? '',
      c.message ?? '',
      c.lastTransitionTime ?? '',
      c.observedGeneration ?? null,
    ]);
  const set = new Set(a.map(key));
  return b.every((c) => set.has(key(c)));
}
