// What each of the solve's NodeClaims keeps at the end (the reference's finalize, docs/karpenter/scheduling.md §2.16): the
// instance types still listed, allowed by its final set and holding its total, in price order (ties: catalog
// order), at most MAX_ITS; NodeClaims with equal lists share one (the result block writes each once).
//
// Most NodeClaims of a solve share a few dozen lists, and walking every claim's types one by one is claims x types
// work (4,000 x 400 in Karpenter's benchmark). A `clean` claim (state.ts) lost types only because its total
// outgrew them: its list is its set's price order without the allowed types its total does not fit, and those are
// found by a binary search per resource over the template's types ordered by room (allocatable minus daemonset
// overhead). The claim's list is then named by (set, template, those types), a few words, and built once.
import { DG_OVERHEAD, IT_ALLOC, IT_DG } from '../abi';
import { MAX_ITS, RESOURCES, TEMPLATES, dg, f64At, it } from './layout';
import { Compat, compatFor } from './its';
import { Claim, REMOVED_TYPE, claimAt, claimCount, templateLen, templateStart, totalFits } from './state';

/** One list of kept instance types (template-local indices, in price order) and the set and template that price it. */
export class KeptList {
  constructor(readonly set: i32, readonly tmpl: i32, readonly types: Int32Array, readonly len: i32, readonly excluded: Int32Array | null) {}
}

let lists: Array<KeptList> = new Array<KeptList>();
/** Claim -> its list. */
let listOf: Int32Array = new Int32Array(0);
/** List ids by hash; chains of equal hashes through nextSameHash. */
let byHash: Map<u64, i32> = new Map<u64, i32>();
let nextSameHash: Array<i32> = new Array<i32>();
/** Per template, lazily: its types in ascending room per resource (see Rooms). */
let rooms: Array<Rooms | null> = new Array<Rooms | null>();
/** All allocatables and daemonset overheads are exact integers, so fitting is comparing a total with a room. */
let exact = false;
/** mark[j] == stamp: type j seen in this claim's walk (stamps: never cleared). */
let mark: Int32Array = new Int32Array(0);
let stamp = 0;
let scratch: Int32Array = new Int32Array(0);

/** A template's instance types ordered by room (allocatable minus daemonset overhead) per resource, ascending. */
class Rooms {
  /** order[r * n + i]: the local type with the i-th smallest room in resource r. */
  readonly order: Int32Array;
  readonly room: Float64Array;
  constructor(readonly n: i32, start: i32) {
    this.order = new Int32Array(RESOURCES * n);
    this.room = new Float64Array(RESOURCES * n);
    for (let r = 0; r < RESOURCES; r++) {
      sortKeys = new Array<f64>(n);
      const idx = new Array<i32>(n);
      for (let j = 0; j < n; j++) {
        unchecked((sortKeys[j] = netRoom(start + j, r)));
        unchecked((idx[j] = j));
      }
      idx.sort(byRoom);
      for (let i = 0; i < n; i++) {
        const j = unchecked(idx[i]);
        unchecked((this.order[r * n + i] = j));
        unchecked((this.room[r * n + i] = unchecked(sortKeys[j])));
      }
    }
  }

