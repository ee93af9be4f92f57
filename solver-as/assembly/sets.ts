// Dense requirement sets and their algebra (docs/karpenter/scheduling.md §1), over interned values.
//
// A set is LABEL_KEYS records (flags, minValues, gte, lte) followed by the value bits of every key. Sets are
// hash-consed: equal sets share one id, so the memo tables below (merge results, compatible instance
// types per template) hit whenever the same combination of requirements comes up again, which is the
// common case (10,000 replicas of a Deployment produce the same merges over and over).
import {
  SF_COMPLEMENT, SF_DEFINED, SF_EXCL, SREC_BYTES, SREC_FLAGS, SREC_GTE, SREC_LTE, SREC_MINV, KEYF_WELL_KNOWN,
} from '../abi';
import { LABEL_KEYS, INPUT_SETS, SET_BYTES, SET_WORDS, inputSet, keyBitOff, keyFlags, keyWords } from './layout';

let derived: Array<usize> = new Array<usize>();
let hashHead: Map<u32, i32> = new Map<u32, i32>();
let nextSame: Array<i32> = new Array<i32>();
let hasMinV: Array<bool> = new Array<bool>();
let mergeMemo: Map<u64, i32> = new Map<u64, i32>();
let scratch: usize = 0;

export function resetSets(): void {
  derived = new Array<usize>();
  hashHead = new Map<u32, i32>();
  nextSame = new Array<i32>();
  hasMinV = new Array<bool>();
  mergeMemo = new Map<u64, i32>();
  scratch = heap.alloc(<usize>SET_BYTES);
  canonical = new Array<i32>(INPUT_SETS);
  for (let i = 0; i < INPUT_SETS; i++) {
    nextSame.push(-1);
    hasMinV.push(computeHasMinV(inputSet(i)));
  }
  for (let i = 0; i < INPUT_SETS; i++) unchecked((canonical[i] = intern(i)));
}

/** Input set id -> the id of the first equal set (dedupes equal label sets of existing nodes). */
let canonical: Array<i32> = new Array<i32>();
export function canonicalInput(i: i32): i32 {
  return unchecked(canonical[i]);
}

@inline export function setAddr(id: i32): usize {
  return id < INPUT_SETS ? inputSet(id) : unchecked(derived[id - INPUT_SETS]);
}

// ---- record fields ----
@inline function rec(s: usize, k: i32): usize {
  return s + <usize>(k * SREC_BYTES);
}
@inline function flags(s: usize, k: i32): i32 {
  return load<i32>(rec(s, k) + SREC_FLAGS);
}
@inline export function defined(s: usize, k: i32): bool {
  return (flags(s, k) & SF_DEFINED) != 0;
}
@inline export function complement(s: usize, k: i32): bool {
  return (flags(s, k) & SF_COMPLEMENT) != 0;
}
@inline export function minValues(s: usize, k: i32): i32 {
  return load<i32>(rec(s, k) + SREC_MINV);
}
@inline function gte(s: usize, k: i32): f64 {
  return load<f64>(rec(s, k) + SREC_GTE);
}
@inline function lte(s: usize, k: i32): f64 {
  return load<f64>(rec(s, k) + SREC_LTE);
}
/** Address of key k's value bits in set s. */
@inline export function bits(s: usize, k: i32): usize {
  return s + <usize>(LABEL_KEYS * SREC_BYTES) + (<usize>keyBitOff(k) << 2);
}

export function hasValue(s: usize, k: i32, v: i32): bool {
  if (!defined(s, k)) return true;
  return (load<u32>(bits(s, k) + (<usize>(v >>> 5) << 2)) & (1 << (v & 31))) != 0;
}

function anyBit(s: usize, k: i32): bool {
  const p = bits(s, k);
  const w = keyWords(k);
  for (let i = 0; i < w; i++) if (load<u32>(p + (<usize>i << 2)) != 0) return true;
  return false;
}

function anyCommon(pa: usize, pb: usize, w: i32): bool {
  for (let i = 0; i < w; i++) if ((load<u32>(pa + (<usize>i << 2)) & load<u32>(pb + (<usize>i << 2))) != 0) return true;
  return false;
}

