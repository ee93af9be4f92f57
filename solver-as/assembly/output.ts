// Writes the result block (solver-as/abi.ts): placements, failure codes, and the NodeClaims with their
// instance types ordered by price (ties: catalog order) and truncated, and the requirement sets they need.
import {
  C_CHEAPEST, C_FLAGS, C_ITS, C_NPODS, C_RESV, C_SET, C_STRIDE, C_TMPL, CF_LAUNCH, FLAG_IMPROVE, E_MIN_VALUES, FLAG_STRICT_MIN_VALUES, R_CLAIMS, R_ERRORS,
  R_IMPROVED, R_NCLAIMS, R_NSETS, R_PLACEMENTS, R_SETS, R_STATUS, R_TRUNCATED, R_WORDS, R_WORK, S_OK,
} from '../abi';
import { FLAGS, MAX_ITS, NP, NT, SET_BYTES } from './layout';
import { compatFor, minValuesMet } from './its';
import { errors, placement } from './schedule';
import { setAddr } from './sets';
import { truncated, workSpent } from './budget';
import { Claim, claimAt, claimCount, templateLen, templateStart, totalFits } from './state';

/**
 * Orders each claim's instance types by price and truncates them; fails claims whose minValues break.
 * The exact filter (what fullFilter does) runs fused with marking the types that remain, in one scratch
 * array cleared as the price-ordered walk reads it: no allocation per claim.
 */
export function finalizeClaims(): void {
  const strict = (FLAGS & FLAG_STRICT_MIN_VALUES) != 0;
  const n = claimCount();
  let longest = 0;
  for (let t = 0; t < NT; t++) longest = max(longest, templateLen(t));
  const mark = new Uint8Array(longest);
  for (let ci = 0; ci < n; ci++) {
    const c = claimAt(ci);
    const compat = compatFor(c.set, c.tmpl);
    const ok = compat.ok;
    const start = templateStart(c.tmpl);
    const live = c.live;
    const total = c.total.dataStart;
    let count = 0;
    for (let x = 0; x < c.liveLen; x++) {
      const j = unchecked(live[x]);
      if (j < 0 || unchecked(ok[j]) == 0 || !totalFits(start + j, total)) continue;
      unchecked((mark[j] = 1));
      count++;
    }
    // Price order (ties: catalog order) from the set's sorted list, shared by every claim with this set; it
    // holds every allowed type, so every mark is read (and cleared) on the way.
    const sorted = compat.byPrice();
    // A claim holding reservations is finished by the decoder (engine/abi/decode.ts): its final requirements
    // launch into a held reservation, which changes prices and order, so it keeps every type until then.
    const kept = c.held.length > 0 ? count : min(count, MAX_ITS);
    let k = 0;
    for (let x = 0; x < sorted.length; x++) {
      const j = unchecked(sorted[x]);
      if (unchecked(mark[j]) == 0) continue;
      unchecked((mark[j] = 0));
      if (k < kept) unchecked((live[k++] = j));
    }
    c.liveLen = kept;
    if (strict && c.pods > 0) {
      const globalList = new Int32Array(kept);
      for (let x = 0; x < kept; x++) unchecked((globalList[x] = start + unchecked(live[x])));
      if (!minValuesMet(c.set, globalList, kept)) {
        // The pods keep pointing at the claim (their error says they are not placed), so the decoder can
        // name its NodePool and the labels that lost their minValues.
        for (let p = 0; p < NP; p++) {
          if (unchecked(placement[p]) == -(ci + 2)) unchecked((errors[p] = E_MIN_VALUES));
        }
        c.pods = 0;
      }
    }
  }
}

let OUT: usize = 0;
@inline function w(i: i32, v: i32): void {
  store<i32>(OUT + (<usize>i << 2), v);
}

/** A hash of a claim's final instance-type list (with its set and template, which decide the prices). */
function listHash(c: Claim): u64 {
  let h: u64 = 1469598103934665603;
  h = (h ^ <u64>c.set) * 1099511628211;
  h = (h ^ <u64>c.tmpl) * 1099511628211;
  for (let x = 0; x < c.liveLen; x++) h = (h ^ <u64>unchecked(c.live[x])) * 1099511628211;
  return h;
}

function sameList(a: Claim, b: Claim): bool {
  if (a.set != b.set || a.tmpl != b.tmpl || a.liveLen != b.liveLen) return false;
  for (let x = 0; x < a.liveLen; x++) if (unchecked(a.live[x]) != unchecked(b.live[x])) return false;
  return true;
}