  /** How many types have less room in resource r than `total` (those do not hold it). */
  below(r: i32, total: f64): i32 {
    let lo = 0;
    let hi = this.n;
    const base = r * this.n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (unchecked(this.room[base + mid]) < total) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** The rooms Rooms' constructor sorts by (a module global: AssemblyScript closures cannot capture locals). */
let sortKeys: Array<f64> = new Array<f64>();
function byRoom(a: i32, b: i32): i32 {
  const d = unchecked(sortKeys[a]) - unchecked(sortKeys[b]);
  return d < 0 ? -1 : d > 0 ? 1 : a - b;
}

@inline function netRoom(gi: i32, r: i32): f64 {
  return f64At(it(gi, IT_ALLOC) + r) - f64At(dg(it(gi, IT_DG), DG_OVERHEAD) + r);
}

@inline function isExactInteger(x: f64): bool {
  return Math.abs(x) <= 9007199254740991 && x == Math.floor(x);
}

function resetKept(): void {
  lists = new Array<KeptList>();
  listOf = new Int32Array(claimCount());
  byHash = new Map<u64, i32>();
  nextSameHash = new Array<i32>();
  rooms = new Array<Rooms | null>(TEMPLATES);
  let longest = 0;
  exact = true;
  for (let t = 0; t < TEMPLATES; t++) {
    const n = templateLen(t);
    longest = max(longest, n);
    const start = templateStart(t);
    for (let j = 0; j < n && exact; j++) {
      for (let r = 0; r < RESOURCES; r++) {
        const gi = start + j;
        if (!isExactInteger(f64At(it(gi, IT_ALLOC) + r)) || !isExactInteger(f64At(dg(it(gi, IT_DG), DG_OVERHEAD) + r))) exact = false;
      }
    }
  }
  mark = new Int32Array(longest);
  stamp = 0;
  scratch = new Int32Array(longest);
}

/** Decides every claim's list (call once, after the search and the improvement phase). */
export function keepLists(): void {
  resetKept();
  const n = claimCount();
  for (let ci = 0; ci < n; ci++) unchecked((listOf[ci] = listFor(claimAt(ci))));
}

export function keptListCount(): i32 {
  return lists.length;
}
export function keptList(i: i32): KeptList {
  return unchecked(lists[i]);
}
/** The list claim ci keeps. */
export function keptListOf(ci: i32): i32 {
  return unchecked(listOf[ci]);
}

/** Decides claim c's list; afterwards c.live and c.liveLen are that list (possibly shared with other claims: read only). */
function listFor(c: Claim): i32 {
  const compat = compatFor(c.set, c.tmpl);
  if (c.clean && exact && c.held.length == 0 && c.liveLen > 0 && totalIsExact(c) && fewDoNotFit(c)) {
    const li = cleanList(c, compat);
    const l = unchecked(lists[li]);
    c.live = l.types;
    c.liveLen = l.len;
    return li;
  }
  walkedList(c, compat);
  return internWalked(c);
}

function totalIsExact(c: Claim): bool {
  for (let r = 0; r < RESOURCES; r++) if (!isExactInteger(unchecked(c.total[r]))) return false;
  return true;
}

// ---- clean claims: the set's price order without the types the total does not fit ----

/**
 * At most a quarter of the template's types lack room for the claim's total in some resource (counted per
 * resource, so an upper bound on the types excluded): then naming the list by them is cheaper than walking it.
 * A large NodeClaim that only the biggest types hold is walked.
 */
function fewDoNotFit(c: Claim): bool {
  const rs = roomsOf(c.tmpl);
  let below = 0;
  for (let r = 0; r < RESOURCES; r++) below += rs.below(r, unchecked(c.total[r]));
  return below * 4 <= rs.n;
}

function roomsOf(t: i32): Rooms {
  let rm = rooms[t];
  if (rm == null) {
    rm = new Rooms(templateLen(t), templateStart(t));
    unchecked((rooms[t] = rm));
  }
  return changetype<Rooms>(rm);
}

function cleanList(c: Claim, compat: Compat): i32 {
  const ex = excludedTypes(c, compat);
  let h: u64 = 1469598103934665603;
  h = (h ^ <u64>c.set) * 1099511628211;
  h = (h ^ <u64>c.tmpl) * 1099511628211;
  h = (h ^ 0xc1ea) * 1099511628211;
  for (let i = 0; i < ex; i++) h = (h ^ <u64>unchecked(scratch[i])) * 1099511628211;
  let li = byHash.has(h) ? byHash.get(h) : -1;
  while (li >= 0 && !sameExcluded(unchecked(lists[li]), c, ex)) li = unchecked(nextSameHash[li]);
  if (li >= 0) return li;
  const excluded = scratch.slice(0, ex);
  const types = new Int32Array(min(compat.byPrice().length, max(MAX_ITS, 0)));
  stamp++;
  for (let i = 0; i < ex; i++) unchecked((mark[unchecked(excluded[i])] = stamp));
  const sorted = compat.byPrice();
  let k = 0;
  for (let x = 0; x < sorted.length && k < types.length; x++) {
    const j = unchecked(sorted[x]);
    if (unchecked(mark[j]) != stamp) unchecked((types[k++] = j));
  }
  return addList(h, new KeptList(c.set, c.tmpl, types, k, excluded));
}

/**
 * The allowed types claim c's total does not fit, ascending, into scratch (returns how many): per resource, the
 * types with less room than the total (exact integers: total + overhead > allocatable is total > room).
 */
function excludedTypes(c: Claim, compat: Compat): i32 {
  const rs = roomsOf(c.tmpl);
  stamp++;
  let n = 0;
  for (let r = 0; r < RESOURCES; r++) {
    const below = rs.below(r, unchecked(c.total[r]));
    const base = r * rs.n;
    for (let i = 0; i < below; i++) {
      const j = unchecked(rs.order[base + i]);
      if (unchecked(mark[j]) == stamp || unchecked(compat.ok[j]) == 0) continue;
      unchecked((mark[j] = stamp));
      unchecked((scratch[n++] = j));
    }
  }
  // Ascending (insertion sort: a handful of types).
  for (let i = 1; i < n; i++) {
    const v = unchecked(scratch[i]);
    let k = i - 1;
    while (k >= 0 && unchecked(scratch[k]) > v) {
      unchecked((scratch[k + 1] = scratch[k]));
      k--;
    }
    unchecked((scratch[k + 1] = v));
  }
  return n;
}

function sameExcluded(l: KeptList, c: Claim, ex: i32): bool {
  if (l.excluded == null || l.set != c.set || l.tmpl != c.tmpl) return false;
  const e = changetype<Int32Array>(l.excluded);
  if (e.length != ex) return false;
  for (let i = 0; i < ex; i++) if (unchecked(e[i]) != unchecked(scratch[i])) return false;
  return true;
}

// ---- other claims: their types walked one by one ----

/**
 * Rewrites the claim's `live` as the types it keeps: those still listed, allowed by its set and holding its
 * total, by price (ties: catalog order), at most MAX_ITS of them. The set's price order is shared by every claim
 * with that set and holds every allowed type.
 */
function walkedList(c: Claim, compat: Compat): void {
  const live = c.live;
  stamp++;
  for (let x = 0; x < c.liveLen; x++) {
    const j = unchecked(live[x]);
    if (j != REMOVED_TYPE) unchecked((mark[j] = stamp));
  }
  const sorted = compat.byPrice();
  const start = templateStart(c.tmpl);
  const total = c.total.dataStart;
  // A claim holding reservations is finished by the decoder (engine/abi/decode.ts): its final requirements
  // launch into a held reservation, which changes prices and order, so it keeps every type until then.
  const limit = c.held.length > 0 ? i32.MAX_VALUE : MAX_ITS;
  let k = 0;
  for (let x = 0; x < sorted.length && k < limit; x++) {
    const j = unchecked(sorted[x]);
    if (unchecked(mark[j]) == stamp && totalFits(start + j, total)) unchecked((live[k++] = j));
  }
  c.liveLen = k;
}

function internWalked(c: Claim): i32 {
  let h: u64 = 1469598103934665603;
  h = (h ^ <u64>c.set) * 1099511628211;
  h = (h ^ <u64>c.tmpl) * 1099511628211;
  for (let x = 0; x < c.liveLen; x++) h = (h ^ <u64>unchecked(c.live[x])) * 1099511628211;
  let li = byHash.has(h) ? byHash.get(h) : -1;
  while (li >= 0 && !sameTypes(unchecked(lists[li]), c)) li = unchecked(nextSameHash[li]);
  if (li >= 0) return li;
  return addList(h, new KeptList(c.set, c.tmpl, c.live, c.liveLen, null));
}

function sameTypes(l: KeptList, c: Claim): bool {
  if (l.excluded != null || l.set != c.set || l.tmpl != c.tmpl || l.len != c.liveLen) return false;
  for (let x = 0; x < l.len; x++) if (unchecked(l.types[x]) != unchecked(c.live[x])) return false;
  return true;
}

function addList(h: u64, l: KeptList): i32 {
  const li = lists.length;
  lists.push(l);
  nextSameHash.push(byHash.has(h) ? byHash.get(h) : -1);
  byHash.set(h, li);
  return li;
}
