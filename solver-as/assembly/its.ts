// Instance types a requirement set allows, per template (docs/karpenter/scheduling.md §2.9): compatible with the set
// (Intersects) and with an available offering the set allows; and the cheapest such offering's price.
// Memoised per (set, template): most NodeClaims of a solve share a handful of requirement sets.
import {
  IT_OFFS, IT_NOFFS, IT_REQS, O_AVAILABLE, O_CT, O_PRICE, O_RESV, O_ZONE, SF_COMPLEMENT, SF_EXCL, T_ITS, T_NITS,
} from '../abi';
import { CT_KEY, LABEL_KEYS, RESV_KEY, ZONE_KEY, it, keyWords, listAddr, off, offPrice, tmpl } from './layout';
import { bits, complement, defined, hasValue, minValues, notInOrDne, setAddr } from './sets';

export class Compat {
  /** The allowed local instance types by (price, catalog index); computed on first use. */
  private sorted: Int32Array | null = null;
  /** 1: every type of the template is allowed, 0: not, -1: not counted yet. */
  private all: i32 = -1;
  constructor(
    /** 1 when the template's local instance type i is allowed. */
    readonly ok: Uint8Array,
    /** Cheapest allowed offering, micro-dollars per hour; Infinity when none. */
    readonly price: Float64Array,
  ) {}

  /** Every instance type of the template is allowed. */
  allowsAll(): bool {
    if (this.all < 0) {
      this.all = 1;
      for (let j = 0; j < this.ok.length; j++) if (unchecked(this.ok[j]) == 0) this.all = 0;
    }
    return this.all == 1;
  }

  byPrice(): Int32Array {
    let s = this.sorted;
    if (s != null) return s;
    let n = 0;
    for (let j = 0; j < this.ok.length; j++) if (unchecked(this.ok[j]) != 0) n++;
    const keys = new Uint64Array(n);
    let x = 0;
    for (let j = 0; j < this.ok.length; j++) {
      if (unchecked(this.ok[j]) == 0) continue;
      unchecked((keys[x++] = (<u64>Math.round(unchecked(this.price[j])) << 16) | <u64>j));
    }
    keys.sort();
    s = new Int32Array(n);
    for (let i = 0; i < n; i++) unchecked((s[i] = <i32>(unchecked(keys[i]) & 0xffff)));
    this.sorted = s;
    return s;
  }
}

let memo: Map<u64, Compat> = new Map<u64, Compat>();

export function resetCompat(): void {
  memo = new Map<u64, Compat>();
}

function entryAnyBit(p: usize, w: i32): bool {
  for (let i = 0; i < w; i++) if (load<u32>(p + (<usize>i << 2)) != 0) return true;
  return false;
}

/** Instance type requirements (sparse list) Intersects the set. */
function itIntersects(s: usize, i: i32): bool {
  const l = it(i, IT_REQS);
  if (l < 0) return true;
  const n = load<i32>(listAddr(l));
  let p = listAddr(l + 1);
  for (let e = 0; e < n; e++) {
    const k = load<i32>(p);
    const fl = load<i32>(p + 4);
    const w = keyWords(k);
    const bp = p + 8;
    p += <usize>((2 + w) << 2);
    if (!defined(s, k)) continue;
    const ic = (fl & SF_COMPLEMENT) != 0;
    let meets = false;
    if (ic && complement(s, k)) meets = true;
    else {
      const sb = bits(s, k);
      for (let x = 0; x < w; x++) {
        if ((load<u32>(bp + (<usize>x << 2)) & load<u32>(sb + (<usize>x << 2))) != 0) {
          meets = true;
          break;
        }
      }
    }
    if (meets) continue;
    const itNotIn = ic ? (fl & SF_EXCL) != 0 : !entryAnyBit(bp, w);
    if (itNotIn && notInOrDne(s, k)) continue;
    return false;
  }
  return true;
}

export function offeringAllowed(s: usize, o: i32): bool {
  if (off(o, O_AVAILABLE) == 0) return false;
  if (!hasValue(s, ZONE_KEY, off(o, O_ZONE))) return false;
  if (!hasValue(s, CT_KEY, off(o, O_CT))) return false;
  if (RESV_KEY >= 0 && defined(s, RESV_KEY)) {
    const r = off(o, O_RESV);
    if (r < 0) return notInOrDne(s, RESV_KEY);
    return hasValue(s, RESV_KEY, r);
  }
  return true;
}

/** Cheapest allowed offering of instance type i under set s (micro-dollars), Infinity if none. */
function cheapest(s: usize, i: i32): f64 {
  const o0 = it(i, IT_OFFS);
  const n = it(i, IT_NOFFS);
  let best = Infinity;
  for (let o = o0; o < o0 + n; o++) {
    if (!offeringAllowed(s, o)) continue;
    const p = offPrice(o, O_PRICE);
    if (p < best) best = p;
  }
  return best;
}

export function compatFor(setId: i32, t: i32): Compat {
  const key: u64 = (<u64>setId << 16) | <u64>t;
  if (memo.has(key)) return memo.get(key);
  const s = setAddr(setId);
  const start = tmpl(t, T_ITS);
  const n = tmpl(t, T_NITS);
  const ok = new Uint8Array(n);
  const price = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    const i = start + j;
    let p = Infinity;
    if (itIntersects(s, i)) p = cheapest(s, i);
    unchecked((price[j] = p));
    unchecked((ok[j] = p < Infinity ? 1 : 0));
  }
  const c = new Compat(ok, price);
  memo.set(key, c);
  return c;
}

/**
 * minValues (§2.14): walking the instance types in order, every key of the set with minValues must reach
 * that many distinct allowed values. `list` holds global instance-type indices; negative entries are skipped.
 */
export function minValuesMet(setId: i32, list: Int32Array, len: i32): bool {
  const s = setAddr(setId);
  for (let k = 0; k < LABEL_KEYS; k++) {
    if (!defined(s, k)) continue;
    const mv = minValues(s, k);
    if (mv <= 0) continue;
    const w = keyWords(k);
    const acc = heap.alloc(<usize>(w << 2));
    memory.fill(acc, 0, <usize>(w << 2));
    const sb = bits(s, k);
    let met = false;
    for (let x = 0; x < len && !met; x++) {
      const i = unchecked(list[x]);
      if (i < 0) continue;
      const ep = entryFor(i, k);
      if (ep == 0) continue;
      let count = 0;
      for (let y = 0; y < w; y++) {
        const off2 = <usize>y << 2;
        const v = load<u32>(acc + off2) | (load<u32>(ep + off2) & load<u32>(sb + off2));
        store<u32>(acc + off2, v);
        count += <i32>popcnt(v);
      }
      if (count >= mv) met = true;
    }
    if (!met) return false;
  }
  return true;
}

/** Address of the value bits of instance type i's requirement on key k (0 when undefined or complement). */
function entryFor(i: i32, k: i32): usize {
  const l = it(i, IT_REQS);
  if (l < 0) return 0;
  const n = load<i32>(listAddr(l));
  let p = listAddr(l + 1);
  for (let e = 0; e < n; e++) {
    const kk = load<i32>(p);
    const w = keyWords(kk);
    if (kk == k) return (load<i32>(p + 4) & SF_COMPLEMENT) != 0 ? 0 : p + 8;
    p += <usize>((2 + w) << 2);
  }
  return 0;
}
