// Pod classes: pods that the solver cannot tell apart (same namespace, requests, labels, node selector,
// affinity, tolerations, spread constraints, host ports, volume topology, resource claims and boundary verdict) share one
// class, so validation, relaxation chains and topology membership are computed once per class.
//
// A class is found by a cheap structural hash, then confirmed by a structural comparison with the class's
// first pod. Nothing is serialised: building a string key per pod (and hashing it in a Map) cost more than
// the whole search for 100,000 small pods.
import type { Pod } from '../domain/types.ts';
import { cacheSlot, keepEntry, keptEntry, type ModelCaches } from '../model/caches.ts';
import type { PodError } from '../model/types.ts';
import { optsOutOfKarpenter, podValidationError, queueOrder } from '../scheduling/pods.ts';

const F64 = new Float64Array(1);
const U32 = new Uint32Array(F64.buffer);

function mix(h: number, x: number): number {
  h = Math.imul(h ^ x, 0x01000193);
  return h ^ (h >>> 15);
}

/** Length and a few characters: enough to spread classes; equality is checked afterwards. */
function hashString(h: number, s: string): number {
  const n = s.length;
  h = mix(h, n);
  if (n > 0) h = mix(h, s.charCodeAt(0) | (s.charCodeAt(n - 1) << 16));
  if (n > 2) h = mix(h, s.charCodeAt(n >> 1) | (s.charCodeAt(n - 2) << 16));
  return h;
}

function hashNumber(h: number, x: number): number {
  if ((x | 0) === x) return mix(h, x);
  F64[0] = x;
  return mix(mix(h, U32[0]!), U32[1]!);
}

function hashValue(h: number, v: unknown, depth: number): number {
  switch (typeof v) {
    case 'string':
      return hashString(h, v);
    case 'number':
      return hashNumber(h, v);
    case 'boolean':
      return mix(h, v ? 3 : 2);
    case 'undefined':
      return mix(h, 1);
    case 'object': {
      if (v === null) return mix(h, 0);
      if (depth > 6) return mix(h, 7);
      if (Array.isArray(v)) {
        h = mix(h, 0x5b + v.length);
        for (const x of v) h = hashValue(h, x, depth + 1);
        return h;
      }
      const o = v as Record<string, unknown>;
      for (const k in o) h = hashValue(hashString(h, k), o[k], depth + 1);
      return mix(h, 0x7b);
    }
    default:
      return mix(h, 9);
  }
}

/** Deep structural equality of plain data (objects, arrays, strings, numbers, booleans). Key order counts. */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!same(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const k in x) {
    if (!(k in y) || !same(x[k], y[k])) return false;
    n++;
  }
  for (const _ in y) n--;
  return n === 0;
}

function sameRecord(x: Readonly<Record<string, unknown>>, y: Readonly<Record<string, unknown>>): boolean {
  if (x === y) return true;
  let n = 0;
  for (const k in x) {
    if (x[k] !== y[k] || (x[k] === undefined && !(k in y))) return false;
    n++;
  }
  for (const _ in y) n--;
  return n === 0;
}

function emptyOr<T>(a: readonly T[] | undefined): readonly T[] | undefined {
  return a === undefined || a.length === 0 ? undefined : a;
}

/**
 * Same pod class: the same shape (below) and the same requests. Requests first: replicas of one shape with
 * other sizes are the common near miss.
 */
export function samePodClass(a: Pod, b: Pod): boolean {
  return sameRecord(a.requests, b.requests) && samePodShape(a, b);
}

/**
 * Same shape: everything a class compares except requests. Topology (which groups a pod declares and
 * which select it) and node requirements are functions of the shape, so they are worked out once per shape;
 * the karpenter suite's 20,000 diverse pods are 3,198 classes but 113 shapes.
 */
function samePodShape(a: Pod, b: Pod): boolean {
  return (
    a.namespace === b.namespace &&
    a.ignoredReason === b.ignoredReason &&
    sameRecord(a.labels, b.labels) &&
    sameRecord(a.nodeSelector, b.nodeSelector) &&
    same(a.affinity, b.affinity) &&
    same(emptyOr(a.tolerations), emptyOr(b.tolerations)) &&
    same(emptyOr(a.topologySpreadConstraints), emptyOr(b.topologySpreadConstraints)) &&
    same(emptyOr(a.hostPorts), emptyOr(b.hostPorts)) &&
    same(emptyOr(a.volumeRequirements), emptyOr(b.volumeRequirements)) &&
    // DRA inputs go to the reference solver today; compared anyway so a pod's claims never merge classes.
    same(emptyOr(a.resourceClaims), emptyOr(b.resourceClaims)) &&
    same(emptyOr(a.containerClaims), emptyOr(b.containerClaims))
  );
}

/** What is remembered of a pod: its hashes, and the representative it was last found equal to. */
interface Memo {
  readonly hash: number;
  readonly shape: number;
  sameAs: Pod | undefined;
  /** The shape representative it was last found to share a shape with (PodShapes). */
  sameShape: Pod | undefined;
}

