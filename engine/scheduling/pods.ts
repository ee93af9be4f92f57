// What the scheduler derives from a pod: its requirements under a preference policy, its validity for
// Karpenter, selector matching, and the small predicates the disruption code shares.
import type {
  LabelSelector,
  Labels,
  NodeSelectorRequirement,
  Pod,
  PreferencePolicy,
  Requirements,
} from '../domain/types.ts';
import { NODEPOOL_LABEL, schedulingRestrictedReason } from './labels.ts';
import { add, fromLabels, fromSelector, operatorOf } from './requirements.ts';

/** The preferred node affinity terms, heaviest first (stable). */
function preferredTermsByWeight(pod: Pod) {
  const prefs = pod.affinity?.nodeAffinity?.preferred ?? [];
  return [...prefs].sort((a, b) => b.weight - a.weight);
}

/**
 * Pod requirements (§1.11): nodeSelector, then (Respect only) the heaviest preferred node-affinity term,
 * then the first required term. Karpenter tries required terms one at a time; relaxation drops the first.
 */
export function podRequirements(pod: Pod, policy: PreferencePolicy): Requirements {
  let reqs = fromLabels(pod.nodeSelector);
  if (policy === 'Respect') {
    const heaviest = preferredTermsByWeight(pod)[0];
    if (heaviest) reqs = add(reqs, ...heaviest.preference.matchExpressions.map(fromSelector));
  }
  const required = pod.affinity?.nodeAffinity?.required?.[0];
  if (required) reqs = add(reqs, ...required.matchExpressions.map(fromSelector));
  return reqs;
}

/** The same without preferences: used for topology domains, daemonset compatibility and under Ignore. */
export function strictPodRequirements(pod: Pod): Requirements {
  return podRequirements(pod, 'Ignore');
}

/** A reason Karpenter ignores the pod before scheduling (§1.10), or undefined. */
export function podValidationError(pod: Pod): string | undefined {
  if (pod.ignoredReason) return pod.ignoredReason;
  const check = (r: NodeSelectorRequirement, where: string): string | undefined => {
    const restricted = schedulingRestrictedReason(r.key);
    if (restricted && r.key !== NODEPOOL_LABEL) return `${where}: ${restricted}`;
    if (!['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'].includes(r.operator))
      return `${where}: operator ${r.operator} is not supported for pods`;
    if (r.operator === 'In' && r.values.length === 0) return `${where}: operator In needs at least one value`;
    if ((r.operator === 'Gt' || r.operator === 'Lt') && (r.values.length !== 1 || !/^\d+$/.test(r.values[0]!)))
      return `${where}: operator ${r.operator} needs one non-negative integer value`;
    return undefined;
  };
  for (const [k, v] of Object.entries(pod.nodeSelector)) {
    const e = check({ key: k, operator: 'In', values: [v] }, `nodeSelector ${k}`);
    if (e) return e;
  }
  const terms = pod.affinity?.nodeAffinity?.required ?? [];
  for (const [i, term] of terms.entries()) {
    if (term.matchFields?.length)
      return `required node affinity term ${i} uses matchFields, which Karpenter does not support`;
    for (const r of term.matchExpressions) {
      const e = check(r, `required node affinity term ${i} key ${r.key}`);
      if (e) return e;
    }
  }
  for (const [i, p] of (pod.affinity?.nodeAffinity?.preferred ?? []).entries()) {
    for (const r of p.preference.matchExpressions) {
      const e = check(r, `preferred node affinity term ${i} key ${r.key}`);
      if (e) return e;
    }
  }
  return undefined;
}

/** The pod opted out of Karpenter with `karpenter.sh/nodepool DoesNotExist`. */
export function optsOutOfKarpenter(pod: Pod): boolean {
  const r = strictPodRequirements(pod).get(NODEPOOL_LABEL);
  return r !== undefined && operatorOf(r) === 'DoesNotExist';
}

export function isTerminal(pod: Pod): boolean {
  return pod.phase === 'Succeeded' || pod.phase === 'Failed';
}

export function isTerminating(pod: Pod): boolean {
  return pod.deletionTimestamp !== undefined;
}

export function isActive(pod: Pod): boolean {
  return !isTerminal(pod) && !isTerminating(pod);
}

export function isOwnedByDaemonSet(pod: Pod): boolean {
  return pod.owner?.kind === 'DaemonSet';
}

