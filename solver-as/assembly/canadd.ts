// Can a pod (class version) join an existing node or an in-flight NodeClaim, and what joining does to the claim
// (docs/karpenter/scheduling.md §2.7-§2.9): taints, host ports, requirements, volume alternatives, topology, the
// instance-type filter with its resource bound, minValues and reserved capacity. Results are the node's or
// claim's new requirement set, or a verdict (verdict.ts): NOT_NOW, NEVER (see `dead` in schedule.ts), RESERVED.
import { T_TAINTSET, V_DG_CONFLICT, V_REQS, V_REQUESTS, V_VOLUMES } from '../abi';
import { RESOURCES, f64Addr, listAt, listLen, tmpl, tolerates, ver } from './layout';
import { Compat, compatFor, minValuesMet } from './its';
import { MODE_PLAIN, MODE_STRICT, MODE_WELL_KNOWN, mergeCompatible, setHasMinValues } from './sets';
import {
  Claim, NO_VERSION, REMOVED_TYPE, addPorts, addRequests, dgConflict, exceedsRoom, fitLevel, fitsRemaining, itFits, nodeAt, portsConflict,
  templateStart, widenRoom,
} from './state';
import { addRequirements } from './topology';
import { checkReservations, commitReservations } from './reservations';
import { NEVER, NOT_NOW, RESERVED } from './verdict';

let strictMinValues = false;

/** Per solve: whether minValues is Strict, and anyFits' scratch bound. */
export function resetCanAdd(strict: bool): void {
  strictMinValues = strict;
  scratchRoom = new Float64Array(RESOURCES);
}

/** The node's set with v added, or NOT_NOW, or NEVER (see `dead` in schedule.ts). */
export function nodeCanAdd(n: i32, v: i32): i32 {
  const ns = nodeAt(n);
  if (!tolerates(v, ns.taintSet)) return NEVER;
  if (portsConflict(v, ns.ports)) return NEVER;
  if (!fitsRemaining(v, ns.remaining)) return NEVER;
  const reqs = ver(v, V_REQS);
  if (mergeCompatible(ns.set, reqs, MODE_STRICT) < 0) return NEVER;
  const alts = ver(v, V_VOLUMES);
  const na = listLen(alts);
  let permanent = true;
  for (let a = 0; a < (na == 0 ? 1 : na); a++) {
    let s1 = ns.set;
    if (na > 0) {
      s1 = mergeCompatible(ns.set, listAt(alts, a), MODE_STRICT);
      if (s1 < 0) continue;
    }
    const s2 = addRequirements(v, s1, ns.taintSet, n);
    if (s2 < 0) {
      if (s2 == NOT_NOW) permanent = false;
      continue;
    }
    return mergeCompatible(s2, reqs, MODE_PLAIN);
  }
  return permanent ? NEVER : NOT_NOW;
}

/**
 * Any remaining instance type allowed by `compat` fits the claim's total plus v; drops types that no longer
 * fit. A pod beyond the claim's `room` bound is refused without a scan; a scan that finds nothing has read
 * every live type, so it also tightens `room` to the types that remain.
 *
 * The order of `live` means nothing to the plan (every reader asks which types are there, not where), so a type
 * that no longer fits is replaced by the last one, and the type that fits moves to the front: the claim's next
 * pod most often fits it too.
 */
function anyFits(c: Claim, compat: Compat, v: i32): bool {
  if (exceedsRoom(c.total, v, c.room)) return false;
  const start = templateStart(c.tmpl);
  const room = scratchRoom;
  for (let i = 0; i < RESOURCES; i++) unchecked((room[i] = -Infinity));
  const live = c.live;
  const t = c.total.dataStart;
  const rq = f64Addr(ver(v, V_REQUESTS));
  const conflicts = listLen(ver(v, V_DG_CONFLICT)) > 0;
  let x = 0;
  while (x < c.liveLen) {
    const j = unchecked(live[x]);
    const level = j == REMOVED_TYPE ? 0 : fitLevel(start + j, t, rq);
    if (level == 0) {
      c.liveLen--;
      unchecked((live[x] = live[c.liveLen]));
      continue;
    }
    if (level == 2 && unchecked(compat.ok[j]) != 0 && (!conflicts || !dgConflict(v, start + j))) {
      unchecked((live[x] = live[0]));
      unchecked((live[0] = j));
      return true;
    }
    widenRoom(start + j, room);
    x++;
  }
  for (let i = 0; i < RESOURCES; i++) unchecked((c.room[i] = room[i]));
  return false;
}

