// Karpenter's provisioning loop (spec/scheduling.md §2.4-§2.6), step for step as the reference solver
// runs it: pods in queue order; each tries existing nodes, then in-flight NodeClaims (fewest pods first),
// then a new NodeClaim per template in weight order; on failure one preference is relaxed at a time
// (pre-computed as a chain of pod-class versions); a full pass without progress ends the solve.
import {
  E_FAILED, E_NO_TEMPLATES, FLAG_STRICT_MIN_VALUES, IT_CAP, N_SET, NF_BLOCKED_FOR_MOVED, P_MOVED, P_VERSION, T_LIMITS,
  T_SET, T_TAINTSET, V_DG_CONFLICT, V_INV_SELECT, V_NEXT, V_OWNED, V_REQS, V_VOLUMES,
} from '../abi';
import { FLAGS, NLD, NN, NP, NT, NV, f64At, it, listAt, listLen, node, pod, tmpl, tolerates, ver } from './layout';
import { Compat, compatFor, minValuesMet } from './its';
import { MODE_PLAIN, MODE_STRICT, MODE_WELL_KNOWN, canonicalInput, mergeCompatible, setHasMinValues } from './sets';
import {
  Claim, addPorts, addRequests, claimAt, claimCount, dgConflict, fitsRemaining, itFits, nodeAt, portsConflict, pushClaim,
  subtractRequests, templateLen, templateStart,
} from './state';
import { addRequirements, ensureHost, record } from './topology';

export let placement: Int32Array = new Int32Array(0);
/** The version (after relaxation) each placed pod went in as. */
export let placedVersion: Int32Array = new Int32Array(0);
export let errors: Int32Array = new Int32Array(0);
/** In-flight NodeClaims ordered by (pods ascending, creation ascending). */
let order: Array<i32> = new Array<i32>();
/** Per template: remaining limits [nodes, dims...] (Infinity = unlimited). */
let limits: Array<Float64Array> = new Array<Float64Array>();
let strictMinValues = false;
/**
 * dead[v] marks in-flight NodeClaims (and existing nodes, in deadNodes[v]) on which version v can never
 * fit: resources only grow, requirements only narrow, ports only fill, so once a topology-free version
 * fails on a NodeClaim it fails there for the rest of the solve (and any version fails for good on a
 * taint, port or requirement conflict). Without this, every replica rescans every full NodeClaim.
 */
let dead: Array<Uint32Array> = new Array<Uint32Array>();
let deadNodes: Array<Uint32Array> = new Array<Uint32Array>();
let topologyFree: Uint8Array = new Uint8Array(0);

export function resetSchedule(): void {
  placement = new Int32Array(NP);
  placedVersion = new Int32Array(NP);
  errors = new Int32Array(NP);
  for (let p = 0; p < NP; p++) unchecked((placement[p] = -1));
  order = new Array<i32>();
  limits = new Array<Float64Array>();
  for (let t = 0; t < NT; t++) {
    const l = new Float64Array(NLD + 1);
    const base = tmpl(t, T_LIMITS);
    for (let i = 0; i <= NLD; i++) unchecked((l[i] = f64At(base + i)));
    limits.push(l);
  }
  strictMinValues = (FLAGS & FLAG_STRICT_MIN_VALUES) != 0;
  dead = new Array<Uint32Array>(NV);
  deadNodes = new Array<Uint32Array>(NV);
  topologyFree = new Uint8Array(NV);
  const nodeWords = (NN >>> 5) + 1;
  for (let v = 0; v < NV; v++) {
    unchecked((dead[v] = new Uint32Array(8)));
    unchecked((deadNodes[v] = new Uint32Array(nodeWords)));
    unchecked((topologyFree[v] = listLen(ver(v, V_OWNED)) == 0 && listLen(ver(v, V_INV_SELECT)) == 0 ? 1 : 0));
  }
}

@inline function isDead(b: Uint32Array, i: i32): bool {
  const w = i >>> 5;
  return w < b.length && (unchecked(b[w]) & (1 << (i & 31))) != 0;
}

function markDead(v: i32, i: i32): void {
  let b = unchecked(dead[v]);
  const w = i >>> 5;
  if (w >= b.length) {
    const n = new Uint32Array(max(b.length * 2, w + 1));
    n.set(b);
    unchecked((dead[v] = n));
    b = n;
  }
  unchecked((b[w] |= 1 << (i & 31)));
}

function markNodeDead(v: i32, n: i32): void {
  const b = unchecked(deadNodes[v]);
  unchecked((b[n >>> 5] |= 1 << (n & 31)));
}

export function run(): void {
  const queue = new Int32Array(NP);
  const lastLen = new Int32Array(NP);
  for (let p = 0; p < NP; p++) {
    unchecked((queue[p] = p));
    unchecked((lastLen[p] = -1));
  }
  let head = 0;
  let len = NP;
  while (len > 0) {
    const p = unchecked(queue[head]);
    if (unchecked(lastLen[p]) == len) break;
    head = head + 1 == NP ? 0 : head + 1;
    len--;
    if (trySchedule(p)) {
      unchecked((errors[p] = 0));
      continue;
    }
    const tail = head + len < NP ? head + len : head + len - NP;
    unchecked((queue[tail] = p));
    len++;
    unchecked((lastLen[p] = len));
  }
}

