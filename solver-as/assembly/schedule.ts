// Karpenter's provisioning loop (docs/karpenter/scheduling.md §2.4-§2.6), step for step as the reference solver
// runs it: pods in queue order; each tries existing nodes, then in-flight NodeClaims (fewest pods first),
// then a new NodeClaim per template in weight order; on failure one preference is relaxed at a time
// (pre-computed as a chain of pod-class versions); a full pass without progress ends the solve.
import {
  E_FAILED, E_NO_TEMPLATES, E_RESERVED, FLAG_STRICT_MIN_VALUES, N_SET, NF_BLOCKED_FOR_MOVED, P_MOVED, P_VERSION, T_SET, T_TAINTSET,
  V_DG_CONFLICT, V_INV_SELECT, V_NEXT, V_OWNED,
} from '../abi';
import { FLAGS, NLD, NN, NP, NT, NV, listLen, node, pod, tmpl, ver } from './layout';
import { canonicalInput } from './sets';
import {
  Claim, addPorts, addRequests, claimAt, claimCount, exceedsRoom, fitsRemaining, nodeAt, pushClaim, subtractRequests, templateLen, templateStart,
} from './state';
import { allWithinLimits, limitsOf, maxCapacity, openedAs, rememberOpened, resetLimits, subtractMaxCapacity, wasOpened, withinLimits } from './limits';
import { indexClaim, quickAllowed, quickIndexed } from './quick';
import { ensureHost, prepareQuick, quickReject, record, versionEpoch } from './topology';
import { commitReservations } from './reservations';
import { firstClaimWordWithRoom, firstNodeWordWithRoom, markRoomDead, reqClass, resetRoom, roomDead, roomDeadNodes, setGrowing } from './room';
import { RESERVED, claimAdd, claimCanAdd, fullFilter, nodeCanAdd, resetCanAdd } from './canadd';

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
 * reason that can pass later (a zone spread's skew, an affinity target not there yet): while the epoch is
 * unchanged the claim is skipped without re-evaluating it. (Claims only narrow, so a wider claim that
 * failed cannot pass just by narrowing.)
 */
let failedAt: Array<Int32Array> = new Array<Int32Array>();
/** Existing nodes with NF_BLOCKED_FOR_MOVED, masked out a word at a time for moved pods. */
let blockedForMoved: Uint32Array = new Uint32Array(0);

/** Work counters for benchmarks: [claim checks, node checks, dead skips, pod attempts, ...]; [7]: claims out of room for the request class. */
export let counters: Int32Array = new Int32Array(8);

export function resetSchedule(): void {
  counters = new Int32Array(8);
  placement = new Int32Array(NP);
  placedVersion = new Int32Array(NP);
  errors = new Int32Array(NP);
  for (let p = 0; p < NP; p++) unchecked((placement[p] = -1));
  levels = new Array<Uint32Array>();
  nonEmpty = new Array<Uint32Array>();
  levelWords = 8;
  levels.push(new Uint32Array(levelWords));
  nonEmpty.push(new Uint32Array(summaryWords(levelWords)));
  levelCount = new Int32Array(8);
  resetLimits();
  resetCanAdd((FLAGS & FLAG_STRICT_MIN_VALUES) != 0);
  dead = new Array<Uint32Array>(NV);
  deadNodes = new Array<Uint32Array>(NV);
  deadCount = new Int32Array(NV);
  failedAt = new Array<Int32Array>(NV);

  topologyFree = new Uint8Array(NV);
  const nodeWords = (NN >>> 5) + 1;
  for (let v = 0; v < NV; v++) {
    unchecked((dead[v] = new Uint32Array(8)));
    unchecked((failedAt[v] = new Int32Array(0)));
    unchecked((deadNodes[v] = new Uint32Array(nodeWords)));
    unchecked((topologyFree[v] = listLen(ver(v, V_OWNED)) == 0 && listLen(ver(v, V_INV_SELECT)) == 0 ? 1 : 0));
  }
  resetRoom(nodeWords);
  blockedForMoved = new Uint32Array(nodeWords);
  for (let n = 0; n < NN; n++) if ((nodeAt(n).flags & NF_BLOCKED_FOR_MOVED) != 0) unchecked((blockedForMoved[n >>> 5] |= 1 << (n & 31)));
}

function markDead(v: i32, i: i32): void {
  if (setGrowing(dead, v, i)) unchecked((deadCount[v] += 1));
}

function markFailed(v: i32, ci: i32, epoch: i32): void {
  let f = unchecked(failedAt[v]);
  if (ci >= f.length) {
    const n = new Int32Array(max(f.length * 2, ci + 16));
    n.set(f);
    unchecked((failedAt[v] = n));
    f = n;
  }
  unchecked((f[ci] = epoch + 1));
}

@inline function stillFailed(v: i32, ci: i32, epoch: i32): bool {
  const f = unchecked(failedAt[v]);
  return ci < f.length && unchecked(f[ci]) == epoch + 1;
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
    if (lastReserved) return false;
    v = ver(v, V_NEXT);
  }
  return false;
}

