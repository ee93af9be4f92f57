// Karpenter's provisioning loop (docs/karpenter/scheduling.md §2.4-§2.6), step for step as the reference solver
// runs it: pods in queue order; each tries existing nodes, then in-flight NodeClaims (fewest pods first),
// then a new NodeClaim per template in weight order; on failure one preference is relaxed at a time
// (pre-computed as a chain of pod-class versions); a full pass without progress ends the solve.
import {
  E_FAILED, E_NO_TEMPLATES, E_RESERVED, FLAG_STRICT_MIN_VALUES, N_SET, NF_BLOCKED_FOR_MOVED, P_MOVED, P_VERSION, PLACED_CLAIM_BASE,
  PLACED_NOWHERE, T_SET, T_TAINTSET, V_DG_CONFLICT, V_INV_SELECT, V_NEXT, V_OWNED,
} from '../abi';
import { EXISTING_NODES, FLAGS, LIMIT_DIMS, PODS, TEMPLATES, POD_VERSIONS, listLen, node, pod, tmpl, ver } from './layout';
import { canonicalInput } from './sets';
import {
  Claim, addPorts, addRequests, claimAt, claimCount, exceedsRoom, fitsRemaining, nodeAt, pushClaim, subtractRequests, templateLen, templateStart,
} from './state';
import { allWithinLimits, limitsOf, maxCapacity, openedAs, rememberOpened, resetLimits, subtractMaxCapacity, wasOpened, withinLimits } from './limits';
import { indexClaim, quickAllowed, quickIndexed } from './quick';
import { ensureHost, prepareQuick, quickReject, record, versionEpoch } from './topology';
import { commitReservations } from './reservations';
import { firstClaimWordWithRoom, firstNodeWordWithRoom, markRoomDead, reqClass, resetRoom, roomDead, roomDeadNodes, setGrowing } from './room';
import { claimAdd, claimCanAdd, fullFilter, nodeCanAdd, resetCanAdd } from './canadd';
import { compatFor } from './its';
import { NEVER, RESERVED } from './verdict';

/** The last addPod failed on reserved capacity: the pod waits (no relaxation). */
let lastReserved = false;

export let placement: Int32Array = new Int32Array(0);
/** The version (after relaxation) each placed pod went in as. */
export let placedVersion: Int32Array = new Int32Array(0);
export let errors: Int32Array = new Int32Array(0);
/**
 * In-flight NodeClaims by pod count: levels[L] is a bitset of the claims holding L pods. Karpenter tries
 * in-flight NodeClaims fewest pods first (ties: oldest first), which is reading the levels in order.
 */
let levels: Array<Uint32Array> = new Array<Uint32Array>();
/**
 * nonEmpty[L]: bit w set when levels[L] word w has a claim. An attempt walks only those words: at 20,000
 * diverse pods, 4.5 million word reads per solve found 0.7 million non-empty words.
 */
let nonEmpty: Array<Uint32Array> = new Array<Uint32Array>();
let levelCount: Int32Array = new Int32Array(0);
let levelWords: i32 = 8;
/**
 * dead[v] marks in-flight NodeClaims (and existing nodes, in deadNodes[v]) on which version v can never
 * fit: resources only grow, requirements only narrow, ports only fill, so once a topology-free version
 * fails on a NodeClaim it fails there for the rest of the solve (and any version fails for good on a
 * taint, port or requirement conflict). Without this, every replica rescans every full NodeClaim.
 */
let dead: Array<Uint32Array> = new Array<Uint32Array>();
let deadNodes: Array<Uint32Array> = new Array<Uint32Array>();
let deadCount: Int32Array = new Int32Array(0);
let topologyFree: Uint8Array = new Uint8Array(0);
/**
 * failedAt[v][c] = 1 + the topology epoch of version v when it last failed on in-flight NodeClaim c for a
 * reason that can pass later (a zone spread's skew, an affinity target not there yet), and failedSet[v][c] the
 * claim's requirement set then: while both are unchanged the claim is skipped without re-evaluating it. The set
 * matters because a narrower claim can pass where the wider one failed: topology picks its domain among the
 * claim's allowed ones (the lowest count, or the first in name order), so narrowing can rule out a picked domain
 * no remaining instance type offers and leave one they do (docs/solver.md, "Never re-checking what cannot change").
 */