export function isMirrorPod(pod: Pod): boolean {
  return pod.owner?.kind === 'Node' || pod.annotations['kubernetes.io/config.mirror'] !== undefined;
}

export function isStatefulSetPod(pod: Pod): boolean {
  return pod.owner?.kind === 'StatefulSet';
}

export function podKey(pod: Pod): string {
  return `${pod.namespace}/${pod.name}`;
}

/** Label selector matching. An undefined selector matches nothing; {} matches everything. */
export function selectorMatches(sel: LabelSelector | undefined, labels: Labels): boolean {
  if (!sel) return false;
  // for-in over the plain matchLabels object: Object.entries allocated a pair per label on this hot path.
  const ml = sel.matchLabels;
  if (ml) for (const k in ml) if (labels[k] !== ml[k]) return false;
  for (const e of sel.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const v = labels[e.key];
    switch (e.operator) {
      case 'In':
        if (!has || !e.values.includes(v!)) return false;
        break;
      case 'NotIn':
        if (has && e.values.includes(v!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}

/**
 * The scheduling queue order (§2.3): CPU descending, memory descending, older first, then uid.
 * `creationIndex` breaks ties between pods created in the same millisecond when the caller knows their order.
 */
export function compareQueueOrder(a: Pod, b: Pod): number {
  const ca = a.requests['cpu'] ?? 0;
  const cb = b.requests['cpu'] ?? 0;
  if (ca !== cb) return cb - ca;
  const ma = a.requests['memory'] ?? 0;
  const mb = b.requests['memory'] ?? 0;
  if (ma !== mb) return mb - ma;
  if (a.creationTimestamp !== b.creationTimestamp) return a.creationTimestamp - b.creationTimestamp;
  return a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0;
}

/** Dense ranks of `xs` in ascending order (equal values share a rank). */
function ranks(xs: Float64Array): { rank: Uint32Array; count: number } {
  const few = fewRanks(xs);
  if (few) return few;
  const inOrder = nonDecreasingRanks(xs);
  if (inOrder) return inOrder;
  const sorted = xs.slice().sort();
  let count = 0;
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) sorted[count++] = sorted[i]!;
  const distinct = sorted.subarray(0, count);
  // A binary search in the distinct values: a Map keyed by doubles cost more for 20,000 creation times.
  const rank = new Uint32Array(xs.length);
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i]!;
    let lo = 0;
    let hi = count - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (distinct[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    rank[i] = lo;
  }
  return { rank, count };
}

/**
 * ranks() when `xs` takes at most 16 distinct values (pod sizes: a handful of CPU and memory requests): a
 * scan against the distinct values seen so far instead of sorting every value. Undefined when there are more.
 */
function fewRanks(xs: Float64Array): { rank: Uint32Array; count: number } | undefined {
  const seen = new Float64Array(16);
  let count = 0;
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i]!;
    let k = 0;
    while (k < count && seen[k] !== x) k++;
    if (k < count) continue;
    // NaN equals nothing, so it would be "new" every time: the sorting path handles it.
    if (count === 16 || Number.isNaN(x)) return undefined;
    seen[count++] = x;
  }
  const distinct = seen.subarray(0, count).sort();
  const rank = new Uint32Array(xs.length);
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i]!;
    let k = 0;
    while (distinct[k] !== x) k++;
    rank[i] = k;
  }
  return { rank, count };
}

/**
 * ranks() when `xs` never decreases (creation times of pods listed in the order they were created): one pass, no
 * sort. Undefined otherwise (or on NaN).
 */
function nonDecreasingRanks(xs: Float64Array): { rank: Uint32Array; count: number } | undefined {
  const rank = new Uint32Array(xs.length);
  let k = 0;
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i]!;
    if (Number.isNaN(x)) return undefined;
    if (i > 0 && x !== xs[i - 1]!) {
      if (x < xs[i - 1]!) return undefined;
      k++;
    }
    rank[i] = k;
  }
  return { rank, count: xs.length === 0 ? 0 : k + 1 };
}

/**
 * Positions 0..n-1 by `key` ascending, equal keys in position order (a counting sort: `count` buckets). The same
 * order as sorting by (key, position).
 */
