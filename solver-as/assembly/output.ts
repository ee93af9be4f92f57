// Writes the result block (solver-as/abi.ts): placements, failure codes, and the NodeClaims with their
// instance types ordered by price (ties: catalog order) and truncated, and the requirement sets they need.
import {
  C_CHEAPEST, C_FLAGS, PLACED_CLAIM_BASE, C_ITS, C_NPODS, C_RESV, C_SET, C_STRIDE, C_TMPL, CF_LAUNCH, FLAG_IMPROVE, E_MIN_VALUES, FLAG_STRICT_MIN_VALUES, R_CLAIMS, R_ERRORS,
  R_IMPROVED, R_NCLAIMS, R_NSETS, R_PLACEMENTS, R_SETS, R_STATUS, R_TRUNCATED, R_WORDS, R_WORK, S_OK,
} from '../abi';
import { FLAGS, PODS, SET_BYTES } from './layout';
import { compatFor, minValuesMet } from './its';
import { errors, placement } from './schedule';
import { setAddr } from './sets';
import { truncated, workSpent } from './budget';
import { Claim, claimAt, claimCount, templateStart } from './state';
import { KeptList, keepLists, keptList, keptListCount, keptListOf } from './kept';

/**
 * Orders each claim's instance types by price and truncates them (kept.ts); fails claims whose minValues break.
 */
export function finalizeClaims(): void {
  keepLists();
  if ((FLAGS & FLAG_STRICT_MIN_VALUES) == 0) return;
  const n = claimCount();
  for (let ci = 0; ci < n; ci++) {
    const c = claimAt(ci);
    if (c.pods > 0) failBrokenMinValues(c, ci);
  }
}

/** minValues (Strict) on the claim's kept types; when broken, its pods fail with E_MIN_VALUES. */
function failBrokenMinValues(c: Claim, ci: i32): void {
  const kept = c.liveLen;
  const globalList = new Int32Array(kept);
  const start = templateStart(c.tmpl);
  for (let x = 0; x < kept; x++) unchecked((globalList[x] = start + unchecked(c.live[x])));
  if (minValuesMet(c.set, globalList, kept)) return;
  // The pods keep pointing at the claim (their error says they are not placed), so the decoder can
  // name its NodePool and the labels that lost their minValues.
  for (let p = 0; p < PODS; p++) {
    if (unchecked(placement[p]) == PLACED_CLAIM_BASE - ci) unchecked((errors[p] = E_MIN_VALUES));
  }
  c.pods = 0;
}

let OUT: usize = 0;
@inline function w(i: i32, v: i32): void {
  store<i32>(OUT + (<usize>i << 2), v);
}

/** Where the result block's sections go (word indices; the sets at a byte offset). */
class Layout {
  /** The distinct requirement sets of the claims, in first-use order, and each claim's index among them. */
  setIds: Array<i32> = new Array<i32>();
  setOf: Int32Array;
  claims: i32;
  lists: i32;
  /** Words of the instance-type lists and the reservation lists. */
  listWords: i32 = 0;
  setsOff: i32 = 0;
  bytes: i32 = 0;
  constructor(n: i32) {
    this.setOf = new Int32Array(n);
    this.claims = R_WORDS + 2 * PODS;
    this.lists = this.claims + n * C_STRIDE;
  }
}

function layout(): Layout {
  const n = claimCount();
  const out = new Layout(n);
  const setIndex = new Map<i32, i32>();
  for (let ci = 0; ci < n; ci++) {
    const c = claimAt(ci);
    if (!setIndex.has(c.set)) {
      setIndex.set(c.set, out.setIds.length);
      out.setIds.push(c.set);
    }
    unchecked((out.setOf[ci] = setIndex.get(c.set)));
    if (c.held.length > 0) out.listWords += 1 + c.held.length;
  }
  for (let li = 0; li < keptListCount(); li++) out.listWords += 1 + keptList(li).len * 2;
  out.setsOff = ((out.lists + out.listWords) * 4 + 7) & ~7;
  out.bytes = out.setsOff + out.setIds.length * SET_BYTES;
  return out;
}

/** Writes the result block (solver-as/abi.ts) and returns its address. */
export function writeResult(improved: i32): usize {
  const l = layout();
  const base = heap.alloc(<usize>l.bytes);
  OUT = base;
  writeHeader(l, improved);
  for (let p = 0; p < PODS; p++) {
    w(R_WORDS + p, unchecked(placement[p]));
    w(R_WORDS + PODS + p, unchecked(errors[p]));
  }
  // The lists (each once: NodeClaims of similar size share one), then the claim records pointing at them.
  const listPos = new Int32Array(keptListCount());
  let at = l.lists;
  for (let li = 0; li < keptListCount(); li++) {
    unchecked((listPos[li] = at));
    at = writeList(keptList(li), at);
  }
  for (let ci = 0; ci < claimCount(); ci++) at = writeClaim(ci, l, listPos, at);
  for (let i = 0; i < l.setIds.length; i++) {
    memory.copy(base + <usize>(l.setsOff + i * SET_BYTES), setAddr(unchecked(l.setIds[i])), <usize>SET_BYTES);
  }
  return base;
}

function writeHeader(l: Layout, improved: i32): void {
  w(R_STATUS, S_OK);
  w(R_NCLAIMS, claimCount());
  w(R_PLACEMENTS, R_WORDS);
  w(R_ERRORS, R_WORDS + PODS);
  w(R_CLAIMS, l.claims);
  w(R_NSETS, l.setIds.length);
  w(R_SETS, l.setsOff);
  w(R_IMPROVED, improved);
  w(R_TRUNCATED, truncated() ? 1 : 0);
  w(R_WORK, <i32>Math.min(Math.ceil(workSpent() / 1000), <f64>i32.MAX_VALUE));
}

/** A list: [count, (global type index, price in micro-dollars) x count]; returns the word after it. */
function writeList(k: KeptList, at: i32): i32 {
  const compat = compatFor(k.set, k.tmpl);
  const start = templateStart(k.tmpl);
  w(at, k.len);
  for (let x = 0; x < k.len; x++) {
    const j = unchecked(k.types[x]);
    w(at + 1 + 2 * x, start + j);
    w(at + 2 + 2 * x, <i32>Math.round(unchecked(compat.price[j])));
  }
  return at + 1 + k.len * 2;
}

/** Claim ci's record (and its reservation list at `at`); returns the word after what it wrote. */
function writeClaim(ci: i32, l: Layout, listPos: Int32Array, at: i32): i32 {
  const c = claimAt(ci);
  const rec = l.claims + ci * C_STRIDE;
  if (c.held.length > 0) {
    w(rec + C_RESV, at);
    w(at, c.held.length);
    for (let i = 0; i < c.held.length; i++) w(at + 1 + i, unchecked(c.held[i]));
    at += 1 + c.held.length;
  } else {
    w(rec + C_RESV, -1);
  }
  const compat = compatFor(c.set, c.tmpl);
  w(rec + C_TMPL, c.tmpl);
  w(rec + C_SET, unchecked(l.setOf[ci]));
  w(rec + C_ITS, unchecked(listPos[keptListOf(ci)]));
  w(rec + C_NPODS, c.pods);
  w(rec + C_CHEAPEST, c.liveLen > 0 ? <i32>Math.round(unchecked(compat.price[unchecked(c.live[0])])) : -1);
  w(rec + C_FLAGS, (FLAGS & FLAG_IMPROVE) != 0 ? CF_LAUNCH : 0);
  return at;
}