let failedAt: Array<Int32Array> = new Array<Int32Array>();
let failedSet: Array<Int32Array> = new Array<Int32Array>();
/** Existing nodes with NF_BLOCKED_FOR_MOVED, masked out a word at a time for moved pods. */
let blockedForMoved: Uint32Array = new Uint32Array(0);

/** Work counters for benchmarks (index.ts workCounters; test/perf/phases.ts prints them with these names). */
export let counters: Int32Array = new Int32Array(8);
/** In-flight NodeClaims evaluated in full (claimCanAdd). */
const WORK_CLAIM_CHECKS = 0;
/** Attempts that reached the in-flight NodeClaims (a pod version placed on no existing node). */
const WORK_POD_ATTEMPTS = 3;
/** NodeClaims a pod version failed on for a topology reason that can pass later (failedAt). */
const WORK_TOPOLOGY_FAILURES = 4;
/** NodeClaims skipped because the version failed there and neither its topology counts nor the claim changed since. */
const WORK_EPOCH_SKIPS = 5;
/** NodeClaims quick rejection ruled out (a decided domain outside the allowed ones). */
const WORK_QUICK_REJECTED = 6;
/** NodeClaims the version's request class is out of room on (room.ts). */
const WORK_OUT_OF_ROOM = 7;

export function resetSchedule(): void {
  counters = new Int32Array(8);
  placement = new Int32Array(PODS);
  placedVersion = new Int32Array(PODS);
  errors = new Int32Array(PODS);
  for (let p = 0; p < PODS; p++) unchecked((placement[p] = PLACED_NOWHERE));
  levels = new Array<Uint32Array>();
  nonEmpty = new Array<Uint32Array>();
  levelWords = 8;
  levels.push(new Uint32Array(levelWords));
  nonEmpty.push(new Uint32Array(summaryWords(levelWords)));
  levelCount = new Int32Array(8);
  resetLimits();
  resetCanAdd((FLAGS & FLAG_STRICT_MIN_VALUES) != 0);
  dead = new Array<Uint32Array>(POD_VERSIONS);
  deadNodes = new Array<Uint32Array>(POD_VERSIONS);
  deadCount = new Int32Array(POD_VERSIONS);
  failedAt = new Array<Int32Array>(POD_VERSIONS);
  failedSet = new Array<Int32Array>(POD_VERSIONS);

  topologyFree = new Uint8Array(POD_VERSIONS);
  const nodeWords = (EXISTING_NODES >>> 5) + 1;
  for (let v = 0; v < POD_VERSIONS; v++) {
    unchecked((dead[v] = new Uint32Array(8)));
    unchecked((failedAt[v] = new Int32Array(0)));
    unchecked((failedSet[v] = new Int32Array(0)));
    unchecked((deadNodes[v] = new Uint32Array(nodeWords)));
    unchecked((topologyFree[v] = listLen(ver(v, V_OWNED)) == 0 && listLen(ver(v, V_INV_SELECT)) == 0 ? 1 : 0));
  }
  resetRoom(nodeWords);
  blockedForMoved = new Uint32Array(nodeWords);
  for (let n = 0; n < EXISTING_NODES; n++) if ((nodeAt(n).flags & NF_BLOCKED_FOR_MOVED) != 0) unchecked((blockedForMoved[n >>> 5] |= 1 << (n & 31)));
}

function markDead(v: i32, i: i32): void {
  if (setGrowing(dead, v, i)) unchecked((deadCount[v] += 1));
}

function markFailed(v: i32, ci: i32, epoch: i32, set: i32): void {
  let f = unchecked(failedAt[v]);
  let fs = unchecked(failedSet[v]);
  if (ci >= f.length) {
    const size = max(f.length * 2, ci + 16);
    const n = new Int32Array(size);
    n.set(f);
    unchecked((failedAt[v] = n));
    f = n;
    const ns = new Int32Array(size);
    ns.set(fs);
    unchecked((failedSet[v] = ns));
    fs = ns;
  }
  unchecked((f[ci] = epoch + 1));
  unchecked((fs[ci] = set));
}

@inline function stillFailed(v: i32, ci: i32, epoch: i32, set: i32): bool {
  const f = unchecked(failedAt[v]);
  return ci < f.length && unchecked(f[ci]) == epoch + 1 && unchecked(failedSet[v][ci]) == set;
}

function markNodeDead(v: i32, n: i32): void {
  const b = unchecked(deadNodes[v]);
  unchecked((b[n >>> 5] |= 1 << (n & 31)));
}