/** A memo kept in the caches: it holds for every pod with the very parts of `pod` (samePartsAs). */
interface SharedMemo extends Memo {
  readonly pod: Pod;
}

// Pods are immutable snapshot data and disruption simulations (and a warm cluster model's decisions) classify
// the same pods solve after solve, so their hashes are computed once, and the next solve over the same pods
// usually meets the same representative first and skips the deep comparison. The memo lives in the caller's
// ModelCaches (nothing is written onto the pod); without caches it lives for one solve. In the caches it is kept
// by the pod's parts, not by the pod: a warm model's pods of one workload share their parts (engine/cluster/
// intern.ts), so they share one memo, where a memo per pod object was an entry for every pod of the cluster.
// Everything a memo says is a function of the parts, so it holds for each pod that has them.
const POD_CLASS = cacheSlot<object, SharedMemo[]>('pod class');

/** The fields a class compares, the very same in both pods (strings equal, parts the same objects). */
function samePartsAs(a: Pod, b: Pod): boolean {
  if (a === b) return true;
  return (
    a.requests === b.requests &&
    a.nodeSelector === b.nodeSelector &&
    a.namespace === b.namespace &&
    a.affinity === b.affinity &&
    a.tolerations === b.tolerations &&
    a.topologySpreadConstraints === b.topologySpreadConstraints &&
    a.hostPorts === b.hostPorts &&
    a.volumeRequirements === b.volumeRequirements &&
    a.ignoredReason === b.ignoredReason &&
    a.resourceClaims === b.resourceClaims &&
    a.containerClaims === b.containerClaims
  );
}

function hashes(p: Pod): Memo {
  const shape = shapeHash(p);
  let h = shape;
  for (const k in p.requests) h = hashNumber(hashString(h, k), p.requests[k]!);
  // 30 bits: small integers stay unboxed, in the memo and as Map keys (a boxed key per lookup cost more).
  return { hash: mix(h, 10) & 0x3fffffff, shape: shape & 0x3fffffff, sameAs: undefined, sameShape: undefined };
}

/** The pod's memo: from the caches when given (kept by its labels, then its other parts), else made for this solve. */
class Memos {
  private readonly local = new Map<Pod, Memo>();
  constructor(private readonly caches?: ModelCaches) {}

  of(p: Pod): Memo {
    if (this.caches) {
      const byLabels = this.caches.map(POD_CLASS);
      const kept = byLabels.get(p.labels);
      if (kept)
        for (let i = 0; i < kept.length; i++)
          if (samePartsAs(kept[i]!.pod, p)) {
            this.caches.record(POD_CLASS, true);
            return kept[i]!;
          }
      this.caches.record(POD_CLASS, false);
      const h = hashes(p);
      const m: SharedMemo = { hash: h.hash, shape: h.shape, sameAs: undefined, sameShape: undefined, pod: p };
      return keepEntry(this.caches, POD_CLASS, p.labels, m);
    }
    let m = this.local.get(p);
    if (m === undefined) this.local.set(p, (m = hashes(p)));
    return m;
  }

  /** The memo when the pod has one (the parts of snapshot pods seen before), without making one (nor counting). */
  peek(p: Pod): Memo | undefined {
    if (!this.caches) return this.local.get(p);
    const kept = this.caches.map(POD_CLASS).get(p.labels);
    if (kept) for (const m of kept) if (samePartsAs(m.pod, p)) return m;
    return undefined;
  }
}

function shapeHash(p: Pod): number {
  let h = hashString(0x811c9dc5, p.namespace);
  for (const k in p.labels) h = hashString(hashString(h, k), p.labels[k]!);
  h = mix(h, 2);
  for (const k in p.nodeSelector) h = hashString(hashString(h, k), p.nodeSelector[k]!);
  if (p.affinity) h = hashValue(mix(h, 3), p.affinity, 0);
  if (p.tolerations.length) h = hashValue(mix(h, 4), p.tolerations, 0);
  if (p.topologySpreadConstraints.length) h = hashValue(mix(h, 5), p.topologySpreadConstraints, 0);
  if (p.hostPorts.length) h = hashValue(mix(h, 6), p.hostPorts, 0);
  if (p.volumeRequirements?.length) h = hashValue(mix(h, 7), p.volumeRequirements, 0);
  if (p.ignoredReason) h = hashString(mix(h, 8), p.ignoredReason);
  if (p.resourceClaims?.length) h = hashValue(mix(h, 9), p.resourceClaims, 0);
  return h;
}

/** Assigns class numbers (0, 1, ... in order of first appearance) to pods. */
export class PodClassifier {
  private readonly buckets = new Map<number, number[]>();
  /** The first pod of each class. */
  readonly representatives: Pod[] = [];
  private readonly memos: Memos;

  constructor(caches?: ModelCaches) {
    this.memos = new Memos(caches);
  }

