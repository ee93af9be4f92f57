// In-flight NodeClaims indexed by the values their requirements allow on each topology key, so that quick
// rejection (topology.ts: a pod attempt's allowed domains per key) discards 32 NodeClaims per word instead
// of loading each NodeClaim's set. At 20,000 diverse pods, 4,000 NodeClaims and zone-constrained pods, that
// per-NodeClaim check ran 3.5 million times per solve.
//
// For an indexed key k: open[k] holds the NodeClaims whose set leaves k open (undefined, or a complement),
// has[k][j] those whose set allows value j. A NodeClaim passes quick rejection on k exactly when it is in
// open[k] or in has[k][j] for some allowed value j (the same test as quickReject, a word at a time).
import { G_KEY } from '../abi';
import { TOPOLOGY_GROUPS, LABEL_KEYS, grp, keyWords } from './layout';
import { bits, complement, defined, setAddr } from './sets';
import { quickCount, quickKey, quickMask } from './topology';

/** Keys with more values than this are not indexed (their attempts use the per-NodeClaim check). */
const MAX_INDEXED_VALUES = 64;

/** Key -> slot, or -1 when the key is not indexed. */
let slotOf: Int32Array = new Int32Array(0);
let slotKey: Int32Array = new Int32Array(0);
let open: Array<Uint32Array> = new Array<Uint32Array>();
/** has[slot][j]: claims whose set allows value j of the slot's key. */
let has: Array<Array<Uint32Array>> = new Array<Array<Uint32Array>>();
/** The set each claim was last indexed with (-1: not indexed yet). */
let indexedSet: Int32Array = new Int32Array(0);
let capWords: i32 = 0;

export function resetQuickIndex(): void {
  slotOf = new Int32Array(LABEL_KEYS).fill(-1);
  open = new Array<Uint32Array>();
  has = new Array<Array<Uint32Array>>();
  capWords = 8;
  indexedSet = new Int32Array(capWords << 5).fill(-1);
  let n = 0;
  for (let g = 0; g < TOPOLOGY_GROUPS; g++) {
    const k = grp(g, G_KEY);
    if (k < 0 || unchecked(slotOf[k]) >= 0 || (keyWords(k) << 5) > MAX_INDEXED_VALUES) continue;
    unchecked((slotOf[k] = n++));
  }
  slotKey = new Int32Array(n);
  for (let k = 0; k < LABEL_KEYS; k++) {
    const s = unchecked(slotOf[k]);
    if (s < 0) continue;
    unchecked((slotKey[s] = k));
    open.push(new Uint32Array(capWords));
    const per = new Array<Uint32Array>();
    for (let j = 0; j < keyWords(k) << 5; j++) per.push(new Uint32Array(capWords));
    has.push(per);
  }
}

function ensureCapacity(ci: i32): void {
  const w = ci >>> 5;
  if (w < capWords) return;
  let nw = capWords * 2;
  while (nw <= w) nw *= 2;
  for (let s = 0; s < open.length; s++) {
    const o = new Uint32Array(nw);
    o.set(unchecked(open[s]));
    unchecked((open[s] = o));
    const per = unchecked(has[s]);
    for (let j = 0; j < per.length; j++) {
      const b = new Uint32Array(nw);
      b.set(unchecked(per[j]));
      unchecked((per[j] = b));
    }
  }
  const ix = new Int32Array(nw << 5).fill(-1);
  ix.set(indexedSet);
  indexedSet = ix;
  capWords = nw;
}

/** Records in-flight NodeClaim ci's current set (call whenever it is created or its set changes). */
export function indexClaim(ci: i32, set: i32): void {
  if (open.length == 0) return;
  ensureCapacity(ci);
  if (unchecked(indexedSet[ci]) == set) return;
  unchecked((indexedSet[ci] = set));
  const w = ci >>> 5;
  const bit: u32 = 1 << (ci & 31);
  const ps = setAddr(set);
  for (let s = 0; s < open.length; s++) {
    const k = unchecked(slotKey[s]);
    const o = unchecked(open[s]);
    const per = unchecked(has[s]);
    const isOpen = !defined(ps, k) || complement(ps, k);
    if (isOpen) unchecked((o[w] |= bit));
    else unchecked((o[w] &= ~bit));
    const b = bits(ps, k);
    for (let j = 0; j < per.length; j++) {
      const on = !isOpen && ((load<u32>(b + (<usize>(j >>> 5) << 2)) >>> (j & 31)) & 1) != 0;
      const m = unchecked(per[j]);
      if (on) unchecked((m[w] |= bit));
      else unchecked((m[w] &= ~bit));
    }
  }
}

/** Whether every key of the prepared attempt is indexed (then quickAllowed replaces quickReject). */
export function quickIndexed(): bool {
  const n = quickCount();
  if (n == 0) return false;
  for (let i = 0; i < n; i++) if (unchecked(slotOf[quickKey(i)]) < 0) return false;
  return true;
}

/** The claims of word wi that pass the prepared attempt's quick rejection (bits of indexed claims). */
export function quickAllowed(wi: i32): u32 {
  if (wi >= capWords) return 0xffffffff;
  let a: u32 = 0xffffffff;
  const n = quickCount();
  for (let i = 0; i < n; i++) {
    const s = unchecked(slotOf[quickKey(i)]);
    const m = quickMask(i);
    const per = unchecked(has[s]);
    let w = unchecked(unchecked(open[s])[wi]);
    for (let x = 0; x < m.length; x++) {
      let mb = unchecked(m[x]);
      while (mb != 0) {
        const j = (x << 5) + <i32>ctz(mb);
        mb &= mb - 1;
        if (j < per.length) w |= unchecked(unchecked(per[j])[wi]);
      }
    }
    a &= w;
  }
  return a;
}