/** anyFits' running bound (allocated per solve in resetCanAdd, like the rest of the solve state). */
let scratchRoom: Float64Array = new Float64Array(0);

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

/** The claim's set with v added, or NOT_NOW, NEVER (see `dead` in schedule.ts) or RESERVED. */
export function claimCanAdd(c: Claim, v: i32): i32 {
  const ts = tmpl(c.tmpl, T_TAINTSET);
  if (!tolerates(v, ts)) return NEVER;
  if (portsConflict(v, c.ports)) return NEVER;
  const m = mergeCompatible(c.set, ver(v, V_REQS), MODE_WELL_KNOWN);
  if (m < 0) return NEVER;
  const alts = ver(v, V_VOLUMES);
  const na = listLen(alts);
  let permanent = true;
  let reservedFail = false;
  for (let a = 0; a < (na == 0 ? 1 : na); a++) {
    reservedFail = false;
    let s1 = m;
    if (na > 0) {
      s1 = mergeCompatible(m, listAt(alts, a), MODE_WELL_KNOWN);
      if (s1 < 0) continue;
    }
    // Resources only grow and requirements only narrow: a version that does not fit before topology
    // narrows the claim never will. Checked first, so full claims are ruled out for good.
    if (!anyFits(c, compatFor(s1, c.tmpl), v)) continue;
    const s2 = addRequirements(v, s1, ts, c.host);
    if (s2 < 0) {
      if (s2 == NOT_NOW) permanent = false;
      continue;
    }
    // Topology picked a domain; another domain may be picked later.
    if (s2 != s1 && !anyFits(c, compatFor(s2, c.tmpl), v)) {
      permanent = false;
      continue;
    }
    if (strictMinValues && setHasMinValues(s2)) {
      const f = filtered(c, s2, v);
      if (!minValuesMet(s2, f, f.length)) {
        if (s2 != s1) permanent = false;
        continue;
      }
    }
    if (!checkReservations(c, s2, v, compatFor(s2, c.tmpl).ok)) {
      reservedFail = true;
      permanent = false;
      continue;
    }
    return s2;
  }
  if (reservedFail) return RESERVED;
  return permanent ? NEVER : NOT_NOW;
}

/**
 * Adds v to the claim under its new set s. Types s no longer allows stay in `live` until the next full
 * filter: sets only narrow, and every reader of `live` (anyFits, filtered, checkReservations, fullFilter,
 * finalizeClaims) checks the compatibility of the current or a narrower set first, so dropping them here
 * (a pass over 400 types on every narrowing placement) changed nothing. A daemon port conflict is v's own and
 * no later check sees it: those types go now.
 */
export function claimAdd(c: Claim, v: i32, s: i32): void {
  const start = templateStart(c.tmpl);
  if (listLen(ver(v, V_DG_CONFLICT)) > 0) {
    c.clean = false;
    for (let x = 0; x < c.liveLen; x++) {
      const j = unchecked(c.live[x]);
      if (j >= 0 && dgConflict(v, start + j)) unchecked((c.live[x] = REMOVED_TYPE));
    }
  }
  c.set = s;
  commitReservations(c);
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
    if (j < 0 || unchecked(compat.ok[j]) == 0 || !itFits(start + j, c.total, NO_VERSION)) continue;
    unchecked((c.live[w++] = j));
  }
  c.liveLen = w;
}