function trySchedule(p: i32): bool {
  let v = pod(p, P_VERSION);
  const moved = pod(p, P_MOVED) != 0;
  while (v >= 0) {
    if (addPod(p, v, moved)) return true;
    v = ver(v, V_NEXT);
  }
  return false;
}

function addPod(p: i32, v: i32, moved: bool): bool {
  const dn = unchecked(deadNodes[v]);
  const free = unchecked(topologyFree[v]) != 0;
  for (let n = 0; n < NN; n++) {
    if (isDead(dn, n)) continue;
    const ns = nodeAt(n);
    if (moved && (ns.flags & NF_BLOCKED_FOR_MOVED) != 0) continue;
    const s = nodeCanAdd(n, v);
    if (s < 0) {
      if (free || s == -2) markNodeDead(v, n);
      continue;
    }
    subtractRequests(v, ns.remaining);
    ns.set = s;
    addPorts(v, ns.ports);
    record(v, s, ns.taintSet, n);
    unchecked((placement[p] = n));
    unchecked((placedVersion[p] = v));
    return true;
  }
  const dv = unchecked(dead[v]);
  for (let i = 0; i < order.length; i++) {
    const ci = unchecked(order[i]);
    if (isDead(dv, ci)) continue;
    const c = claimAt(ci);
    const s = claimCanAdd(c, v);
    if (s < 0) {
      if (free || s == -2) markDead(v, ci);
      continue;
    }
    claimAdd(c, v, s);
    record(v, c.set, tmpl(c.tmpl, T_TAINTSET), c.host);
    unchecked((placement[p] = -(ci + 2)));
    unchecked((placedVersion[p] = v));
    reorder(i);
    return true;
  }
  if (NT == 0) {
    unchecked((errors[p] = E_NO_TEMPLATES));
    return false;
  }
  for (let t = 0; t < NT; t++) {
    const lim = unchecked(limits[t]);
    if (unchecked(lim[0]) <= 0) continue;
    const n = templateLen(t);
    const start = templateStart(t);
    const live = new Int32Array(n);
    let ln = 0;
    for (let j = 0; j < n; j++) if (withinLimits(start + j, lim)) unchecked((live[ln++] = j));
    if (ln == 0) continue;
    const host = NN + claimCount();
    ensureHost(host);
    const c = new Claim(t, canonicalInput(tmpl(t, T_SET)), live, ln, claimCount(), host);
    const s = claimCanAdd(c, v);
    if (s < 0) continue;
    const ci = pushClaim(c);
    claimAdd(c, v, s);
    fullFilter(c);
    subtractMaxCapacity(c, lim);
    insertOrdered(ci);
    record(v, c.set, tmpl(t, T_TAINTSET), c.host);
    unchecked((placement[p] = -(ci + 2)));
    unchecked((placedVersion[p] = v));
    return true;
  }
  unchecked((errors[p] = E_FAILED));
  return false;
}

/** Moves order[i] right past NodeClaims with fewer pods or equal pods and lower creation sequence. */
function reorder(i: i32): void {
  const ci = unchecked(order[i]);
  const c = claimAt(ci);
  let j = i;
  while (j + 1 < order.length) {
    const o = claimAt(unchecked(order[j + 1]));
    if (o.pods < c.pods || (o.pods == c.pods && o.seq < c.seq)) {
      unchecked((order[j] = order[j + 1]));
      j++;
    } else break;
  }
  unchecked((order[j] = ci));
}

/** Inserts a new NodeClaim (one pod, newest) after every NodeClaim with at most one pod. */
function insertOrdered(ci: i32): void {
  let at = 0;
  while (at < order.length && claimAt(unchecked(order[at])).pods <= 1) at++;
  order.push(ci);
  for (let j = order.length - 1; j > at; j--) unchecked((order[j] = order[j - 1]));
  unchecked((order[at] = ci));
}

function withinLimits(gi: i32, lim: Float64Array): bool {
  const cap = it(gi, IT_CAP);
  for (let d = 0; d < NLD; d++) if (f64At(cap + d) > unchecked(lim[d + 1])) return false;
  return true;
}

/** The claim consumes the largest capacity among its options, and one node (see the reference solver). */
function subtractMaxCapacity(c: Claim, lim: Float64Array): void {
  c.reserved = maxCapacity(c);
  for (let d = 0; d <= NLD; d++) unchecked((lim[d] -= c.reserved[d]));
}

/** [1 node, the largest capacity per limited dimension among the claim's options]. */
export function maxCapacity(c: Claim): Float64Array {
  const out = new Float64Array(NLD + 1);
  out[0] = 1;
  const start = templateStart(c.tmpl);
  for (let d = 0; d < NLD; d++) {
    let m: f64 = 0;
    for (let x = 0; x < c.liveLen; x++) {
      const j = unchecked(c.live[x]);
      if (j < 0) continue;
      const v = f64At(it(start + j, IT_CAP) + d);
      if (v > m) m = v;
    }
    unchecked((out[d + 1] = m));
  }
  return out;
}

