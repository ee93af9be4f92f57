// What the packers of the improvement phase share: the pods of one requirement group as classes of equal
// request vectors, the instance types the group may use (net capacity, prices), and bins (one node's take of
// each class) with their cost: a bin costs what its launch would pay (Types.cost).
//
// Pods of different Deployments with the same requests are interchangeable for packing, so a group of
// thousands of pods is a few dozen classes.
import { DG_OVERHEAD, IT_ALLOC, IT_DG, IT_FLAGS, IT_NOFFS, IT_OFFS, ITF_EXOTIC, O_CT, O_PRICE, V_REQUESTS } from '../abi';
import { CT_ON_DEMAND, CT_SPOT, RESOURCES, dg, f64At, it, off, offPrice, ver } from './layout';
import { offeringAllowed } from './its';
import { setAddr } from './sets';
import { templateStart } from './state';
import { spend } from './budget';

/** The pods of one group: classes (pod versions) with counts and request vectors. */
export class Classes {
  /** A representative version per class (for its request vector). */
  versions: Array<i32> = new Array<i32>();
  counts: Array<i32> = new Array<i32>();
  pods: Array<Array<i32>> = new Array<Array<i32>>();
  /** Request vectors, class-major (RESOURCES per class), copied out of the input block for the packers' loops. */
  reqs: Array<f64> = new Array<f64>();
  /** The classes `idx` (versions, counts and requests; not their pods): for costing residual problems. */
  subset(idx: Int32Array): Classes {
    const out = new Classes();
    for (let i = 0; i < idx.length; i++) {
      const c = unchecked(idx[i]);
      out.versions.push(unchecked(this.versions[c]));
      out.counts.push(unchecked(this.counts[c]));
      out.pods.push(new Array<i32>());
      for (let r = 0; r < RESOURCES; r++) out.reqs.push(unchecked(this.reqs[c * RESOURCES + r]));
    }
    return out;
  }

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
    for (let r = 0; r < RESOURCES; r++) this.reqs.push(f64At(rq + r));
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
  for (let r = 0; r < RESOURCES; r++) if (f64At(ra + r) != f64At(rb + r)) return false;
  return true;
}

/** One node: the type it was opened as (a hint; it launches as the cheapest that holds it) and its take per class. */
export class Bin {
  constructor(readonly x: i32, readonly take: Int32Array) {}
}

/**
 * Instance types a group may use: template-local index, net capacity, and what a launch would pay. A bin launches as
 * the AWS provider's launch filters pick among the types that hold it (engine/launch/filter.ts): generic types
 * before exotic ones (metal, accelerators) while any generic one holds it; with spot and on-demand both offered, spot
 * offerings dearer than the cheapest on-demand one are dropped; then spot if any is left, else on-demand; the
 * cheapest. `cost` is that price, plus `penalty` of the chosen type when NodePool limits bind (improve.ts).
 */
export class Types {
  readonly n: i32;
  readonly caps: Float64Array;
  /** Cheapest allowed offering of any capacity type (the price Karpenter's algorithm orders types by), plus penalty. */
  readonly prices: Float64Array;
  /** The same without penalty. */
  readonly base: Float64Array;
  /** Cheapest allowed spot and on-demand offerings (Infinity: none). */
  readonly spot: Float64Array;
  readonly od: Float64Array;
  readonly exotic: Uint8Array;
  /** Added to the cost of a bin that launches as this type (limits, improve.ts); 0 otherwise. */
  penalty: Float64Array;
  /** The price of the last `pick` (of its capacity type). */
  picked: f64 = Infinity;
  /** Some type has a penalty (set by quota.ts setPenalty). */
  penalized: bool = false;
  private holding: Uint8Array;
  /** Local types by on-demand price, and by spot price (orderByPrice; made on the first pick without penalties). */
  private byOd: Int32Array = new Int32Array(0);
  private bySpot: Int32Array = new Int32Array(0);
  constructor(readonly t: i32, readonly local: Array<i32>, set: i32, price: Float64Array) {
    const n = local.length;
    this.n = n;
    this.caps = new Float64Array(RESOURCES * n);
    this.prices = new Float64Array(n);
    this.base = new Float64Array(n);
    this.spot = new Float64Array(n);
    this.od = new Float64Array(n);
    this.exotic = new Uint8Array(n);
    this.penalty = new Float64Array(n);
    this.holding = new Uint8Array(n);
    const start = templateStart(t);
    const s = setAddr(set);
    for (let x = 0; x < this.n; x++) {
      const gi = start + unchecked(local[x]);
      const a = it(gi, IT_ALLOC);
      const o = dg(it(gi, IT_DG), DG_OVERHEAD);
      for (let r = 0; r < RESOURCES; r++) unchecked((this.caps[r * this.n + x] = max(0, f64At(a + r) - f64At(o + r))));
      unchecked((this.prices[x] = unchecked(price[unchecked(local[x])])));
      unchecked((this.base[x] = unchecked(this.prices[x])));
      unchecked((this.spot[x] = cheapestOf(s, gi, CT_SPOT)));
      unchecked((this.od[x] = cheapestOf(s, gi, CT_ON_DEMAND)));
      unchecked((this.exotic[x] = (it(gi, IT_FLAGS) & ITF_EXOTIC) != 0 ? 1 : 0));
    }
  }
  @inline cap(x: i32, r: i32): f64 {
    return unchecked(this.caps[r * this.n + x]);
  }