export function run(): void {
  const queue = new Int32Array(PODS);
  const lastLen = new Int32Array(PODS);
  for (let p = 0; p < PODS; p++) {
    unchecked((queue[p] = p));
    unchecked((lastLen[p] = -1));
  }
  let head = 0;
  let len = PODS;
  while (len > 0) {
    const p = unchecked(queue[head]);
    if (unchecked(lastLen[p]) == len) break;
    head = head + 1 == PODS ? 0 : head + 1;
    len--;
    if (trySchedule(p)) {
      unchecked((errors[p] = 0));
      continue;
    }
    const tail = head + len < PODS ? head + len : head + len - PODS;
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
    if (lastReserved) return false;
    v = ver(v, V_NEXT);
  }
  return false;
}

/**
 * Karpenter's add (§2.6): an existing node, else an in-flight NodeClaim, else a new NodeClaim from the first
 * template that takes the pod. Records where the pod went; false when nowhere (errors[p] says why).
 */
function addPod(p: i32, v: i32, moved: bool): bool {
  lastReserved = false;
  return addToExistingNode(p, v, moved) || addToInflightClaim(p, v) || addToNewClaim(p, v);
}

/** Places pod p (as version v) on existing node n under its new set s. */
function placeOnNode(p: i32, v: i32, n: i32, s: i32): void {
  const ns = nodeAt(n);
  subtractRequests(v, ns.remaining);
  ns.set = s;
  addPorts(v, ns.ports);
  record(v, s, ns.taintSet, n);
  unchecked((placement[p] = n));
  unchecked((placedVersion[p] = v));
}

/** Places pod p (as version v) on the solve's NodeClaim ci (already holding it: claimAdd done). */
function placeOnClaim(p: i32, v: i32, ci: i32): void {
  const c = claimAt(ci);
  indexClaim(ci, c.set);
  record(v, c.set, tmpl(c.tmpl, T_TAINTSET), c.host);
  unchecked((placement[p] = PLACED_CLAIM_BASE - ci));
  unchecked((placedVersion[p] = v));
}

/**
 * Existing nodes in index order, 32 at a time: the nodes dead for this version, those its requests are out of
 * room on, and (for moved pods) the blocked ones are masked out of each word, so a pod skips a full cluster in
 * EXISTING_NODES / 32 word reads.
 */
function addToExistingNode(p: i32, v: i32, moved: bool): bool {
  const deadHere = unchecked(deadNodes[v]);
  const free = unchecked(topologyFree[v]) != 0;
  const requestClass = unchecked(reqClass[v]);
  const noRoom = unchecked(roomDeadNodes[requestClass]);
  const nodeWords = (EXISTING_NODES + 31) >>> 5;
  const lastWord: u32 = (EXISTING_NODES & 31) != 0 ? (<u32>1 << <u32>(EXISTING_NODES & 31)) - 1 : 0xffffffff;
  for (let w = firstNodeWordWithRoom(requestClass, nodeWords, lastWord); w < nodeWords; w++) {
    let x = ~(unchecked(deadHere[w]) | unchecked(noRoom[w]));
    if (moved) x &= ~unchecked(blockedForMoved[w]);
    if (w == nodeWords - 1) x &= lastWord;
    while (x != 0) {
      const n = (w << 5) + <i32>ctz(x);
      x &= x - 1;
      // nodeCanAdd's answer would be NEVER (room.ts).
      if (!fitsRemaining(v, nodeAt(n).remaining)) {
        unchecked((noRoom[w] |= 1 << (n & 31)));
        continue;
      }
      const s = nodeCanAdd(n, v);
      if (s < 0) {
        if (free || s == NEVER) markNodeDead(v, n);
        continue;
      }
      placeOnNode(p, v, n, s);
      return true;
    }
  }
  return false;
}

/**
 * In-flight NodeClaims in Karpenter's order (fewest pods first, then oldest): level by level, and within a level
 * by creation index, reading whole words of claim bits with the claims dead or out of room for this version masked
 * out. With every key of the attempt indexed, quick rejection masks whole words too (quick.ts); the claims it
 * rejects are the ones quickReject would, so the claims evaluated are the same.
 */