function stableByKey(key: Uint32Array, count: number): Uint32Array {
  const start = new Uint32Array(count + 1);
  for (let i = 0; i < key.length; i++) start[key[i]! + 1]!++;
  for (let k = 0; k < count; k++) start[k + 1]! += start[k]!;
  const order = new Uint32Array(key.length);
  for (let i = 0; i < key.length; i++) order[start[key[i]!]!++] = i;
  return order;
}

/** Whether `rank` never decreases with the position. */
function nonDecreasing(rank: Uint32Array): boolean {
  for (let i = 1; i < rank.length; i++) if (rank[i]! < rank[i - 1]!) return false;
  return true;
}

/**
 * `compareQueueOrder`'s order, fast for 100,000 pods: CPU desc, memory desc, creation asc, uid asc. The first three keys become one rank and
 * the pods are sorted by (rank, position) with the engine's numeric sort; only runs of equal rank (pods of
 * one size created in the same instant) are sorted again, by uid.
 */
export function sortQueueOrder(pods: readonly Pod[]): Pod[] {
  const order = queueOrder(pods);
  const out = new Array<Pod>(pods.length);
  for (let i = 0; i < order.length; i++) out[i] = pods[order[i]!]!;
  return out;
}

/** The same order as positions in `pods` (the pod at queue position i is pods[order[i]]). */
export function queueOrder(pods: readonly Pod[]): Uint32Array {
  const n = pods.length;
  const created = new Float64Array(n);
  const cpu = new Float64Array(n);
  const mem = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const p = pods[i]!;
    cpu[i] = -(p.requests['cpu'] ?? 0);
    mem[i] = -(p.requests['memory'] ?? 0);
    created[i] = p.creationTimestamp;
  }
  // (cpu, memory) pairs: few distinct values, ranked with a comparator over the distinct pairs only.
  const cpuRank = ranks(cpu);
  const memRank = ranks(mem);
  // (cpu rank, memory rank) as one integer: already ordered, equal exactly for equal pairs.
  const sizeRank = { rank: new Uint32Array(n), count: cpuRank.count * memRank.count };
  for (let i = 0; i < n; i++) sizeRank.rank[i] = cpuRank.rank[i]! * memRank.count + memRank.rank[i]!;
  const createdRank = ranks(created);
  const order =
    sizeRank.count <= n && nonDecreasing(createdRank.rank)
      ? stableByKey(sizeRank.rank, sizeRank.count)
      : sortedBySizeAndAge(sizeRank, createdRank);
  breakTiesByUid(pods, order, sizeRank.rank, createdRank.rank);
  return order;
}

/** Positions by (size rank, creation rank, position), with the engine's numeric sort where the keys are exact. */
function sortedBySizeAndAge(
  sizeRank: { rank: Uint32Array; count: number },
  createdRank: { rank: Uint32Array; count: number },
): Uint32Array {
  const n = sizeRank.rank.length;
  const keys = new Float64Array(n);
  const exact = sizeRank.count * createdRank.count * n < 2 ** 52;
  if (exact) {
    for (let i = 0; i < n; i++) keys[i] = (sizeRank.rank[i]! * createdRank.count + createdRank.rank[i]!) * n + i;
    keys.sort();
  }
  const order = new Uint32Array(n);
  if (exact) {
    for (let i = 0; i < n; i++) order[i] = keys[i]! % n;
  } else {
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort((a, b) => sizeRank.rank[a]! - sizeRank.rank[b]! || createdRank.rank[a]! - createdRank.rank[b]!);
  }
  return order;
}

/** Runs of equal size and creation rank (pods of one size created in the same instant) sorted by uid. */
function breakTiesByUid(
  pods: readonly Pod[],
  order: Uint32Array,
  sizeRank: Uint32Array,
  createdRank: Uint32Array,
): void {
  const n = order.length;
  const byUid = (a: number, b: number) => (pods[a]!.uid < pods[b]!.uid ? -1 : pods[a]!.uid > pods[b]!.uid ? 1 : 0);
  for (let i = 0; i < n; ) {
    let j = i + 1;
    const si = sizeRank[order[i]!]!;
    const ci = createdRank[order[i]!]!;
    while (j < n && sizeRank[order[j]!] === si && createdRank[order[j]!] === ci) j++;
    if (j - i > 1) order.subarray(i, j).sort(byUid);
    i = j;
  }
}
