// Draining a node (docs/karpenter/disruption.md §5.6 step 5 and the eviction queue): which pods still hold the node
// up, which of them go now, and how. Pods whose grace period would overrun the termination deadline are
// deleted outright (bypassing PDBs and do-not-disrupt); the rest are evicted through the Eviction API in
// Karpenter's four tiers (non-critical, non-critical DaemonSet, critical, critical DaemonSet), one tier
// per pass. do-not-disrupt pods are waited for, never evicted; a PDB that says no (429) is retried.
import {
  durationMs,
  isMirrorPod,
  isOwnedByDaemonSet,
  isTerminal,
  tolerates,
  type Pod,
} from '../../../../engine/index.ts';
import { DISRUPTED_TAINT, DO_NOT_DISRUPT_ANNOTATION } from '../../keys.ts';

const STUCK_TERMINATING_MS = 60_000;

const CRITICAL = new Set(['system-cluster-critical', 'system-node-critical']);

/** Pods that keep the node from being drained. */
export function waitingPods(pods: readonly Pod[], now: number): Pod[] {
  return pods.filter((p) => {
    if (isTerminal(p) || isMirrorPod(p)) return false;
    if (p.tolerations.some((t) => tolerates(t, DISRUPTED_TAINT))) return false;
    if (p.deletionTimestamp !== undefined && now > p.deletionTimestamp + STUCK_TERMINATING_MS) return false;
    return true;
  });
}

/** Pods to delete now because the termination deadline leaves no time for a graceful exit. */
export function forceDeletions(pods: readonly Pod[], deadline: number | undefined, now: number): Pod[] {
  if (deadline === undefined) return [];
  return pods.filter((p) => {
    if (p.deletionTimestamp !== undefined) return p.deletionTimestamp > deadline;
    const grace = (p.terminationGracePeriodSeconds ?? 30) * 1000;
    return now > deadline - grace;
  });
}

/** The first non-empty eviction tier among pods not yet terminating. */
export function evictionTier(pods: readonly Pod[]): Pod[] {
  const live = pods.filter((p) => p.deletionTimestamp === undefined);
  const critical = (p: Pod) => CRITICAL.has(p.priorityClassName ?? '');
  const tiers = [
    live.filter((p) => !critical(p) && !isOwnedByDaemonSet(p)),
    live.filter((p) => !critical(p) && isOwnedByDaemonSet(p)),
    live.filter((p) => critical(p) && !isOwnedByDaemonSet(p)),
    live.filter((p) => critical(p) && isOwnedByDaemonSet(p)),
  ];
  return tiers.find((t) => t.length > 0) ?? [];
}

/**
 * The pod's karpenter.sh/do-not-disrupt protection is active: "true", or a duration not yet elapsed since
 * the pod started (docs/karpenter/disruption.md §1.3 step 9). Other values protect nothing.
 */
export function doNotDisrupt(p: Pod, now: number): boolean {
  const v = p.annotations[DO_NOT_DISRUPT_ANNOTATION];
  if (v === undefined) return false;
  if (v === 'true') return true;
  const ms = durationMs(v);
  if (ms === undefined || ms <= 0) return false;
  return p.startTime === undefined || now - p.startTime < ms;
}