function addToInflightClaim(p: i32, v: i32): bool {
  const free = unchecked(topologyFree[v]) != 0;
  const requestClass = unchecked(reqClass[v]);
  const deadHere = unchecked(dead[v]);
  const noRoom = unchecked(roomDead[requestClass]);
  const firstClaim = firstClaimWordWithRoom(requestClass);
  const firstSummary = firstClaim >>> 5;
  unchecked((counters[WORK_POD_ATTEMPTS] += 1));
  const epoch = free ? 0 : versionEpoch(v);
  if (!free) prepareQuick(v);
  const indexed = !free && quickIndexed();
  for (let L = 1; L < levels.length; L++) {
    if (unchecked(levelCount[L]) == 0) continue;
    const b = unchecked(levels[L]);
    const ne = unchecked(nonEmpty[L]);
    for (let si = firstSummary; si < ne.length; si++) {
      let y = unchecked(ne[si]);
      if (si == firstSummary) y &= ~((<u32>1 << <u32>(firstClaim & 31)) - 1);
      while (y != 0) {
        const wi = (si << 5) + <i32>ctz(y);
        y &= y - 1;
        let x = unchecked(b[wi]);
        if (wi < deadHere.length) x &= ~unchecked(deadHere[wi]);
        if (wi < noRoom.length) x &= ~unchecked(noRoom[wi]);
        if (indexed) {
          const q = x & quickAllowed(wi);
          unchecked((counters[WORK_QUICK_REJECTED] += <i32>popcnt(x & ~q)));
          x = q;
        }
        while (x != 0) {
          const ci = (wi << 5) + <i32>ctz(x);
          x &= x - 1;
          if (tryClaim(p, v, ci, L, free, indexed, epoch)) return true;
        }
      }
    }
  }
  return false;
}

/** One in-flight NodeClaim ci (at pod-count level L) for pod p as version v: true when the pod joined it. */
function tryClaim(p: i32, v: i32, ci: i32, L: i32, free: bool, indexed: bool, epoch: i32): bool {
  const c = claimAt(ci);
  if (!free && stillFailed(v, ci, epoch, c.set)) {
    unchecked((counters[WORK_EPOCH_SKIPS] += 1));
    return false;
  }
  if (!free && !indexed && quickReject(c.set)) {
    unchecked((counters[WORK_QUICK_REJECTED] += 1));
    return false;
  }
  // claimCanAdd's answer would be NEVER (room.ts); skipping it only leaves memo tables unfilled.
  if (exceedsRoom(c.total, v, c.room)) {
    markRoomDead(unchecked(reqClass[v]), ci);
    unchecked((counters[WORK_OUT_OF_ROOM] += 1));
    return false;
  }
  unchecked((counters[WORK_CLAIM_CHECKS] += 1));
  const s = claimCanAdd(c, v);
  if (s < 0) {
    // Reserved capacity can be given back by another claim: neither dead nor tied to the topology epoch.
    if (s == RESERVED) return false;
    if (free || s == NEVER) markDead(v, ci);
    else {
      markFailed(v, ci, epoch, c.set);
      unchecked((counters[WORK_TOPOLOGY_FAILURES] += 1));
    }
    return false;
  }
  levelMove(ci, L, L + 1);
  claimAdd(c, v, s);
  placeOnClaim(p, v, ci);
  return true;
}

/** A new NodeClaim from the first template (weight order) that takes pod p as version v. */
function addToNewClaim(p: i32, v: i32): bool {
  if (TEMPLATES == 0) {
    unchecked((errors[p] = E_NO_TEMPLATES));
    return false;
  }
  for (let t = 0; t < TEMPLATES; t++) {
    const opened = openClaim(p, v, t);
    if (opened == OPEN_RESERVED) {
      // Reserved capacity is contended in this pool: no fallback to lower-weight templates (§2.6).
      unchecked((errors[p] = E_RESERVED));
      lastReserved = true;
      return false;
    }
    if (opened >= 0) {
      placeOnClaim(p, v, opened);
      return true;
    }
  }
  unchecked((errors[p] = E_FAILED));
  return false;
}

/** openClaim: the template cannot take the pod / only reserved capacity stands in the way (Strict mode). */
const OPEN_NONE: i32 = -1;
const OPEN_RESERVED: i32 = -2;

/**
 * A fresh NodeClaim of template t with version v in it, its instance types within the pool's remaining limits:
 * the claim's index, or OPEN_NONE / OPEN_RESERVED.
 */