export function writeResult(improved: i32): usize {
  const n = claimCount();
  // Distinct sets used by claims, and distinct instance-type lists (NodeClaims of similar size share one:
  // written once, decoded once).
  const setIds = new Array<i32>();
  const setIndex = new Map<i32, i32>();
  const listOf = new Int32Array(n);
  const listOwner = new Array<i32>();
  const byHash = new Map<u64, i32>();
  let itWords = 0;
  for (let ci = 0; ci < n; ci++) {
    const c = claimAt(ci);
    if (!setIndex.has(c.set)) {
      setIndex.set(c.set, setIds.length);
      setIds.push(c.set);
    }
    const h = listHash(c);
    let li = -1;
    if (byHash.has(h)) {
      const cand = byHash.get(h);
      if (sameList(claimAt(unchecked(listOwner[cand])), c)) li = cand;
    }
    if (li < 0) {
      li = listOwner.length;
      listOwner.push(ci);
      if (!byHash.has(h)) byHash.set(h, li);
      itWords += 1 + c.liveLen * 2;
    }
    unchecked((listOf[ci] = li));
    if (c.held.length > 0) itWords += 1 + c.held.length;
  }
  const words = R_WORDS + 2 * NP + n * C_STRIDE + itWords;
  const setsOff = ((words * 4 + 7) & ~7);
  const total = setsOff + setIds.length * SET_BYTES;
  const base = heap.alloc(<usize>total);
  OUT = base;
  w(R_STATUS, S_OK);
  w(R_NCLAIMS, n);
  w(R_PLACEMENTS, R_WORDS);
  w(R_ERRORS, R_WORDS + NP);
  w(R_CLAIMS, R_WORDS + 2 * NP);
  w(R_NSETS, setIds.length);
  w(R_SETS, setsOff);
  w(R_IMPROVED, improved);
  w(R_TRUNCATED, truncated() ? 1 : 0);
  w(R_WORK, <i32>Math.min(Math.ceil(workSpent() / 1000), <f64>i32.MAX_VALUE));
  for (let p = 0; p < NP; p++) {
    w(R_WORDS + p, unchecked(placement[p]));
    w(R_WORDS + NP + p, unchecked(errors[p]));
  }
  // The lists, then the claim records pointing at them.
  const listPos = new Int32Array(listOwner.length);
  let itPos = R_WORDS + 2 * NP + n * C_STRIDE;
  for (let li = 0; li < listOwner.length; li++) {
    const c = claimAt(unchecked(listOwner[li]));
    const compat = compatFor(c.set, c.tmpl);
    const start = templateStart(c.tmpl);
    unchecked((listPos[li] = itPos));
    w(itPos, c.liveLen);
    for (let x = 0; x < c.liveLen; x++) {
      const j = unchecked(c.live[x]);
      w(itPos + 1 + 2 * x, start + j);
      w(itPos + 2 + 2 * x, <i32>Math.round(unchecked(compat.price[j])));
    }
    itPos += 1 + c.liveLen * 2;
  }
  for (let ci = 0; ci < n; ci++) {
    const c = claimAt(ci);
    const rec = R_WORDS + 2 * NP + ci * C_STRIDE;
    if (c.held.length > 0) {
      w(rec + C_RESV, itPos);
      w(itPos, c.held.length);
      for (let i = 0; i < c.held.length; i++) w(itPos + 1 + i, unchecked(c.held[i]));
      itPos += 1 + c.held.length;
    } else {
      w(rec + C_RESV, -1);
    }
    const compat = compatFor(c.set, c.tmpl);
    w(rec + C_TMPL, c.tmpl);
    w(rec + C_SET, setIndex.get(c.set));
    w(rec + C_ITS, unchecked(listPos[unchecked(listOf[ci])]));
    w(rec + C_NPODS, c.pods);
    w(rec + C_CHEAPEST, c.liveLen > 0 ? <i32>Math.round(unchecked(compat.price[unchecked(c.live[0])])) : -1);
    w(rec + C_FLAGS, (FLAGS & FLAG_IMPROVE) != 0 ? CF_LAUNCH : 0);
  }
  for (let i = 0; i < setIds.length; i++) {
    memory.copy(base + <usize>(setsOff + i * SET_BYTES), setAddr(unchecked(setIds[i])), <usize>SET_BYTES);
  }
  return base;
}
