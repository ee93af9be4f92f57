// Packing one requirement group of free pods into new nodes, guided by the covering LP (lp.ts): its duals
// price each resource so that no instance type is worth more than it costs. Nodes are opened one type at a
// time, always the type whose filled node is worth the most per dollar at those prices (only types the LP
// prices at their cost are worth opening), filled largest pods first; the last node is the cheapest type
// that holds what is left. Every node then launches as the cheapest type that holds its pods (the
// NodeClaim keeps all that fit), so a half-empty node costs what a smaller type costs.
//
// Pods are grouped by their request vectors: pods of different Deployments with the same requests are
// interchangeable for packing, so a group of thousands of pods is a few dozen classes.
import { DG_OVERHEAD, IT_ALLOC, IT_DG, V_REQUESTS } from '../abi';
import { NR, dg, f64At, it, ver } from './layout';
import { coverDuals } from './lp';
import { templateStart } from './state';

@external('env', 'now')
declare function now(): f64;

/** The pods of one group: classes (pod versions) with counts and request vectors. */
export class Classes {
  /** A representative version per class (for its request vector). */
  versions: Array<i32> = new Array<i32>();
  counts: Array<i32> = new Array<i32>();
  pods: Array<Array<i32>> = new Array<Array<i32>>();
  add(v: i32, p: i32): void {
    for (let i = 0; i < this.versions.length; i++) {
      if (sameRequests(unchecked(this.versions[i]), v)) {
        unchecked((this.counts[i] += 1));
        unchecked(this.pods[i]).push(p);
        return;
      }
    }
    this.versions.push(v);
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

@inline function req(cl: Classes, c: i32, r: i32): f64 {
  return f64At(ver(unchecked(cl.versions[c]), V_REQUESTS) + r);
}

/** Price of the cheapest type holding `total`, or Infinity. */
export function cheapestFit(ts: Types, total: Float64Array): f64 {
  let best = Infinity;
  for (let x = 0; x < ts.n; x++) {
    const p = unchecked(ts.prices[x]);
    if (p >= best) continue;
    let fits = true;
    for (let r = 0; r < NR && fits; r++) if (unchecked(total[r]) > ts.cap(x, r) + 1e-6) fits = false;
    if (fits) best = p;
  }
  return best;
}

export function binsCost(ts: Types, cl: Classes, bins: Array<Bin>): f64 {
  let sum: f64 = 0;
  const total = new Float64Array(NR);
  for (let b = 0; b < bins.length; b++) {
    const bin = unchecked(bins[b]);
    total.fill(0);
    for (let c = 0; c < bin.take.length; c++) {
      const k = unchecked(bin.take[c]);
      if (k == 0) continue;
      for (let r = 0; r < NR; r++) unchecked((total[r] += <f64>k * req(cl, c, r)));
    }
    sum += cheapestFit(ts, total);
  }
  return sum;
}

/** Indices of `v` by value, largest first (ties: lower index first); insertion sort, n is small. */
function descending(v: Float64Array): Array<i32> {
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
function fitCount(cl: Classes, c: i32, room: Float64Array): i32 {
  let k: i32 = i32.MAX_VALUE;
  for (let r = 0; r < NR; r++) {
    const s = req(cl, c, r);
    if (s <= 0) continue;
    const f = unchecked(room[r]) < s ? 0 : <i32>Math.floor(unchecked(room[r]) / s + 1e-9);
    if (f < k) k = f;
  }
  return k;
}

/** Strategy 2: open the type whose filled node is worth most per dollar; close with the cheapest fit. */
function valuePack(ts: Types, cl: Classes, left: Int32Array, duals: Float64Array, shortlist: Array<i32>, bins: Array<Bin>, deadline: f64): bool {
  const C = cl.versions.length;
  const worth = new Float64Array(C);
  for (let c = 0; c < C; c++) {
    let w: f64 = 0;
    for (let r = 0; r < NR; r++) w += unchecked(duals[r]) * req(cl, c, r);
    unchecked((worth[c] = w));
  }
  const orderC = descending(worth);
  let remaining = 0;
  for (let c = 0; c < C; c++) remaining += unchecked(left[c]);
  const take = new Int32Array(C);
  const room = new Float64Array(NR);
  while (remaining > 0) {
    if (now() > deadline) return false;
    let bestX = -1;
    let bestEff: f64 = -1;
    let bestTake = new Int32Array(0);
    let bestAll = false;
    // Closing: whatever is left fits one node of some type; take the cheapest such.
    const total = new Float64Array(NR);
    for (let c = 0; c < C; c++) for (let r = 0; r < NR; r++) unchecked((total[r] += <f64>unchecked(left[c]) * req(cl, c, r)));
    let closeX = -1;
    let closePrice: f64 = Infinity;
    for (let x = 0; x < ts.n; x++) {
      const p = unchecked(ts.prices[x]);
      if (p >= closePrice) continue;
      let fits = true;
      for (let r = 0; r < NR && fits; r++) if (unchecked(total[r]) > ts.cap(x, r) + 1e-6) fits = false;
      if (fits) {
        closePrice = p;
        closeX = x;
      }
    }
    for (let si = 0; si < shortlist.length; si++) {
      const x = unchecked(shortlist[si]);
      for (let r = 0; r < NR; r++) unchecked((room[r] = ts.cap(x, r)));
      take.fill(0);
      let W: f64 = 0;
      let packed = 0;
      for (let oi = 0; oi < C; oi++) {
        const c = unchecked(orderC[oi]);
        const k = min(unchecked(left[c]), fitCount(cl, c, room));
        if (k <= 0) continue;
        unchecked((take[c] = k));
        packed += k;
        W += <f64>k * unchecked(worth[c]);
        for (let r = 0; r < NR; r++) unchecked((room[r] -= <f64>k * req(cl, c, r)));
      }
      if (packed == 0) continue;
      const eff = W / unchecked(ts.prices[x]);
      if (eff > bestEff) {
        bestEff = eff;
        bestX = x;
        bestTake = take.slice();
        bestAll = packed == remaining;
      }
    }
    // Close when one efficient node would take everything left: then the cheapest type that does is best.
    if (closeX >= 0 && (bestX < 0 || bestAll)) {
      const all = new Int32Array(C);
      for (let c = 0; c < C; c++) unchecked((all[c] = unchecked(left[c])));
      bins.push(new Bin(closeX, all));
      return true;
    }
    if (bestX < 0) return false;
    let reps: i32 = i32.MAX_VALUE;
    for (let c = 0; c < C; c++) if (unchecked(bestTake[c]) > 0) reps = min(reps, unchecked(left[c]) / unchecked(bestTake[c]));
    if (reps < 1) reps = 1;
    for (let rep = 0; rep < reps; rep++) {
      bins.push(new Bin(bestX, bestTake));
      for (let c = 0; c < C; c++) {
        unchecked((left[c] -= unchecked(bestTake[c])));
        remaining -= unchecked(bestTake[c]);
      }
    }
  }
  return true;
}

/**
 * The types worth opening: those whose capacity is worth at least 85% of their price at the LP's resource
 * prices (the LP's own types are worth 100%), the best 48. A slightly less efficient type can still win a
 * node when it packs with less waste (a large node for large pods), which the per-node worth decides.
 */
const SHORTLIST_EFFICIENCY: f64 = 0.85;
const SHORTLIST_MAX = 48;
function efficient(ts: Types, duals: Float64Array): Array<i32> {
  const eff = new Float64Array(ts.n);
  for (let x = 0; x < ts.n; x++) {
    let v: f64 = 0;
    for (let r = 0; r < NR; r++) v += unchecked(duals[r]) * ts.cap(x, r);
    unchecked((eff[x] = v / unchecked(ts.prices[x])));
  }
  const order = descending(eff);
  const out = new Array<i32>();
  for (let i = 0; i < order.length && out.length < SHORTLIST_MAX; i++) {
    const x = unchecked(order[i]);
    if (out.length >= 1 && unchecked(eff[x]) < SHORTLIST_EFFICIENCY) break;
    out.push(x);
  }
  return out;
}

/** Packs the group into nodes, or returns null (deadline, or no feasible LP). */
export function packGroup(ts: Types, cl: Classes, deadline: f64): Array<Bin> | null {
  const C = cl.versions.length;
  const demand = new Float64Array(NR);
  for (let c = 0; c < C; c++) for (let r = 0; r < NR; r++) unchecked((demand[r] += req(cl, c, r) * <f64>unchecked(cl.counts[c])));
  const duals = new Float64Array(NR);
  if (coverDuals(ts.caps, ts.prices, demand, NR, ts.n, duals) < 0) return null;
  const left = new Int32Array(C);
  for (let c = 0; c < C; c++) unchecked((left[c] = unchecked(cl.counts[c])));
  const bins = new Array<Bin>();
  return valuePack(ts, cl, left, duals, efficient(ts, duals), bins, deadline) ? bins : null;
}
