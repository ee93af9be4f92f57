// The FailedScheduling event: one builder for every place that tells a pod it could not be scheduled.
import { podTarget, type Event } from '../../operator/events.ts';

/** How long a pod hears no other FailedScheduling after one (Karpenter's PodFailedToScheduleEvent: 5 min). */
export const FAILED_SCHEDULING_DEDUPE_MS = 5 * 60_000;

/**
 * A pod's FailedScheduling event: why this pass could not place it. Karpenter builds it with one function,
 * PodFailedToScheduleEvent (sigs.k8s.io/karpenter pkg/controllers/provisioning/scheduling/events.go, v1), whose
 * dedupe value is the pod's UID alone, for 5 minutes: within that window a pod hears one reason, even when a
 * later pass fails it for another (a NodePool limit reached at create time, a NodePool that became not ready).
 */
export function failedSchedulingEvent(
  pod: { readonly name: string; readonly namespace: string; readonly uid: string },
  reason: string,
): Event {
  return {
    involved: podTarget(pod),
    type: 'Warning',
    reason: 'FailedScheduling',
    message: `Failed to schedule pod, ${reason}`,
    dedupeValues: [pod.uid],
    dedupeTimeoutMs: FAILED_SCHEDULING_DEDUPE_MS,
  };
}
