// What disruption needs to know about pods: eviction cost (docs/karpenter/disruption.md §1.5), the do-not-disrupt
// annotation with its duration form (§1.3 step 9), which pods must move when their node goes, and which of
// them may move now.
import type { Pod, PodDisruptionBudget, Snapshot, StateNode } from '../domain/types.ts';
import { parseGoDuration } from '../api/duration.ts';
import { DISRUPTED_TAINT_KEY, DO_NOT_DISRUPT_ANNOTATION } from '../scheduling/labels.ts';
import {
  isActive,
  isMirrorPod,
  isOwnedByDaemonSet,
  isStatefulSetPod,
  isTerminal,
  isTerminating,
  podKey,
  podValidationError,
} from '../scheduling/pods.ts';
import { tolerates } from '../scheduling/taints.ts';
import { cacheSlot, type ModelCaches } from '../model/caches.ts';
import { pdbsOf } from './pdb.ts';

export const POD_DELETION_COST_ANNOTATION = 'controller.kubernetes.io/pod-deletion-cost';

/**
 * EvictionCost (Karpenter's pkg/utils/disruption): 1 + deletionCost/2^27 + priority/2^25, clamped to
 * [-10, 10]. An annotation that does not parse as a number is ignored.
 */
export function evictionCost(pod: Pod): number {
  let cost = 1;
  const raw = pod.annotations[POD_DELETION_COST_ANNOTATION];
  if (raw !== undefined) {
    const v = parseGoFloat(raw);
    if (v !== undefined) cost += v / 2 ** 27;
  }
  if (pod.priority !== undefined) cost += pod.priority / 2 ** 25;
  return Math.min(10, Math.max(-10, cost));
}

/** strconv.ParseFloat's accepted forms, roughly: decimal and exponent notation, optional sign. */
function parseGoFloat(s: string): number | undefined {
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s.trim())) return undefined;
  const v = Number(s);
  return Number.isFinite(v) ? v : undefined;
}

/**
 * Pods that must be rescheduled if the node goes: active, or a terminating StatefulSet pod (its replacement
 * cannot start until it is gone), and neither DaemonSet-owned nor mirror pods.
 */
export function reschedulablePods(node: StateNode, caches?: ModelCaches): readonly Pod[] {
  return caches ? caches.memo(RESCHEDULABLE, node.pods, () => reschedulableOf(node.pods)) : reschedulableOf(node.pods);
}

const reschedulableOf = (pods: readonly Pod[]): readonly Pod[] =>
  pods.filter(
    (p) =>
      (isActive(p) || (isTerminating(p) && !isTerminal(p) && isStatefulSetPod(p))) &&
      !isOwnedByDaemonSet(p) &&
      !isMirrorPod(p),
  );

// Per pods array (immutable snapshot data): simulations of one disruption call ask for the same nodes' pods many times.
const RESCHEDULABLE = cacheSlot<readonly Pod[], readonly Pod[]>('reschedulable pods');

/** RescheduleDisruptionCost: 1 per node plus the positive eviction costs of its reschedulable pods. */
export function rescheduleDisruptionCost(pods: readonly Pod[]): number {
  let c = 1;
  for (const p of pods) c += Math.max(0, evictionCost(p));
  return c;
}

/** LifetimeRemaining = clamp((expireAfter − age) / expireAfter, 0, 1); 1 with no expiry. */
function lifetimeRemaining(node: StateNode, expireAfter: number | null | undefined, now: number): number {
  if (expireAfter === null || expireAfter === undefined || expireAfter <= 0) return 1;
  const age = now - node.creationTimestamp;
  return Math.min(1, Math.max(0, (expireAfter - age) / expireAfter));
}

/** The legacy, lifetime-weighted DisruptionCost (Σ over all bound pods); static deprovisioning uses it. */
export function lifetimeDisruptionCost(node: StateNode, expireAfter: number | null | undefined, now: number): number {
  const lr = lifetimeRemaining(node, expireAfter, now);
  return node.pods.reduce((acc, p) => acc + evictionCost(p) * lr, 0);
}

type DoNotDisrupt =
  | { readonly state: 'none' }
  | { readonly state: 'active'; readonly value: string; readonly until?: number }
  | { readonly state: 'elapsed'; readonly value: string; readonly since: number }
  | { readonly state: 'invalid'; readonly value: string };

/**
 * The pod's do-not-disrupt protection at `now`: "true" is always active; a positive Go duration is active
 * while now − startTime < duration (always, when the start time is unknown); anything else is invalid and
 * ignored (Karpenter then publishes InvalidDoNotDisruptAnnotation on the pod).
 */
export function doNotDisrupt(pod: Pod, now: number): DoNotDisrupt {
  const value = pod.annotations[DO_NOT_DISRUPT_ANNOTATION];
  if (value === undefined) return { state: 'none' };
  if (value === 'true') return { state: 'active', value };
  const d = parseGoDuration(value);
  if (!d.ok || d.ns <= 0n) return { state: 'invalid', value };
  const ms = Number(d.ns) / 1e6;
  if (pod.startTime === undefined) return { state: 'active', value };
  const until = pod.startTime + ms;
  return now < until ? { state: 'active', value, until } : { state: 'elapsed', value, since: until };
}