  /** The type a bin of `total` launches as (local index), or -1 when no type holds it. */
  pick(total: Float64Array): i32 {
    spend(<f64>(this.n * RESOURCES));
    if (!this.penalized) return this.cheapestHolding(total);
    const n = this.n;
    let anyGeneric = false;
    let any = false;
    for (let x = 0; x < n; x++) {
      const h = holds(this, x, total);
      unchecked((this.holding[x] = h ? 1 : 0));
      if (h) {
        any = true;
        if (unchecked(this.exotic[x]) == 0) anyGeneric = true;
      }
    }
    this.picked = Infinity;
    if (!any) return -1;
    let floor = Infinity;
    let spotX = -1;
    let odX = -1;
    for (let x = 0; x < n; x++) {
      if (unchecked(this.holding[x]) == 0 || (anyGeneric && unchecked(this.exotic[x]) != 0)) continue;
      const o = unchecked(this.od[x]);
      if (o < floor) {
        floor = o;
        odX = x;
      }
      if (unchecked(this.spot[x]) < Infinity && (spotX < 0 || unchecked(this.spot[x]) < unchecked(this.spot[spotX]))) spotX = x;
    }
    const spot = spotX >= 0 && unchecked(this.spot[spotX]) <= floor;
    let x = spot ? spotX : odX;
    if (this.penalized) x = this.leastPenalized(spot, floor, anyGeneric, x);
    if (x >= 0) this.picked = spot ? unchecked(this.spot[x]) : unchecked(this.od[x]);
    return x;
  }

  /**
   * pick() without penalties: the types in price order (orderByPrice), so the scan stops at the first type that holds
   * the bin instead of testing every type. The same choice as the full scan (ties to the lower index).
   */
  private cheapestHolding(total: Float64Array): i32 {
    if (this.byOd.length != this.n) this.orderByPrice();
    this.picked = Infinity;
    // The cheapest on-demand type that holds the bin, among the generic ones if any generic one holds it.
    let odX = -1;
    let exoticX = -1;
    let anyGeneric = false;
    for (let k = 0; k < this.n; k++) {
      const x = unchecked(this.byOd[k]);
      if (!holds(this, x, total)) continue;
      if (unchecked(this.exotic[x]) == 0) {
        anyGeneric = true;
        odX = x;
        break;
      }
      if (exoticX < 0) exoticX = x;
    }
    if (!anyGeneric) odX = exoticX;
    if (odX >= 0 && unchecked(this.od[odX]) == Infinity) odX = -1;
    const floor = odX >= 0 ? unchecked(this.od[odX]) : Infinity;
    // Spot when an eligible type's spot offering is no dearer than that on-demand price: the cheapest such.
    for (let k = 0; k < this.n; k++) {
      const x = unchecked(this.bySpot[k]);
      const s = unchecked(this.spot[x]);
      if (s == Infinity || s > floor) break;
      if ((anyGeneric && unchecked(this.exotic[x]) != 0) || !holds(this, x, total)) continue;
      this.picked = s;
      return x;
    }
    if (odX >= 0) this.picked = floor;
    return odX;
  }