  classOf(p: Pod): number {
    const m = this.memos.of(p);
    let bucket = this.buckets.get(m.hash);
    if (bucket === undefined) {
      bucket = [];
      this.buckets.set(m.hash, bucket);
    } else {
      for (const c of bucket) {
        const rep = this.representatives[c]!;
        if (m.sameAs === rep) return c;
        if (samePodClass(rep, p)) {
          m.sameAs = rep;
          return c;
        }
      }
    }
    const c = this.representatives.length;
    this.representatives.push(p);
    bucket.push(c);
    return c;
  }
}

/**
 * One pod per shape (see samePodShape), for the pods of one solve: `shapeOf(p)` is the first pod seen with
 * p's shape (p itself when it is the first). Relaxed versions of pods are new objects every solve and are
 * hashed when asked; snapshot pods reuse their memoised hash and the representative they last matched.
 */
export class PodShapes {
  private readonly buckets = new Map<number, Pod[]>();
  private readonly known = new Map<Pod, Pod>();
  private readonly memos: Memos;

  constructor(caches?: ModelCaches) {
    this.memos = new Memos(caches);
  }

  shapeOf(p: Pod): Pod {
    let s = this.known.get(p);
    if (s !== undefined) return s;
    const m = this.memos.peek(p);
    const h = m?.shape ?? shapeHash(p) & 0x3fffffff;
    let bucket = this.buckets.get(h);
    if (bucket === undefined) this.buckets.set(h, (bucket = []));
    // The representative this pod matched last solve, when it leads its shape in this one too: no deep comparison.
    if (m?.sameShape !== undefined && bucket.includes(m.sameShape)) s = m.sameShape;
    else {
      s = bucket.find((q) => samePodShape(q, p));
      if (s === undefined) bucket.push((s = p));
      if (m) m.sameShape = s;
    }
    this.known.set(p, s);
    return s;
  }
}

// Whether a pod opts out of Karpenter or is invalid reads only its node selector, affinity and boundary verdict
// (ignoredReason): kept across solves by those (nodeSelector, then affinity, then the reason), not by the pod
// leading its shape, which changes from one simulation to the next.
const VERDICTS = cacheSlot<
  object,
  { readonly affinity: Pod['affinity']; readonly ignoredReason: string | undefined; readonly verdict: string }[]
>('pod verdicts');

function verdictOf(shape: Pod, caches: ModelCaches | undefined): 'ok' | 'skip' | string {
  const compute = () => (optsOutOfKarpenter(shape) ? 'skip' : (podValidationError(shape) ?? 'ok'));
  if (!caches) return compute();
  const { nodeSelector, affinity, ignoredReason } = shape;
  const hit = keptEntry(
    caches,
    VERDICTS,
    nodeSelector,
    (e) => e.affinity === affinity && e.ignoredReason === ignoredReason,
  );
  return (hit ?? keepEntry(caches, VERDICTS, nodeSelector, { affinity, ignoredReason, verdict: compute() })).verdict;
}

/**
 * The pods of a solve in queue order with their class numbers, and one representative per class; pods that
 * opt out of Karpenter are dropped and invalid ones set aside with their reason (validated once per class).
 *
 * Pods are classified in input order (the order they sit in memory: reading 20,000 pods in queue order
 * missed the cache on most of them), then classes are numbered by first appearance in queue order with that
 * first pod as representative: the same numbers and representatives as classifying in queue order, since
 * "same class" is an equivalence. `shapes` learns the representatives' shapes (the encoder reuses it).
 */
export function queueClasses(
  all: readonly Pod[],
  shapes: PodShapes = new PodShapes(),
  caches?: ModelCaches,
): { pods: Pod[]; keys: number[]; representatives: Pod[]; ignored: PodError[] } {
  const classifier = new PodClassifier(caches);
  // Validation reads only shape fields (ignoredReason, node selector, affinity): once per shape.
  const shapeVerdict = new Map<Pod, 'ok' | 'skip' | string>();
  const inputClass = new Int32Array(all.length);
  for (let i = 0; i < all.length; i++) inputClass[i] = classifier.classOf(all[i]!);
  const number = new Int32Array(classifier.representatives.length).fill(-1);
  const ignored: PodError[] = [];
  const representatives: Pod[] = [];
  const classVerdict: Array<'ok' | 'skip' | string> = [];
  const pods: Pod[] = [];
  const keys: number[] = [];
  for (const i of queueOrder(all)) {
    const p = all[i]!;
    let key = number[inputClass[i]!]!;
    if (key < 0) {
      key = number[inputClass[i]!] = representatives.length;
      representatives.push(p);
      const shape = shapes.shapeOf(p);
      let v = shapeVerdict.get(shape);
      if (v === undefined) shapeVerdict.set(shape, (v = verdictOf(shape, caches)));
      classVerdict.push(v);
    }
    const verdict = classVerdict[key]!;
    if (verdict === 'skip') continue;
    if (verdict !== 'ok') {
      ignored.push({ uid: p.uid, reason: verdict });
      continue;
    }
    pods.push(p);
    keys.push(key);
  }
  return { pods, keys, representatives: representatives.filter((_, c) => classVerdict[c] === 'ok'), ignored };
}