export function limitsOf(t: i32): Float64Array {
  return unchecked(limits[t]);
}

/** The node's set with v added; -1 when v does not fit now, -2 when it never will (see `dead`). */
function nodeCanAdd(n: i32, v: i32): i32 {
  const ns = nodeAt(n);
  if (!tolerates(v, ns.taintSet)) return -2;
  if (portsConflict(v, ns.ports)) return -2;
  if (!fitsRemaining(v, ns.remaining)) return -2;
  const reqs = ver(v, V_REQS);
  if (mergeCompatible(ns.set, reqs, MODE_STRICT) < 0) return -2;
  const alts = ver(v, V_VOLUMES);
  const na = listLen(alts);
  for (let a = 0; a < (na == 0 ? 1 : na); a++) {
    let s1 = ns.set;
    if (na > 0) {
      s1 = mergeCompatible(ns.set, listAt(alts, a), MODE_STRICT);
      if (s1 < 0) continue;
    }
    const s2 = addRequirements(v, s1, ns.taintSet, n);
    if (s2 < 0) continue;
    return mergeCompatible(s2, reqs, MODE_PLAIN);
  }
  return -1;
}

/** Any remaining instance type allowed by `compat` fits the claim's total plus v; drops types that no longer fit. */
function anyFits(c: Claim, compat: Compat, v: i32): bool {
  const start = templateStart(c.tmpl);
  for (let x = 0; x < c.liveLen; x++) {
    const j = unchecked(c.live[x]);
    if (j < 0) continue;
    const gi = start + j;
    if (!itFits(gi, c.total, -1)) {
      unchecked((c.live[x] = -1));
      continue;
    }
    if (unchecked(compat.ok[j]) == 0 || dgConflict(v, gi)) continue;
    if (itFits(gi, c.total, v)) return true;
  }
  return false;
}

/** The instance types that would remain after adding v under set s, for minValues. */
function filtered(c: Claim, s: i32, v: i32): Int32Array {
  const compat = compatFor(s, c.tmpl);
  const start = templateStart(c.tmpl);
  const out = new Int32Array(c.liveLen);
  let n = 0;
  for (let x = 0; x < c.liveLen; x++) {
    const j = unchecked(c.live[x]);
    if (j < 0 || unchecked(compat.ok[j]) == 0 || dgConflict(v, start + j) || !itFits(start + j, c.total, v)) continue;
    unchecked((out[n++] = start + j));
  }
  return out.subarray(0, n);
}

/** The claim's set with v added; -1 when v does not fit now, -2 when it never will (see `dead`). */
function claimCanAdd(c: Claim, v: i32): i32 {
  const ts = tmpl(c.tmpl, T_TAINTSET);
  if (!tolerates(v, ts)) return -2;
  if (portsConflict(v, c.ports)) return -2;
  const m = mergeCompatible(c.set, ver(v, V_REQS), MODE_WELL_KNOWN);
  if (m < 0) return -2;
  const alts = ver(v, V_VOLUMES);
  const na = listLen(alts);
  for (let a = 0; a < (na == 0 ? 1 : na); a++) {
    let s1 = m;
    if (na > 0) {
      s1 = mergeCompatible(m, listAt(alts, a), MODE_WELL_KNOWN);
      if (s1 < 0) continue;
    }
    const s2 = addRequirements(v, s1, ts, c.host);
    if (s2 < 0) continue;
    if (!anyFits(c, compatFor(s2, c.tmpl), v)) continue;
    if (strictMinValues && setHasMinValues(s2)) {
      const f = filtered(c, s2, v);
      if (!minValuesMet(s2, f, f.length)) continue;
    }
    return s2;
  }
  return -1;
}

function claimAdd(c: Claim, v: i32, s: i32): void {
  const start = templateStart(c.tmpl);
  const setChanged = s != c.set;
  const compat = compatFor(s, c.tmpl);
  const conflicts = listLen(ver(v, V_DG_CONFLICT)) > 0;
  if (setChanged || conflicts) {
    for (let x = 0; x < c.liveLen; x++) {
      const j = unchecked(c.live[x]);
      if (j < 0) continue;
      if (unchecked(compat.ok[j]) == 0 || dgConflict(v, start + j)) unchecked((c.live[x] = -1));
    }
  }
  c.set = s;
  addRequests(v, c.total);
  addPorts(v, c.ports);
  c.pods++;
}

/** Drops every instance type that no longer fits or is no longer allowed (exact list, as Karpenter keeps). */
export function fullFilter(c: Claim): void {
  const compat = compatFor(c.set, c.tmpl);
  const start = templateStart(c.tmpl);
  let w = 0;
  for (let x = 0; x < c.liveLen; x++) {
    const j = unchecked(c.live[x]);
    if (j < 0 || unchecked(compat.ok[j]) == 0 || !itFits(start + j, c.total, -1)) continue;
    unchecked((c.live[w++] = j));
  }
  c.liveLen = w;
}

export { N_SET, node };