/** The requirement reports NotIn or DoesNotExist (§1.4), the exception Intersects allows. */
export function notInOrDne(s: usize, k: i32): bool {
  const f = flags(s, k);
  if ((f & SF_COMPLEMENT) != 0) return (f & SF_EXCL) != 0;
  return !anyBit(s, k);
}

/** HasIntersection for key k of two sets where both define k (§1.6). */
function keyIntersects(a: usize, b: usize, k: i32): bool {
  const lo = max(gte(a, k), gte(b, k));
  const hi = min(lte(a, k), lte(b, k));
  if (lo > hi) return false;
  if (complement(a, k) && complement(b, k)) return true;
  return anyCommon(bits(a, k), bits(b, k), keyWords(k));
}

/** A.Intersects(B) over keys both define (§1.8). */
function intersects(a: usize, b: usize): bool {
  for (let k = 0; k < LABEL_KEYS; k++) {
    if (!defined(a, k) || !defined(b, k)) continue;
    if (keyIntersects(a, b, k)) continue;
    if (notInOrDne(a, k) && notInOrDne(b, k)) continue;
    return false;
  }
  return true;
}

/** A.Compatible(B); with allowWellKnown, B's well-known keys may be undefined in A (§1.8). */
export function compatible(a: usize, b: usize, allowWellKnown: bool): bool {
  for (let k = 0; k < LABEL_KEYS; k++) {
    if (!defined(b, k) || defined(a, k)) continue;
    if (allowWellKnown && (keyFlags(k) & KEYF_WELL_KNOWN) != 0) continue;
    if (notInOrDne(b, k)) continue;
    return false;
  }
  return intersects(a, b);
}

/** dst = a ∩ b (§1.5), in canonical form (undefined keys zeroed, absent bounds ±Inf). */
function intersectInto(dst: usize, a: usize, b: usize): void {
  for (let k = 0; k < LABEL_KEYS; k++) {
    const da = defined(a, k);
    const db = defined(b, k);
    const w = keyWords(k);
    const rd = rec(dst, k);
    const bd = bits(dst, k);
    if (!da && !db) {
      memory.fill(rd, 0, SREC_BYTES);
      store<f64>(rd + SREC_GTE, -Infinity);
      store<f64>(rd + SREC_LTE, Infinity);
      memory.fill(bd, 0, <usize>(w << 2));
      continue;
    }
    if (!db) {
      memory.copy(rd, rec(a, k), SREC_BYTES);
      memory.copy(bd, bits(a, k), <usize>(w << 2));
      continue;
    }
    if (!da) {
      memory.copy(rd, rec(b, k), SREC_BYTES);
      memory.copy(bd, bits(b, k), <usize>(w << 2));
      continue;
    }
    const ca = complement(a, k);
    const cb = complement(b, k);
    const lo = max(gte(a, k), gte(b, k));
    const hi = min(lte(a, k), lte(b, k));
    const mv = max(minValues(a, k), minValues(b, k));
    store<i32>(rd + SREC_MINV, mv);
    if (lo > hi) {
      store<i32>(rd + SREC_FLAGS, SF_DEFINED);
      store<f64>(rd + SREC_GTE, -Infinity);
      store<f64>(rd + SREC_LTE, Infinity);
      memory.fill(bd, 0, <usize>(w << 2));
      continue;
    }
    const pa = bits(a, k);
    const pb = bits(b, k);
    for (let i = 0; i < w; i++) {
      const off = <usize>i << 2;
      store<u32>(bd + off, load<u32>(pa + off) & load<u32>(pb + off));
    }
    if (ca && cb) {
      const excl = ((flags(a, k) | flags(b, k)) & SF_EXCL) != 0;
      store<i32>(rd + SREC_FLAGS, SF_DEFINED | SF_COMPLEMENT | (excl ? SF_EXCL : 0));
      store<f64>(rd + SREC_GTE, lo);
      store<f64>(rd + SREC_LTE, hi);
    } else {
      store<i32>(rd + SREC_FLAGS, SF_DEFINED);
      store<f64>(rd + SREC_GTE, -Infinity);
      store<f64>(rd + SREC_LTE, Infinity);
    }
  }
}