  /** The types by on-demand and by spot price (ties: lower index first), for cheapestHolding. */
  private orderByPrice(): void {
    this.byOd = byPrice(this.od);
    this.bySpot = byPrice(this.spot);
  }

  /**
   * With penalties (NodePool limits bind, improve.ts): the type whose price plus penalty is least, of the capacity
   * type the launch would use. The node's options are then narrowed to types no larger than it (quota.ts), so the
   * launch takes it or a cheaper type as small.
   */
  private leastPenalized(spot: bool, floor: f64, anyGeneric: bool, x0: i32): i32 {
    let best = x0;
    let bestCost: f64 = Infinity;
    for (let x = 0; x < this.n; x++) {
      if (unchecked(this.holding[x]) == 0 || (anyGeneric && unchecked(this.exotic[x]) != 0)) continue;
      const p = spot ? unchecked(this.spot[x]) : unchecked(this.od[x]);
      if (p == Infinity || (spot && p > floor)) continue;
      const c = p + unchecked(this.penalty[x]);
      if (c < bestCost) {
        bestCost = c;
        best = x;
      }
    }
    return best;
  }

  /** The price a bin of `total` launches at (Infinity when no type holds it), plus its type's penalty. */
  cost(total: Float64Array): f64 {
    const x = this.pick(total);
    if (x < 0) return Infinity;
    return this.picked + unchecked(this.penalty[x]);
  }
}

/** The prices `byPrice` orders by (a sort's comparator cannot capture them). */
let priceKeys: Float64Array = new Float64Array(0);

function byPriceThenIndex(a: i32, b: i32): i32 {
  const pa = unchecked(priceKeys[a]);
  const pb = unchecked(priceKeys[b]);
  if (pa < pb) return -1;
  if (pa > pb) return 1;
  return a - b;
}

/** Indices of `prices` by price, ascending (ties: lower index first; Infinity last). */
function byPrice(prices: Float64Array): Int32Array {
  priceKeys = prices;
  const order = new Array<i32>(prices.length);
  for (let x = 0; x < prices.length; x++) unchecked((order[x] = x));
  order.sort(byPriceThenIndex);
  const out = new Int32Array(prices.length);
  for (let x = 0; x < prices.length; x++) unchecked((out[x] = unchecked(order[x])));
  return out;
}

/** Cheapest allowed offering of capacity type `ct` of global instance type gi under set s (Infinity: none). */
function cheapestOf(s: usize, gi: i32, ct: i32): f64 {
  if (ct < 0) return Infinity;
  const o0 = it(gi, IT_OFFS);
  const n = it(gi, IT_NOFFS);
  let best = Infinity;
  for (let o = o0; o < o0 + n; o++) {
    if (off(o, O_CT) != ct || !offeringAllowed(s, o)) continue;
    const p = offPrice(o, O_PRICE);
    if (p < best) best = p;
  }
  return best;
}

@inline export function req(cl: Classes, c: i32, r: i32): f64 {
  return unchecked(cl.reqs[c * RESOURCES + r]);
}

/** Whether type x holds `total` (to 1e-6). */
@inline export function holds(ts: Types, x: i32, total: Float64Array): bool {
  for (let r = 0; r < RESOURCES; r++) if (unchecked(total[r]) > ts.cap(x, r) + 1e-6) return false;
  return true;
}

/** The request totals of a take vector, into `total`. */
export function takeTotal(cl: Classes, take: Int32Array, total: Float64Array): void {
  total.fill(0);
  for (let c = 0; c < take.length; c++) {
    const k = unchecked(take[c]);
    if (k == 0) continue;
    for (let r = 0; r < RESOURCES; r++) unchecked((total[r] += <f64>k * req(cl, c, r)));
  }
}

export function binsCost(ts: Types, cl: Classes, bins: Array<Bin>): f64 {
  let sum: f64 = 0;
  const total = new Float64Array(RESOURCES);
  for (let b = 0; b < bins.length; b++) {
    takeTotal(cl, unchecked(bins[b]).take, total);
    sum += ts.cost(total);
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
  for (let r = 0; r < RESOURCES; r++) {
    const s = req(cl, c, r);
    if (s <= 0) continue;
    const f = unchecked(room[r]) < s ? 0 : <i32>Math.floor(unchecked(room[r]) / s + 1e-9);
    if (f < k) k = f;
  }
  return k;
}
