// What node repair decides from a Node's conditions and the cloud provider's repair policies (Karpenter core
// pkg/controllers/node/health, main after v1.14.1): pure functions, so the reconcile reads as steps.
import type { Condition } from '../../../../engine/index.ts';
import type { RepairPolicy } from '../../../cloudprovider/types.ts';

/** Up to this share of a NodePool's nodes (rounded up, like a PDB's maxUnavailable) may be repaired at once. */
export const ALLOWED_UNHEALTHY_PERCENT = 20;
/** How long a blocked repair waits before it looks again. */
export const BLOCKED_RETRY_MS = 5 * 60_000;

/** An unhealthy condition and when its toleration runs out. */
export interface Unhealthy {
  readonly condition: Condition;
  readonly policy: RepairPolicy;
  /** ms since the epoch: the condition's transition time plus the policy's toleration. */
  readonly repairAt: number;
}

/**
 * The condition a repair policy matches whose toleration runs out first, or undefined for a healthy node. A
 * condition without a transition time counts from the epoch, as Karpenter's zero time does.
 */
export function unhealthyCondition(
  policies: readonly RepairPolicy[],
  conditions: readonly Condition[],
): Unhealthy | undefined {
  let best: Unhealthy | undefined;
  for (const policy of policies) {
    const condition = conditions.find((c) => c.type === policy.conditionType);
    if (!condition || condition.status !== policy.conditionStatus) continue;
    const repairAt = (condition.lastTransitionTime ?? 0) + policy.tolerationMs;
    if (!best || repairAt < best.repairAt) best = { condition, policy, repairAt };
  }
  return best;
}

/** A node counts as unhealthy for the threshold as soon as any policy matches, whatever its toleration. */
export const matchesAnyPolicy = (policies: readonly RepairPolicy[], conditions: readonly Condition[]): boolean =>
  policies.some((p) => conditions.some((c) => c.type === p.conditionType && c.status === p.conditionStatus));

/** How many of `total` nodes may be unhealthy with repair still going ahead: 20 %, rounded up. */
export const allowedUnhealthy = (total: number): number => Math.ceil((total * ALLOWED_UNHEALTHY_PERCENT) / 100);

/** Karpenter's label form of a condition type (pretty.ToSnakeCase): AcceleratedHardwareReady -> accelerated_hardware_ready. */
export function snakeCase(s: string): string {
  return s
    .replace(/(.)([A-Z][a-z]+)/g, '$1_$2')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase();
}
