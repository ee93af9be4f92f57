// Topology in the solver (docs/karpenter/scheduling.md §3): per-group domain counters instead of scans over placed
// pods. A group on a label key counts pods per interned value of that key; a hostname group counts pods per
// host (existing nodes first, then NodeClaims as they are created). Semantics mirror
// engine/solver/reference/topology.ts exactly, including its deterministic tie rules (lowest count, then
// the smallest value, values being interned in sorted order).
import {
  G_COUNTS, G_FILTER, G_FLAGS, G_KEY, G_MAX_SKEW, G_MIN_DOMAINS, G_REGISTERED, G_TOL, G_TYPE, GF_HAS_FILTER,
  GF_HONOR_TAINTS, GF_INVERSE, GT_AFFINITY, GT_ANTI, GT_SPREAD, V_INV_OWNED, V_INV_SELECT, V_OWNED, V_RECORD, V_STRICT,
} from '../abi';
import { TOPOLOGY_GROUPS, EXISTING_NODES, POD_VERSIONS, grp, keyWords, listAt, listLen, ver } from './layout';
import { bits, compatible, complement, defined, narrow, setAddr } from './sets';
import { NEVER, NOT_NOW } from './verdict';

class Group {
  counts: Int32Array;
  registered: Uint32Array;
  total: i32 = 0;
  /** Bumped whenever a count changes: a failure against this group can only turn into success after. */
  epoch: i32 = 0;
  constructor(readonly type: i32, readonly key: i32, readonly maxSkew: i32, readonly minDomains: i32, readonly flags: i32, n: i32, words: i32) {
    this.counts = new Int32Array(n);
    this.registered = new Uint32Array(words);
  }
}

let groups: Array<Group> = new Array<Group>();
/** selects[v * TOPOLOGY_GROUPS + g] = 1 when group g's selector selects version v's pod. */
let selects: Uint8Array = new Uint8Array(0);
let filterMemo: Map<u64, bool> = new Map<u64, bool>();
let vals: usize = 0;
let hostCap: i32 = 0;

export function resetTopology(maxWords: i32): void {
  groups = new Array<Group>();
  quickKeys = new Int32Array(8);
  quickMasks = new Array<Uint32Array>();
  quickSlots = 0;
  filterMemo = new Map<u64, bool>();
  vals = heap.alloc(<usize>(max(maxWords, 1) << 2));
  hostCap = EXISTING_NODES + 64;
  for (let g = 0; g < TOPOLOGY_GROUPS; g++) {
    const key = grp(g, G_KEY);
    const hostname = key < 0;
    const n = hostname ? hostCap : (keyWords(key) << 5);
    const gr = new Group(grp(g, G_TYPE), key, grp(g, G_MAX_SKEW), grp(g, G_MIN_DOMAINS), grp(g, G_FLAGS), n, hostname ? 0 : keyWords(key));
    const cl = grp(g, G_COUNTS);
    const cn = listLen(cl);
    for (let i = 0; i < cn; i++) {
      const c = listAt(cl, i);
      unchecked((gr.counts[i] = c));
      gr.total += c;
    }
    const rl = grp(g, G_REGISTERED);
    const rn = listLen(rl);
    for (let i = 0; i < rn; i++) {
      const v = listAt(rl, i);
      unchecked((gr.registered[v >>> 5] |= 1 << (v & 31)));
    }
    groups.push(gr);
  }
  selects = new Uint8Array(POD_VERSIONS * TOPOLOGY_GROUPS);
  for (let v = 0; v < POD_VERSIONS; v++) {
    const l = ver(v, V_RECORD);
    const n = listLen(l);
    for (let i = 0; i < n; i++) unchecked((selects[v * TOPOLOGY_GROUPS + listAt(l, i)] = 1));
  }
}

/** Makes room for host id h in every hostname group (NodeClaims get ids EXISTING_NODES, EXISTING_NODES + 1, ...). */
export function ensureHost(h: i32): void {
  if (h < hostCap) return;
  let cap = hostCap;
  while (cap <= h) cap <<= 1;
  for (let g = 0; g < groups.length; g++) {
    const gr = unchecked(groups[g]);
    if (gr.key >= 0) continue;
    const next = new Int32Array(cap);
    next.set(gr.counts);
    gr.counts = next;
  }
  hostCap = cap;
}

@inline function isSet(b: Uint32Array, v: i32): bool {
  return (unchecked(b[v >>> 5]) & (1 << (v & 31))) != 0;
}

@inline function bitAt(p: usize, v: i32): bool {
  return (load<u32>(p + (<usize>(v >>> 5) << 2)) & (1 << (v & 31))) != 0;
}