function openClaim(p: i32, v: i32, t: i32): i32 {
  const lim = limitsOf(t);
  if (unchecked(lim[0]) <= 0) return OPEN_NONE;
  const n = templateLen(t);
  const start = templateStart(t);
  const live = new Int32Array(n);
  let ln = 0;
  const all = allWithinLimits(t, lim);
  if (all) for (; ln < n; ln++) unchecked((live[ln] = ln));
  else for (let j = 0; j < n; j++) if (withinLimits(start + j, lim)) unchecked((live[ln++] = j));
  if (ln == 0) return OPEN_NONE;
  const host = EXISTING_NODES + claimCount();
  ensureHost(host);
  const c = new Claim(t, canonicalInput(tmpl(t, T_SET)), live, ln, claimCount(), host);
  const s = claimCanAdd(c, v);
  if (s == RESERVED) return OPEN_RESERVED;
  if (s < 0) return OPEN_NONE;
  const ci = pushClaim(c);
  // What opening keeps depends on v only through its requests and its daemon port conflicts (claimAdd drops
  // the conflicting types, fullFilter those its requests do not fit): versions without conflicts share the
  // memo by request class (the top bit keeps the two kinds of key apart). In consolidation simulations every
  // Deployment is a version of its own, so keyed by version nearly every opening missed.
  const key = listLen(ver(v, V_DG_CONFLICT)) == 0
    ? (<u64>1 << 63) | (<u64>unchecked(reqClass[v]) << 32) | <u64>(<u32>s)
    : (<u64>v << 32) | <u64>(<u32>s);
  // Opened with every type allowed and within limits, and no daemon port conflict (claimAdd clears it on one later).
  c.clean = all && listLen(ver(v, V_DG_CONFLICT)) == 0 && compatFor(s, t).allowsAll();
  if (all && wasOpened(t, key)) {
    const o = openedAs(t, key);
    reopen(c, v, s, lim, o.live, o.reserved);
  }
  else {
    claimAdd(c, v, s);
    fullFilter(c);
    subtractMaxCapacity(c, lim);
    if (all) rememberOpened(t, key, c);
  }
  levelMove(ci, 0, 1);
  return ci;
}

/** What claimAdd, fullFilter and subtractMaxCapacity made of the same (template, s, v or request class) before. */
function reopen(c: Claim, v: i32, s: i32, lim: Float64Array, live: Int32Array, reserved: Float64Array): void {
  c.live.set(live);
  c.liveLen = live.length;
  c.set = s;
  // The reservations claimCanAdd found for this claim (not part of the memo: counts change as claims hold them).
  commitReservations(c);
  addRequests(v, c.total);
  addPorts(v, c.ports);
  c.pods++;
  c.reserved = reserved.slice();
  for (let d = 0; d <= LIMIT_DIMS; d++) unchecked((lim[d] -= c.reserved[d]));
}

/** Moves claim ci from pod-count level `from` (0 = not in any level) to level `to`. */
function levelMove(ci: i32, from: i32, to: i32): void {
  const w = ci >>> 5;
  const bit: u32 = 1 << (ci & 31);
  if (w >= levelWords) {
    let nw = levelWords * 2;
    while (nw <= w) nw *= 2;
    for (let L = 0; L < levels.length; L++) {
      const n = new Uint32Array(nw);
      n.set(unchecked(levels[L]));
      unchecked((levels[L] = n));
      const e = new Uint32Array(summaryWords(nw));
      e.set(unchecked(nonEmpty[L]));
      unchecked((nonEmpty[L] = e));
    }
    levelWords = nw;
  }
  while (levels.length <= to) {
    levels.push(new Uint32Array(levelWords));
    nonEmpty.push(new Uint32Array(summaryWords(levelWords)));
    levelCount = growI32(levelCount, levels.length);
  }
  const sw = w >>> 5;
  const sbit: u32 = 1 << (w & 31);
  if (from > 0) {
    const b = unchecked(levels[from]);
    unchecked((b[w] &= ~bit));
    if (unchecked(b[w]) == 0) unchecked((nonEmpty[from][sw] &= ~sbit));
    unchecked((levelCount[from] -= 1));
  }
  unchecked((levels[to][w] |= bit));
  unchecked((nonEmpty[to][sw] |= sbit));
  unchecked((levelCount[to] += 1));
}

/** Words of a level's non-empty summary for `words` words of claim bits. */
function summaryWords(words: i32): i32 {
  return (words + 31) >>> 5;
}

function growI32(a: Int32Array, n: i32): Int32Array {
  if (a.length >= n) return a;
  const b = new Int32Array(max(n, a.length * 2));
  b.set(a);
  return b;
}

export { N_SET, node, limitsOf, maxCapacity, fullFilter };
