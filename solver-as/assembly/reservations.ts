// Reserved capacity (docs/karpenter/scheduling.md §2.15), as the reference solver's reservation manager keeps it: a counter of
// instances left per reservation, and per claim the reservations it holds (a short list: a claim holds the few
// reservations its instance types can launch into). On every successful check a claim computes what it would hold
// with the pod added (`pending`); adding the pod commits that, taking one instance of each newly held reservation
// and giving back each dropped one. Templates without reserved offerings skip all of it.
import { FLAG_RESERVED_STRICT, IT_NOFFS, IT_OFFS, O_AVAILABLE, O_CT, O_RESV, T_ITS, T_NITS } from '../abi';
import { CT_RESERVED, FLAGS, INSTANCE_TYPES, RESERVATIONS, TEMPLATES, it, off, resvCapacity, tmpl } from './layout';
import { offeringAllowed } from './its';
import { setAddr } from './sets';
import { Claim, dgConflict, itFits, templateStart } from './state';

/** Instances left per reservation. */
let left: Int32Array = new Int32Array(0);
/** Per global instance type: its available reserved offerings are resvOffs[resvStart[i] .. resvStart[i + 1]). */
let resvStart: Int32Array = new Int32Array(0);
let resvOffs: Int32Array = new Int32Array(0);
/** Per template: some instance type has an available reserved offering. */
let tmplResv: Uint8Array = new Uint8Array(0);
let strict = true;
/** What the claim last checked would hold (reservation ids, deduplicated with `stamp`). */
let pending: Int32Array = new Int32Array(0);
let pendingLen = 0;
let stamp: Int32Array = new Int32Array(0);
let epoch = 0;

export function resetReservations(): void {
  strict = (FLAGS & FLAG_RESERVED_STRICT) != 0;
  left = new Int32Array(RESERVATIONS);
  for (let r = 0; r < RESERVATIONS; r++) unchecked((left[r] = resvCapacity(r)));
  pending = new Int32Array(RESERVATIONS);
  pendingLen = 0;
  stamp = new Int32Array(RESERVATIONS);
  epoch = 0;
  resvStart = new Int32Array(INSTANCE_TYPES + 1);
  tmplResv = new Uint8Array(TEMPLATES);
  if (RESERVATIONS == 0 || CT_RESERVED < 0) return;
  let n = 0;
  for (let i = 0; i < INSTANCE_TYPES; i++) {
    const o0 = it(i, IT_OFFS);
    const no = it(i, IT_NOFFS);
    for (let o = o0; o < o0 + no; o++) if (isReserved(o)) n++;
  }
  resvOffs = new Int32Array(n);
  n = 0;
  for (let i = 0; i < INSTANCE_TYPES; i++) {
    unchecked((resvStart[i] = n));
    const o0 = it(i, IT_OFFS);
    const no = it(i, IT_NOFFS);
    for (let o = o0; o < o0 + no; o++) if (isReserved(o)) unchecked((resvOffs[n++] = o));
  }
  unchecked((resvStart[INSTANCE_TYPES] = n));
  for (let t = 0; t < TEMPLATES; t++) {
    const s = tmpl(t, T_ITS);
    if (unchecked(resvStart[s + tmpl(t, T_NITS)]) > unchecked(resvStart[s])) unchecked((tmplResv[t] = 1));
  }
}

@inline function isReserved(o: i32): bool {
  return off(o, O_CT) == CT_RESERVED && off(o, O_RESV) >= 0 && off(o, O_AVAILABLE) != 0;
}

/** Template t has instance types with available reserved offerings. */
@inline export function templateReserved(t: i32): bool {
  return t < tmplResv.length && unchecked(tmplResv[t]) != 0;
}

function holds(c: Claim, r: i32): bool {
  const h = c.held;
  for (let i = 0; i < h.length; i++) if (unchecked(h[i]) == r) return true;
  return false;
}

/**
 * What claim c would hold with version v added under set s: every reserved offering s allows on the instance types
 * that would remain (live, allowed by s, no daemon port conflict with v, fit the total plus v) that c holds already
 * or that has an instance left. False when Strict mode refuses: compatible reserved offerings but none to hold, or
 * c held some and would hold none.
 */
export function checkReservations(c: Claim, s: i32, v: i32, ok: Uint8Array): bool {
  pendingLen = 0;
  if (!templateReserved(c.tmpl)) return true;
  epoch++;
  const sa = setAddr(s);
  const start = templateStart(c.tmpl);
  let compatible = false;
  for (let x = 0; x < c.liveLen; x++) {
    const j = unchecked(c.live[x]);
    if (j < 0) continue;
    const gi = start + j;
    const r0 = unchecked(resvStart[gi]);
    const r1 = unchecked(resvStart[gi + 1]);
    if (r0 == r1 || unchecked(ok[j]) == 0 || dgConflict(v, gi) || !itFits(gi, c.total, v)) continue;
    for (let k = r0; k < r1; k++) {
      const o = unchecked(resvOffs[k]);
      if (!offeringAllowed(sa, o)) continue;
      compatible = true;
      const r = off(o, O_RESV);
      if (unchecked(stamp[r]) == epoch) continue;
      if (unchecked(left[r]) > 0 || holds(c, r)) {
        unchecked((stamp[r] = epoch));
        unchecked((pending[pendingLen++] = r));
      }
    }
  }
  if (strict && pendingLen == 0 && (compatible || c.held.length > 0)) return false;
  return true;
}

/** Commits the last check on claim c: takes newly held reservations, gives back dropped ones. */
export function commitReservations(c: Claim): void {
  if (!templateReserved(c.tmpl)) return;
  const h = c.held;
  for (let i = 0; i < h.length; i++) {
    const r = unchecked(h[i]);
    if (unchecked(stamp[r]) != epoch) unchecked((left[r] += 1));
  }
  const next = new Int32Array(pendingLen);
  for (let i = 0; i < pendingLen; i++) {
    const r = unchecked(pending[i]);
    if (!holds(c, r)) {
      unchecked((left[r] -= 1));
      assert(unchecked(left[r]) >= 0, 'reservation over-held');
    }
    unchecked((next[i] = r));
  }
  c.held = next;
}