/** Does a node with set `s` and taint set `ts` take part in spread group g (node inclusion policies)? */
function counts(g: i32, s: i32, ts: i32): bool {
  const fl = unchecked(groups[g]).flags;
  if ((fl & GF_HONOR_TAINTS) != 0 && listAt(grp(g, G_TOL), ts) == 0) return false;
  if ((fl & GF_HAS_FILTER) == 0) return true;
  const key: u64 = (<u64>g << 40) | (<u64>s << 8) | 0;
  if (filterMemo.has(key)) return filterMemo.get(key);
  const l = grp(g, G_FILTER);
  const n = listLen(l);
  let ok = n == 0;
  const ps = setAddr(s);
  for (let i = 0; i < n && !ok; i++) if (compatible(ps, setAddr(listAt(l, i)), false)) ok = true;
  filterMemo.set(key, ok);
  return ok;
}

/** Whether value v is allowed by set s's requirement on key k (undefined key: everything). */
@inline function allows(s: usize, k: i32, v: i32): bool {
  return !defined(s, k) || bitAt(bits(s, k), v);
}

/** Candidate domain v for a group on key k given the node's set (§3.4 "candidates"). */
@inline function candidate(gr: Group, ns: usize, k: i32, v: i32): bool {
  if (defined(ns, k) && !complement(ns, k)) return bitAt(bits(ns, k), v);
  return isSet(gr.registered, v) && allows(ns, k, v);
}

/**
 * Applies every group constraining version `v` to a placement on set `s` (taint set `ts`, host `h`).
 * Returns the narrowed set id, or NOT_NOW when a constraint cannot be met now (§3.3), or NEVER when it never can on
 * this node: anti-affinity only loses room as counts grow and the node's domains narrow, and a hostname
 * spread counts against a global minimum of 0; spread elsewhere and affinity may become satisfiable later.
 */
export function addRequirements(v: i32, s: i32, ts: i32, h: i32): i32 {
  let cur = s;
  const owned = ver(v, V_OWNED);
  const no = listLen(owned);
  for (let i = 0; i < no; i++) {
    cur = apply(listAt(owned, i), v, cur, ts, h);
    if (cur < 0) return cur;
  }
  const inv = ver(v, V_INV_SELECT);
  const ni = listLen(inv);
  for (let i = 0; i < ni; i++) {
    const g = listAt(inv, i);
    if (unchecked(groups[g]).total == 0) continue;
    cur = apply(g, v, cur, ts, h);
    if (cur < 0) return cur;
  }
  return cur;
}

function apply(g: i32, v: i32, s: i32, ts: i32, h: i32): i32 {
  const gr = unchecked(groups[g]);
  if (gr.type == GT_SPREAD && !counts(g, s, ts)) return s;
  const self = unchecked(selects[v * TOPOLOGY_GROUPS + g]) != 0 ? 1 : 0;
  if (gr.key < 0) {
    const c = unchecked(gr.counts[h]);
    if (gr.type == GT_SPREAD) return c + self <= gr.maxSkew ? s : NEVER;
    if (gr.type == GT_ANTI) return c == 0 ? s : NEVER;
    if (c > 0) return s;
    return self == 1 && gr.total == 0 ? s : NOT_NOW;
  }
  const k = gr.key;
  const ps = setAddr(ver(v, V_STRICT));
  const ns = setAddr(s);
  const w = keyWords(k);
  memory.fill(vals, 0, <usize>(w << 2));
  const nv = w << 5;
  let any = false;
  if (gr.type == GT_SPREAD) {
    let minC: i32 = i32.MAX_VALUE;
    let eligible = 0;
    for (let d = 0; d < nv; d++) {
      if (!isSet(gr.registered, d) || !allows(ps, k, d)) continue;
      eligible++;
      const c = unchecked(gr.counts[d]);
      if (c < minC) minC = c;
    }
    if (eligible == 0 || (gr.minDomains > 0 && eligible < gr.minDomains)) minC = 0;
    let best = -1;
    let bestC: i32 = i32.MAX_VALUE;
    for (let d = 0; d < nv; d++) {
      if (!candidate(gr, ns, k, d)) continue;
      const c = unchecked(gr.counts[d]) + self;
      if (c - minC <= gr.maxSkew && c < bestC) {
        best = d;
        bestC = c;
      }
    }
    if (best < 0) return NOT_NOW;
    store<u32>(vals + (<usize>(best >>> 5) << 2), 1 << (best & 31));
    return narrow(s, k, vals);
  }
  if (gr.type == GT_ANTI) {
    for (let d = 0; d < nv; d++) {
      if (!candidate(gr, ns, k, d) || unchecked(gr.counts[d]) != 0 || !allows(ps, k, d)) continue;
      store<u32>(vals + (<usize>(d >>> 5) << 2), load<u32>(vals + (<usize>(d >>> 5) << 2)) | (1 << (d & 31)));
      any = true;
    }
    return any ? narrow(s, k, vals) : NEVER;
  }
  // affinity
  let anyInPod = false;
  for (let d = 0; d < nv; d++) {
    if (unchecked(gr.counts[d]) > 0 && isSet(gr.registered, d) && allows(ps, k, d)) {
      anyInPod = true;
      break;
    }
  }
  for (let d = 0; d < nv; d++) {
    if (!candidate(gr, ns, k, d) || unchecked(gr.counts[d]) == 0 || !allows(ps, k, d)) continue;
    store<u32>(vals + (<usize>(d >>> 5) << 2), load<u32>(vals + (<usize>(d >>> 5) << 2)) | (1 << (d & 31)));
    any = true;
  }
  if (any) return narrow(s, k, vals);
  if (self == 1 && !anyInPod) {
    for (let d = 0; d < nv; d++) {
      if (!candidate(gr, ns, k, d) || !allows(ps, k, d)) continue;
      store<u32>(vals + (<usize>(d >>> 5) << 2), 1 << (d & 31));
      return narrow(s, k, vals);
    }
  }
  return NOT_NOW;
}

