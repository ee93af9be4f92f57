// NodePool limits in the search (docs/karpenter/scheduling.md §2.13): each template's remaining limits, what a new
// NodeClaim reserves (one node, and the largest capacity among its options per limited dimension), and the
// memo of opening a NodeClaim.
//
// Opening: when the remaining limits cover a template's largest instance type in every limited dimension,
// every type is within them (checked once instead of per type), and what a fresh NodeClaim for version v
// with set s keeps (the types that fit v alone, the capacity reserved) depends on (template, s, v) only, and on
// v only through its requests and daemon port conflicts. 4,000 anti-affinity pods open 4,000 NodeClaims from a
// few dozen such keys; the outcome is memoised per solve (keys: schedule.ts).
import { IT_CAP, T_LIMITS } from '../abi';
import { LIMIT_DIMS, TEMPLATES, f64At, it, tmpl } from './layout';
import { Claim, templateLen, templateStart } from './state';

/** Per template: remaining limits [nodes, dims...] (Infinity = unlimited). */
let limits: Array<Float64Array> = new Array<Float64Array>();
/** Per template: the largest capacity of any of its instance types per limited dimension. */
let maxCap: Array<Float64Array> = new Array<Float64Array>();

class Opened {
  constructor(readonly live: Int32Array, readonly reserved: Float64Array) {}
}
let opened: Array<Map<u64, Opened>> = new Array<Map<u64, Opened>>();

export function resetLimits(): void {
  limits = new Array<Float64Array>();
  maxCap = new Array<Float64Array>();
  opened = new Array<Map<u64, Opened>>();
  for (let t = 0; t < TEMPLATES; t++) {
    const l = new Float64Array(LIMIT_DIMS + 1);
    const base = tmpl(t, T_LIMITS);
    for (let i = 0; i <= LIMIT_DIMS; i++) unchecked((l[i] = f64At(base + i)));
    limits.push(l);
    const m = new Float64Array(LIMIT_DIMS);
    const start = templateStart(t);
    for (let j = 0; j < templateLen(t); j++) {
      const cap = it(start + j, IT_CAP);
      for (let d = 0; d < LIMIT_DIMS; d++) unchecked((m[d] = max(m[d], f64At(cap + d))));
    }
    maxCap.push(m);
    opened.push(new Map<u64, Opened>());
  }
}

export function limitsOf(t: i32): Float64Array {
  return unchecked(limits[t]);
}

/** Every instance type of template t is within the remaining limits `lim`. */
export function allWithinLimits(t: i32, lim: Float64Array): bool {
  const m = unchecked(maxCap[t]);
  for (let d = 0; d < LIMIT_DIMS; d++) if (unchecked(m[d]) > unchecked(lim[d + 1])) return false;
  return true;
}

export function withinLimits(gi: i32, lim: Float64Array): bool {
  const cap = it(gi, IT_CAP);
  for (let d = 0; d < LIMIT_DIMS; d++) if (f64At(cap + d) > unchecked(lim[d + 1])) return false;
  return true;
}

/** The claim consumes the largest capacity among its options, and one node (see the reference solver). */
export function subtractMaxCapacity(c: Claim, lim: Float64Array): void {
  c.reserved = maxCapacity(c);
  for (let d = 0; d <= LIMIT_DIMS; d++) unchecked((lim[d] -= c.reserved[d]));
}

/** [1 node, the largest capacity per limited dimension among the claim's options]. */
export function maxCapacity(c: Claim): Float64Array {
  const out = new Float64Array(LIMIT_DIMS + 1);
  out[0] = 1;
  const start = templateStart(c.tmpl);
  for (let d = 0; d < LIMIT_DIMS; d++) {
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

/** A NodeClaim of template t was opened with key (version or request class, s) while every type was within limits. */
export function wasOpened(t: i32, key: u64): bool {
  return unchecked(opened[t]).has(key);
}

export function openedAs(t: i32, key: u64): Opened {
  return unchecked(opened[t]).get(key);
}

/** Remembers what opening claim c (just filtered and reserved) kept. */
export function rememberOpened(t: i32, key: u64, c: Claim): void {
  unchecked(opened[t]).set(key, new Opened(c.live.slice(0, c.liveLen), c.reserved.slice()));
}