/** Why the pods of a node block graceful disruption, as Karpenter words it, or undefined. */
export type PodBlock =
  | { readonly kind: 'do-not-disrupt'; readonly pod: Pod; readonly message: string; readonly until?: number }
  | { readonly kind: 'pdb-multiple'; readonly pod: Pod; readonly pdbs: readonly string[]; readonly message: string }
  | { readonly kind: 'pdb'; readonly pod: Pod; readonly pdb: string; readonly message: string };

const DISRUPTED_NO_SCHEDULE = { key: DISRUPTED_TAINT_KEY, effect: 'NoSchedule' as const };

/** Evictable for the PDB check: active, not tolerating the disrupted taint, not a mirror pod. */
function evictable(pod: Pod): boolean {
  return isActive(pod) && !pod.tolerations.some((t) => tolerates(t, DISRUPTED_NO_SCHEDULE)) && !isMirrorPod(pod);
}

/**
 * The first pod that blocks disruption of the node: do-not-disrupt first, then PDBs (§1.3 step 9).
 * Remembered per pods array, PDB list and time, like movablePods: every disruption call builds candidate
 * sets over the same mostly unchanged nodes.
 */
export function podBlock(
  node: StateNode,
  pdbs: readonly PodDisruptionBudget[],
  now: number,
  caches?: ModelCaches,
): PodBlock | undefined {
  const m = caches?.get(BLOCKS, node.pods);
  if (m && m.pdbs === pdbs && m.now === now) return m.block;
  const block = firstBlock(node, pdbs, now);
  caches?.set(BLOCKS, node.pods, { pdbs, now, block });
  return block;
}

const BLOCKS = cacheSlot<
  readonly Pod[],
  { readonly pdbs: readonly PodDisruptionBudget[]; readonly now: number; readonly block: PodBlock | undefined }
>('pod blocks');

function firstBlock(node: StateNode, pdbs: readonly PodDisruptionBudget[], now: number): PodBlock | undefined {
  for (const p of node.pods) {
    if (!isActive(p)) continue;
    const d = doNotDisrupt(p, now);
    if (d.state === 'active') {
      return {
        kind: 'do-not-disrupt',
        pod: p,
        message: `pod has "${DO_NOT_DISRUPT_ANNOTATION}" annotation (Pod=${podKey(p)})`,
        ...(d.until !== undefined ? { until: d.until } : {}),
      };
    }
  }
  for (const p of node.pods) {
    if (!evictable(p) || doNotDisrupt(p, now).state === 'active') continue;
    const matching = pdbsOf(p, pdbs);
    if (matching.length > 1) {
      const keys = matching.map((b) => `${b.namespace}/${b.name}`);
      return {
        kind: 'pdb-multiple',
        pod: p,
        pdbs: keys,
        message: `eviction does not support multiple PDBs (PodDisruptionBudget(s)=[${keys.join(' ')}])`,
      };
    }
    const b = matching[0];
    if (!b || b.disruptionsAllowed > 0) continue;
    if (b.unhealthyPodEvictionPolicy === 'AlwaysAllow' && p.ready === false) continue;
    const key = `${b.namespace}/${b.name}`;
    return { kind: 'pdb', pod: p, pdb: key, message: `pdb prevents pod evictions (PodDisruptionBudget=[${key}])` };
  }
  return undefined;
}

/**
 * The node's reschedulable pods that may move now (not do-not-disrupt, no fully blocking PDB). Remembered per
 * pods array, PDB list and time: a disruption call simulates the same nodes many times.
 */
export function movablePods(
  node: StateNode,
  pdbs: readonly PodDisruptionBudget[],
  now: number,
  caches?: ModelCaches,
): readonly Pod[] {
  const m = caches?.get(MOVABLE, node.pods);
  if (m && m.pdbs === pdbs && m.now === now) return m.pods;
  const pods = reschedulablePods(node, caches).filter((p) => currentlyReschedulable(p, pdbs, now));
  caches?.set(MOVABLE, node.pods, { pdbs, now, pods });
  return pods;
}

const MOVABLE = cacheSlot<
  readonly Pod[],
  { readonly pdbs: readonly PodDisruptionBudget[]; readonly now: number; readonly pods: readonly Pod[] }
>('movable pods');

/**
 * Whether a pod may move right now in a simulation (§2.7 step 3b): not protected by do-not-disrupt and not
 * covered by a PDB that blocks every eviction by its spec (maxUnavailable 0 / "0%", minAvailable "100%").
 */
export function currentlyReschedulable(pod: Pod, pdbs: readonly PodDisruptionBudget[], now: number): boolean {
  if (doNotDisrupt(pod, now).state === 'active') return false;
  return !pdbsOf(pod, pdbs).some(fullyBlocking);
}

function fullyBlocking(b: PodDisruptionBudget): boolean {
  const mu = b.maxUnavailable;
  if (mu !== undefined && (mu === 0 || mu === '0' || mu === '0%')) return true;
  return b.minAvailable === '100%';
}

/** Pending pods the provisioner would act on (§2.7 step 3a). */
export function provisionablePending(s: Snapshot): Pod[] {
  return s.pendingPods.filter(
    (p) =>
      p.nodeName === undefined &&
      isActive(p) &&
      p.unschedulable === true &&
      p.nominatedNodeName === undefined &&
      !isOwnedByDaemonSet(p) &&
      !isMirrorPod(p) &&
      podValidationError(p) === undefined,
  );
}