@inline function increment(gr: Group, d: i32): void {
  unchecked((gr.counts[d] += 1));
  gr.total += 1;
  gr.epoch += 1;
  if (gr.key >= 0) unchecked((gr.registered[d >>> 5] |= 1 << (d & 31)));
}

/** Records version v's pod placed on a node with final set s, taint set ts, host h (§3.7). */
export function record(v: i32, s: i32, ts: i32, h: i32): void {
  const rl = ver(v, V_RECORD);
  const n = listLen(rl);
  const ns = setAddr(s);
  const ps = setAddr(ver(v, V_STRICT));
  for (let i = 0; i < n; i++) {
    const g = listAt(rl, i);
    const gr = unchecked(groups[g]);
    if ((gr.flags & GF_INVERSE) != 0) continue;
    if (gr.type == GT_SPREAD && !counts(g, s, ts)) continue;
    if (gr.key < 0) {
      increment(gr, h);
      continue;
    }
    const k = gr.key;
    const nv = keyWords(k) << 5;
    if (gr.type == GT_ANTI) {
      for (let d = 0; d < nv; d++) if (candidate(gr, ns, k, d) && allows(ps, k, d)) increment(gr, d);
      continue;
    }
    if (!defined(ns, k) || complement(ns, k)) continue;
    let single = -1;
    let many = false;
    for (let d = 0; d < nv; d++) {
      if (!bitAt(bits(ns, k), d)) continue;
      if (single >= 0) { many = true; break; }
      single = d;
    }
    if (single >= 0 && !many) increment(gr, single);
  }
  const inv = ver(v, V_INV_OWNED);
  const ni = listLen(inv);
  for (let i = 0; i < ni; i++) {
    const gr = unchecked(groups[listAt(inv, i)]);
    if (gr.key < 0) {
      increment(gr, h);
      continue;
    }
    const k = gr.key;
    const nv = keyWords(k) << 5;
    for (let d = 0; d < nv; d++) if (candidate(gr, ns, k, d)) increment(gr, d);
  }
}

/**
 * A number that changes whenever a group constraining version v changes its counts (the sum of their
 * epochs, which only grow). A topology failure of v on a node stays a failure while it is unchanged.
 */
export function versionEpoch(v: i32): i32 {
  let e = 0;
  const owned = ver(v, V_OWNED);
  const no = listLen(owned);
  for (let i = 0; i < no; i++) e += unchecked(groups[listAt(owned, i)]).epoch;
  const inv = ver(v, V_INV_SELECT);
  const ni = listLen(inv);
  for (let i = 0; i < ni; i++) e += unchecked(groups[listAt(inv, i)]).epoch;
  return e;
}

// ---- quick rejection ----
// Before evaluating a NodeClaim in full, a pod attempt computes, per label key its topology groups use, the
// domains it may land in (the same rules as apply() for a node whose domain is already decided); a node
// whose requirement on that key is a concrete value set outside those domains fails without further work.
// This turns the common failure of zone-constrained pods on zone-decided NodeClaims into a few loads.
let quickKeys: Int32Array = new Int32Array(8);
let quickMasks: Array<Uint32Array> = new Array<Uint32Array>();
let quickSlots: i32 = 0;

