// What the packers of the improvement phase share: the pods of one requirement group as classes of equal
// request vectors, the instance types the group may use (net capacity, price), and bins (one node's take of
// each class) with their cost: a bin costs what the cheapest type that holds its pods costs.
//
// Pods of different Deployments with the same requests are interchangeable for packing, so a group of
// thousands of pods is a few dozen classes.
import { DG_OVERHEAD, IT_ALLOC, IT_DG, V_REQUESTS } from '../abi';
import { NR, dg, f64At, it, ver } from './layout';
import { templateStart } from './state';
import { spend } from './budget';

/** The pods of one group: classes (pod versions) with counts and request vectors. */
export class Classes {
  /** A representative version per class (for its request vector). */
  versions: Array<i32> = new Array<i32>();
  counts: Array<i32> = new Array<i32>();
  pods: Array<Array<i32>> = new Array<Array<i32>>();
  /** Request vectors, class-major (NR per class), copied out of the input block for the packers' loops. */
  reqs: Array<f64> = new Array<f64>();
  add(v: i32, p: i32): void {
    for (let i = 0; i < this.versions.length; i++) {
      if (sameRequests(unchecked(this.versions[i]), v)) {
        unchecked((this.counts[i] += 1));
        unchecked(this.pods[i]).push(p);
        return;
      }
    }
    this.versions.push(v);
    const rq = ver(v, V_REQUESTS);
    for (let r = 0; r < NR; r++) this.reqs.push(f64At(rq + r));
    this.counts.push(1);
    const l = new Array<i32>();
    l.push(p);
    this.pods.push(l);
  }
}

function sameRequests(a: i32, b: i32): bool {
  if (a == b) return true;
  const ra = ver(a, V_REQUESTS);
  const rb = ver(b, V_REQUESTS);
  for (let r = 0; r < NR; r++) if (f64At(ra + r) != f64At(rb + r)) return false;
  return true;
}

/** One node: the type it was opened as (a hint; it launches as the cheapest that holds it) and its take per class. */
export class Bin {
  constructor(readonly x: i32, readonly take: Int32Array) {}
}

/** Instance types a group may use: template-local index, net capacity and price. */
export class Types {
  readonly n: i32;
  readonly caps: Float64Array;
  readonly prices: Float64Array;
  constructor(readonly t: i32, readonly local: Array<i32>, price: Float64Array) {
    const n = local.length;
    this.n = n;
    this.caps = new Float64Array(NR * n);
    this.prices = new Float64Array(n);
    const start = templateStart(t);
    for (let x = 0; x < this.n; x++) {
      const gi = start + unchecked(local[x]);
      const a = it(gi, IT_ALLOC);
      const o = dg(it(gi, IT_DG), DG_OVERHEAD);
      for (let r = 0; r < NR; r++) unchecked((this.caps[r * this.n + x] = max(0, f64At(a + r) - f64At(o + r))));
      unchecked((this.prices[x] = unchecked(price[unchecked(local[x])])));
    }
  }
  @inline cap(x: i32, r: i32): f64 {
    return unchecked(this.caps[r * this.n + x]);
  }
}

@inline export function req(cl: Classes, c: i32, r: i32): f64 {
  return unchecked(cl.reqs[c * NR + r]);
}

/** Whether type x holds `total` (to 1e-6). */
@inline function holds(ts: Types, x: i32, total: Float64Array): bool {
  for (let r = 0; r < NR; r++) if (unchecked(total[r]) > ts.cap(x, r) + 1e-6) return false;
  return true;
}

/** Price of the cheapest type holding `total`, or Infinity. */
export function cheapestFit(ts: Types, total: Float64Array): f64 {
  spend(<f64>(ts.n * NR));
  let best = Infinity;
  for (let x = 0; x < ts.n; x++) {
    const p = unchecked(ts.prices[x]);
    if (p < best && holds(ts, x, total)) best = p;
  }
  return best;
}

/** The same, among `xs` only: exact when every type left out is dominated by one in `xs` (no smaller, no cheaper). */
export function cheapestFitAmong(ts: Types, xs: Array<i32>, total: Float64Array): f64 {
  spend(<f64>(xs.length * NR));
  let best = Infinity;
  for (let i = 0; i < xs.length; i++) {
    const x = unchecked(xs[i]);
    const p = unchecked(ts.prices[x]);
    if (p < best && holds(ts, x, total)) best = p;
  }
  return best;
}

/** The request totals of a take vector, into `total`. */
export function takeTotal(cl: Classes, take: Int32Array, total: Float64Array): void {
  total.fill(0);
  for (let c = 0; c < take.length; c++) {
    const k = unchecked(take[c]);
    if (k == 0) continue;
    for (let r = 0; r < NR; r++) unchecked((total[r] += <f64>k * req(cl, c, r)));
  }
}

export function binsCost(ts: Types, cl: Classes, bins: Array<Bin>): f64 {
  let sum: f64 = 0;
  const total = new Float64Array(NR);
  for (let b = 0; b < bins.length; b++) {
    takeTotal(cl, unchecked(bins[b]).take, total);
    sum += cheapestFit(ts, total);
  }
  return sum;
}

/** Indices of `v` by value, largest first (ties: lower index first); insertion sort, n is small. */
export function descending(v: Float64Array): Array<i32> {
  const out = new Array<i32>();
  for (let i = 0; i < v.length; i++) {
    out.push(i);
    let j = out.length - 1;
    while (j > 0 && unchecked(v[unchecked(out[j - 1])]) < unchecked(v[i])) {
      unchecked((out[j] = out[j - 1]));
      j--;
    }
    unchecked((out[j] = i));
  }
  return out;
}

/** How many more pods of class c fit in the remaining room. */
export function fitCount(cl: Classes, c: i32, room: Float64Array): i32 {
  let k: i32 = i32.MAX_VALUE;
  for (let r = 0; r < NR; r++) {
    const s = req(cl, c, r);
    if (s <= 0) continue;
    const f = unchecked(room[r]) < s ? 0 : <i32>Math.floor(unchecked(room[r]) / s + 1e-9);
    if (f < k) k = f;
  }
  return k;
}