function addPod(p: i32, v: i32, moved: bool): bool {
  lastReserved = false;
  const dn = unchecked(deadNodes[v]);
  const free = unchecked(topologyFree[v]) != 0;
  const rc = unchecked(reqClass[v]);
  const rn = unchecked(roomDeadNodes[rc]);
  // Existing nodes in index order, 32 at a time: the dead ones for this version, those its requests are out of
  // room on, and (for moved pods) the blocked ones are masked out of each word, so a pod skips a full cluster in
  // NN / 32 word reads.
  const nodeWords = (NN + 31) >>> 5;
  const lastWord: u32 = (NN & 31) != 0 ? (<u32>1 << <u32>(NN & 31)) - 1 : 0xffffffff;
  for (let w = firstNodeWordWithRoom(rc, nodeWords, lastWord); w < nodeWords; w++) {
    let x = ~(unchecked(dn[w]) | unchecked(rn[w]));
    if (moved) x &= ~unchecked(blockedForMoved[w]);
    if (w == nodeWords - 1) x &= lastWord;
    while (x != 0) {
      const n = (w << 5) + <i32>ctz(x);
      x &= x - 1;
      const ns = nodeAt(n);
      // nodeCanAdd's answer would be -2 (room.ts).
      if (!fitsRemaining(v, ns.remaining)) {
        unchecked((rn[w] |= 1 << (n & 31)));
        continue;
      }
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
  }
  const dv = unchecked(dead[v]);
  const rd = unchecked(roomDead[rc]);
  const cw = firstClaimWordWithRoom(rc);
  const s0 = cw >>> 5;
  unchecked((counters[3] += 1));
  const epoch = free ? 0 : versionEpoch(v);
  if (!free) prepareQuick(v);
  // With every key of the attempt indexed, quick rejection masks whole words (quick.ts); the claims it
  // rejects are the ones quickReject would, so the claims evaluated are the same.
  const indexed = !free && quickIndexed();
  // In-flight NodeClaims in Karpenter's order (fewest pods first, then oldest): level by level, and within a
  // level by creation index, reading whole words of claim bits with the claims dead for this version
  // masked out.
  for (let L = 1; L < levels.length; L++) {
    if (unchecked(levelCount[L]) == 0) continue;
    const b = unchecked(levels[L]);
    const ne = unchecked(nonEmpty[L]);
    for (let si = s0; si < ne.length; si++) {
      let y = unchecked(ne[si]);
      if (si == s0) y &= ~((<u32>1 << <u32>(cw & 31)) - 1);
      while (y != 0) {
        const wi = (si << 5) + <i32>ctz(y);
        y &= y - 1;
        let x = unchecked(b[wi]);
        if (wi < dv.length) x &= ~unchecked(dv[wi]);
        if (wi < rd.length) x &= ~unchecked(rd[wi]);
        if (indexed) {
          const q = x & quickAllowed(wi);
          unchecked((counters[6] += <i32>popcnt(x & ~q)));
          x = q;
        }
        while (x != 0) {
          const ci = (wi << 5) + <i32>ctz(x);
          x &= x - 1;
          if (!free && stillFailed(v, ci, epoch)) {
            unchecked((counters[5] += 1));
            continue;
          }
          const c = claimAt(ci);
          if (!free && !indexed && quickReject(c.set)) {
            unchecked((counters[6] += 1));
            continue;
          }
          // claimCanAdd's answer would be -2 (room.ts); skipping it only leaves memo tables unfilled.
          if (exceedsRoom(c.total, v, c.room)) {
            markRoomDead(rc, ci);
            unchecked((counters[7] += 1));
            continue;
          }
          unchecked((counters[0] += 1));
          const s = claimCanAdd(c, v);
          if (s < 0) {
            // Reserved capacity can be given back by another claim: neither dead nor tied to the topology epoch.
            if (s == RESERVED) continue;
            if (free || s == -2) markDead(v, ci);
            else {
              markFailed(v, ci, epoch);
              unchecked((counters[4] += 1));
            }
            continue;
          }
          levelMove(ci, L, L + 1);
          claimAdd(c, v, s);
          indexClaim(ci, c.set);
          record(v, c.set, tmpl(c.tmpl, T_TAINTSET), c.host);
          unchecked((placement[p] = -(ci + 2)));
          unchecked((placedVersion[p] = v));
          return true;
        }
      }
    }
  }
  if (NT == 0) {
    unchecked((errors[p] = E_NO_TEMPLATES));
    return false;
  }
  for (let t = 0; t < NT; t++) {
    const lim = limitsOf(t);
    if (unchecked(lim[0]) <= 0) continue;
    const n = templateLen(t);
    const start = templateStart(t);
    const live = new Int32Array(n);
    let ln = 0;
    const all = allWithinLimits(t, lim);
    if (all) for (; ln < n; ln++) unchecked((live[ln] = ln));
    else for (let j = 0; j < n; j++) if (withinLimits(start + j, lim)) unchecked((live[ln++] = j));
    if (ln == 0) continue;
    const host = NN + claimCount();
    ensureHost(host);
    const c = new Claim(t, canonicalInput(tmpl(t, T_SET)), live, ln, claimCount(), host);
    const s = claimCanAdd(c, v);
    if (s == RESERVED) {
      // Reserved capacity is contended in this pool: no fallback to lower-weight templates (§2.6).
      unchecked((errors[p] = E_RESERVED));
      lastReserved = true;
      return false;
    }
    if (s < 0) continue;
    const ci = pushClaim(c);
    // What opening keeps depends on v only through its requests and its daemon port conflicts (claimAdd drops
    // the conflicting types, fullFilter those its requests do not fit): versions without conflicts share the
    // memo by request class (the top bit keeps the two kinds of key apart). In consolidation simulations every
    // Deployment is a version of its own, so keyed by version nearly every opening missed.
    const key = listLen(ver(v, V_DG_CONFLICT)) == 0
      ? (<u64>1 << 63) | (<u64>rc << 32) | <u64>(<u32>s)
      : (<u64>v << 32) | <u64>(<u32>s);
    if (all && wasOpened(t, key)) {
      // What claimAdd, fullFilter and subtractMaxCapacity below made of the same (template, s, v or request
      // class) before.
      const o = openedAs(t, key);
      c.live.set(o.live);
      c.liveLen = o.live.length;
      c.set = s;
      // The reservations claimCanAdd found for this claim (not part of the memo: counts change as claims hold them).
      commitReservations(c);
      addRequests(v, c.total);
      addPorts(v, c.ports);
      c.pods++;
      c.reserved = o.reserved.slice();
      for (let d = 0; d <= NLD; d++) unchecked((lim[d] -= c.reserved[d]));
    } else {
      claimAdd(c, v, s);
      fullFilter(c);
      subtractMaxCapacity(c, lim);
      if (all) rememberOpened(t, key, c);
    }
    indexClaim(ci, c.set);
    levelMove(ci, 0, 1);
    record(v, c.set, tmpl(t, T_TAINTSET), c.host);
    unchecked((placement[p] = -(ci + 2)));
    unchecked((placedVersion[p] = v));
    return true;
  }
  unchecked((errors[p] = E_FAILED));
  return false;
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