function quickSlot(k: i32): Uint32Array {
  for (let i = 0; i < quickSlots; i++) if (unchecked(quickKeys[i]) == k) return unchecked(quickMasks[i]);
  if (quickSlots == quickKeys.length) {
    const n = new Int32Array(quickSlots * 2);
    n.set(quickKeys);
    quickKeys = n;
  }
  unchecked((quickKeys[quickSlots] = k));
  const w = keyWords(k);
  const m = new Uint32Array(w);
  m.fill(0xffffffff);
  if (quickSlots < quickMasks.length) unchecked((quickMasks[quickSlots] = m));
  else quickMasks.push(m);
  quickSlots++;
  return m;
}

function quickGroup(g: i32, v: i32): void {
  const gr = unchecked(groups[g]);
  if (gr.key < 0) return;
  // A spread group's node filter depends on the node: leave those to the full check.
  if (gr.type == GT_SPREAD && (gr.flags & (GF_HAS_FILTER | GF_HONOR_TAINTS)) != 0) return;
  const k = gr.key;
  const ps = setAddr(ver(v, V_STRICT));
  const self = unchecked(selects[v * TOPOLOGY_GROUPS + g]) != 0 ? 1 : 0;
  const nv = keyWords(k) << 5;
  const m = quickSlot(k);
  const allowed = new Uint32Array(keyWords(k));
  if (gr.type == GT_SPREAD) {
    let minC: i32 = i32.MAX_VALUE;
    let eligible = 0;
    for (let d = 0; d < nv; d++) {
      if (!isSet(gr.registered, d) || !allows(ps, k, d)) continue;
      eligible++;
      minC = min(minC, unchecked(gr.counts[d]));
    }
    if (eligible == 0 || (gr.minDomains > 0 && eligible < gr.minDomains)) minC = 0;
    for (let d = 0; d < nv; d++) if (unchecked(gr.counts[d]) + self - minC <= gr.maxSkew) unchecked((allowed[d >>> 5] |= 1 << (d & 31)));
  } else if (gr.type == GT_ANTI) {
    for (let d = 0; d < nv; d++) if (unchecked(gr.counts[d]) == 0 && allows(ps, k, d)) unchecked((allowed[d >>> 5] |= 1 << (d & 31)));
  } else {
    let anyInPod = false;
    for (let d = 0; d < nv; d++) {
      if (unchecked(gr.counts[d]) > 0 && isSet(gr.registered, d) && allows(ps, k, d)) anyInPod = true;
    }
    const bootstrap = self == 1 && !anyInPod;
    for (let d = 0; d < nv; d++) {
      if (!allows(ps, k, d)) continue;
      if (unchecked(gr.counts[d]) > 0 || bootstrap) unchecked((allowed[d >>> 5] |= 1 << (d & 31)));
    }
  }
  for (let i = 0; i < m.length; i++) unchecked((m[i] &= allowed[i]));
}

/** Prepares quick rejection for one attempt of version v (call once per attempt). */
export function prepareQuick(v: i32): void {
  quickSlots = 0;
  const owned = ver(v, V_OWNED);
  const no = listLen(owned);
  for (let i = 0; i < no; i++) quickGroup(listAt(owned, i), v);
  const inv = ver(v, V_INV_SELECT);
  const ni = listLen(inv);
  for (let i = 0; i < ni; i++) {
    const g = listAt(inv, i);
    if (unchecked(groups[g]).total > 0) quickGroup(g, v);
  }
}

/** The prepared attempt's keys and allowed-domain masks (quick.ts reads them to reject a word of claims at once). */
export function quickCount(): i32 {
  return quickSlots;
}
export function quickKey(i: i32): i32 {
  return unchecked(quickKeys[i]);
}
export function quickMask(i: i32): Uint32Array {
  return unchecked(quickMasks[i]);
}

/** True when set s certainly fails the prepared attempt's topology (a decided domain outside the allowed ones). */
export function quickReject(s: i32): bool {
  if (quickSlots == 0) return false;
  const ps = setAddr(s);
  for (let i = 0; i < quickSlots; i++) {
    const k = unchecked(quickKeys[i]);
    if (!defined(ps, k) || complement(ps, k)) continue;
    const m = unchecked(quickMasks[i]);
    const b = bits(ps, k);
    let hit = false;
    for (let x = 0; x < m.length; x++) {
      if ((load<u32>(b + (<usize>x << 2)) & unchecked(m[x])) != 0) {
        hit = true;
        break;
      }
    }
    if (!hit) return true;
  }
  return false;
}