/** dst = s with key k narrowed to the concrete value set `vals` (word array of keyWords(k) words). */
function narrowInto(dst: usize, s: usize, k: i32, vals: usize): void {
  memory.copy(dst, s, <usize>SET_BYTES);
  const rd = rec(dst, k);
  const bd = bits(dst, k);
  const w = keyWords(k);
  const wasDefined = defined(s, k);
  for (let i = 0; i < w; i++) {
    const off = <usize>i << 2;
    const cur = wasDefined ? load<u32>(bd + off) : 0xffffffff;
    store<u32>(bd + off, cur & load<u32>(vals + off));
  }
  const mv = wasDefined ? minValues(s, k) : 0;
  store<i32>(rd + SREC_FLAGS, SF_DEFINED);
  store<i32>(rd + SREC_MINV, mv);
  store<f64>(rd + SREC_GTE, -Infinity);
  store<f64>(rd + SREC_LTE, Infinity);
}

function hashAt(p: usize): u32 {
  let h: u32 = 2166136261;
  const n = SET_BYTES >> 2;
  for (let i = 0; i < n; i++) {
    h ^= load<u32>(p + (<usize>i << 2));
    h *= 16777619;
  }
  return h;
}

function computeHasMinV(p: usize): bool {
  for (let k = 0; k < LABEL_KEYS; k++) if (defined(p, k) && minValues(p, k) > 0) return true;
  return false;
}

export function setHasMinValues(id: i32): bool {
  return unchecked(hasMinV[id]);
}

/** Returns the id of the set equal to the one at `id` (itself if new). For inputs at startup. */
function intern(id: i32): i32 {
  const p = setAddr(id);
  const h = hashAt(p);
  if (hashHead.has(h)) {
    let c = hashHead.get(h);
    while (c >= 0) {
      if (memory.compare(setAddr(c), p, <usize>SET_BYTES) == 0) return c;
      c = unchecked(nextSame[c]);
    }
    unchecked((nextSame[id] = hashHead.get(h)));
  }
  hashHead.set(h, id);
  return id;
}

/** Interns the scratch set: returns an existing id or copies it into a new derived set. */
function internScratch(): i32 {
  const h = hashAt(scratch);
  if (hashHead.has(h)) {
    let c = hashHead.get(h);
    while (c >= 0) {
      if (memory.compare(setAddr(c), scratch, <usize>SET_BYTES) == 0) return c;
      c = unchecked(nextSame[c]);
    }
  }
  const p = heap.alloc(<usize>SET_BYTES);
  memory.copy(p, scratch, <usize>SET_BYTES);
  const id = INPUT_SETS + derived.length;
  derived.push(p);
  nextSame.push(hashHead.has(h) ? hashHead.get(h) : -1);
  hasMinV.push(computeHasMinV(p));
  hashHead.set(h, id);
  return id;
}

export const MODE_STRICT: i32 = 0;
export const MODE_WELL_KNOWN: i32 = 1;
export const MODE_PLAIN: i32 = 2;

/**
 * If a (node or claim side) is compatible with b (pod side) in the given mode, the id of a ∩ b; else -1.
 * MODE_PLAIN skips the compatibility test (an intersection the caller already knows is allowed).
 */
export function mergeCompatible(a: i32, b: i32, mode: i32): i32 {
  // Equal input sets (pod classes with the same requirements) share one canonical id, and so one memo entry.
  if (a < INPUT_SETS) a = unchecked(canonical[a]);
  if (b < INPUT_SETS) b = unchecked(canonical[b]);
  const key: u64 = (<u64>a << 34) | (<u64>b << 2) | <u64>mode;
  if (mergeMemo.has(key)) return mergeMemo.get(key);
  let r: i32 = -1;
  const pa = setAddr(a);
  const pb = setAddr(b);
  if (mode == MODE_PLAIN || compatible(pa, pb, mode == MODE_WELL_KNOWN)) {
    intersectInto(scratch, pa, pb);
    r = internScratch();
  }
  mergeMemo.set(key, r);
  return r;
}

/** Set `a` with key k narrowed to the value bits at `vals`. */
export function narrow(a: i32, k: i32, vals: usize): i32 {
  narrowInto(scratch, setAddr(a), k, vals);
  return internScratch();
}

export { SET_WORDS };
