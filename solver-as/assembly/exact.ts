// Exact pricing for column generation (cg.ts): at prices `pi` per item of each class, the pattern worth the most
// on one node type, a bounded multi-dimensional knapsack, and upper bounds on that worth.
//
// - `ResourceBounds.bound(x)`: for each resource alone, the fractional knapsack (items by worth per unit of that
//   resource, the last one split) is an upper bound on what fits; the smallest over the resources is the bound. The
//   orders do not depend on the node type, so they are sorted once per set of prices and each type costs a pass.
// - `exactBest(...)`: depth-first branch and bound over the classes (most worth per share of the node first), each
//   class's count tried from the most that fits down to none; a branch is cut when its worth plus the fractional
//   knapsack of the rest under the sum of the resource shares (a valid relaxation: every pattern that fits also fits
//   the summed constraint) cannot beat the best found. It stops after a number of nodes; `complete` says whether it
//   proved its answer best.
import { Problem } from './problem';
import { descending } from './bins';
import { spend } from './budget';

/** Per-resource fractional bounds, for every type, at one set of class prices. */
export class ResourceBounds {
  /** Per resource, the classes by worth per unit of that resource (classes not using it first). */
  private orders: Array<Array<i32>> = new Array<Array<i32>>();
  constructor(readonly p: Problem, readonly pi: Float64Array, readonly left: Int32Array) {
    const C = p.C;
    const key = new Float64Array(C);
    for (let r = 0; r < p.R; r++) {
      for (let c = 0; c < C; c++) {
        const s = p.req(c, r);
        unchecked((key[c] = s > 0 ? unchecked(pi[c]) / s : Infinity));
      }
      this.orders.push(descending(key));
    }
    spend(<f64>(p.R * C * 8));
  }

  /** An upper bound on the worth of any pattern on type x (classes it may hold, at most `left` of each). */
  bound(x: i32): f64 {
    const p = this.p;
    let best = Infinity;
    spend(<f64>(p.R * p.C));
    for (let r = 0; r < p.R; r++) {
      let room = p.cap(x, r);
      let w: f64 = 0;
      const order = unchecked(this.orders[r]);
      for (let i = 0; i < order.length; i++) {
        const c = unchecked(order[i]);
        const v = unchecked(this.pi[c]);
        const u = unchecked(this.left[c]);
        if (v <= 0 || u <= 0 || !p.allows(c, x) || !fitsAlone(p, c, x)) continue;
        const s = p.req(c, r);
        if (s <= 0) {
          w += <f64>u * v;
          continue;
        }
        const k = room / s;
        if (k >= <f64>u) {
          w += <f64>u * v;
          room -= <f64>u * s;
        } else {
          w += k * v;
          break;
        }
      }
      if (w < best) best = w;
    }
    return best;
  }
}

/**
 * A Lagrangian bound on the worth of any pattern on type x: for prices mu >= 0 on the resources,
 * L(mu) = mu . cap + sum over classes of u_c * max(0, pi_c - mu . r_c) bounds every pattern that fits. L is convex in
 * mu; a few sweeps of exact line minimisation per resource (sorting where each class stops paying for itself) bring
 * it to (about) the LP relaxation's value. `mu` (R entries) is filled with the prices found, for the branch and bound.
 */
export function lagrangeBound(p: Problem, x: i32, pi: Float64Array, u: Int32Array, mu: Float64Array): f64 {
  const C = p.C;
  const R = p.R;
  mu.fill(0);
  const live = new Array<i32>();
  for (let c = 0; c < C; c++) if (unchecked(pi[c]) > 0 && unchecked(u[c]) > 0 && p.allows(c, x) && fitsAlone(p, c, x)) live.push(c);
  const brk = new Float64Array(live.length);
  spend(<f64>(SWEEPS * R * live.length * 8));
  for (let sweep = 0; sweep < SWEEPS; sweep++) {
    for (let r = 0; r < R; r++) lineMin(p, x, pi, u, mu, live, r, brk);
  }
  return lagrangeValue(p, x, pi, u, mu, live);
}

const SWEEPS = 4;

function lagrangeValue(p: Problem, x: i32, pi: Float64Array, u: Int32Array, mu: Float64Array, live: Array<i32>): f64 {
  let v: f64 = 0;
  for (let r = 0; r < p.R; r++) v += unchecked(mu[r]) * p.cap(x, r);
  for (let i = 0; i < live.length; i++) {
    const c = unchecked(live[i]);
    let red = unchecked(pi[c]);
    for (let r = 0; r < p.R; r++) red -= unchecked(mu[r]) * p.req(c, r);
    if (red > 0) v += <f64>unchecked(u[c]) * red;
  }
  return v;
}

/** Sets mu[r] to minimise L along resource r, the other prices fixed. */
function lineMin(p: Problem, x: i32, pi: Float64Array, u: Int32Array, mu: Float64Array, live: Array<i32>, r: i32, brk: Float64Array): void {
  // Slope of L in mu[r] at 0: cap_r minus what the classes still paying for themselves use of r. Raising mu[r] past
  // a class's breakpoint drops it, and the slope rises by what it used; stop where the slope turns >= 0.
  let slope = p.cap(x, r);
  const use = new Float64Array(live.length);
  let n = 0;
  for (let i = 0; i < live.length; i++) {
    const c = unchecked(live[i]);
    const s = p.req(c, r);
    let red = unchecked(pi[c]);
    for (let q = 0; q < p.R; q++) if (q != r) red -= unchecked(mu[q]) * p.req(c, q);
    if (red <= 0 || s <= 0) continue;
    slope -= <f64>unchecked(u[c]) * s;
    unchecked((brk[n] = -red / s));
    unchecked((use[n] = <f64>unchecked(u[c]) * s));
    n++;
  }
  unchecked((mu[r] = 0));
  if (slope >= 0) return;
  const order = descending(brk.subarray(0, n));
  for (let k = 0; k < n && slope < 0; k++) {
    const i = unchecked(order[k]);
    unchecked((mu[r] = -unchecked(brk[i])));
    slope += unchecked(use[i]);
  }
}

@inline function fitsAlone(p: Problem, c: i32, x: i32): bool {
  for (let r = 0; r < p.R; r++) if (p.req(c, r) > p.cap(x, r) + 1e-9) return false;
  return true;
}

/** The result of an exact pricing call. */
class ExactResult {
  /** The patterns better than `start`, best first, at most KEEP. */
  found: Array<Int32Array> = new Array<Int32Array>();
  worth: f64 = 0;
  /** The search proved nothing is worth more than `worth`. */
  complete: bool = true;
  /** A pattern worth more than the `start` given was found (it is in the take). */
  improved: bool = false;
  constructor(readonly take: Int32Array) {}
}

/** The patterns an exact search keeps (the best ones). */
const KEEP = 16;

/** Depth-first search state for one type. */
class Search {
  readonly items: Array<i32> = new Array<i32>();
  /** Surrogate weight per item (sum over resources of its share of the node). */
  readonly w: Float64Array;
  readonly room: Float64Array;
  readonly cur: Int32Array;
  best: f64 = 0;
  nodes: i32 = 0;
  complete: bool = true;
  /** The best patterns found (at most KEEP), their worths, and the worth a pattern must beat to join them. */
  found: Array<Int32Array> = new Array<Int32Array>();
  worths: Array<f64> = new Array<f64>();
  floor: f64 = 0;
  /** Lagrangian prices of the resources (lagrangeBound at the root), for the bound at every node. */
  readonly mu: Float64Array;
  /** Each class's worth beyond what it uses at those prices (>= 0). */
  readonly gain: Float64Array;
  root: f64 = 0;
  constructor(readonly p: Problem, readonly x: i32, readonly pi: Float64Array, readonly u: Int32Array, readonly limit: i32, readonly out: Int32Array) {
    const C = p.C;
    const mu = new Float64Array(p.R);
    const root = lagrangeBound(p, x, pi, u, mu);
    const gain = new Float64Array(C);
    for (let c = 0; c < C; c++) {
      let g = unchecked(pi[c]);
      for (let r = 0; r < p.R; r++) g -= unchecked(mu[r]) * p.req(c, r);
      unchecked((gain[c] = max(0, g)));
    }
    this.mu = mu;
    this.root = root;
    this.gain = gain;
    this.w = new Float64Array(C);
    this.room = new Float64Array(p.R);
    this.cur = new Int32Array(C);
    const eff = new Float64Array(C);
    for (let c = 0; c < C; c++) {
      let s: f64 = 0;
      for (let r = 0; r < p.R; r++) {
        const cap = p.cap(x, r);
        if (cap > 0) s += p.req(c, r) / cap;
      }
      unchecked((this.w[c] = s));
      const ok = unchecked(pi[c]) > 0 && unchecked(u[c]) > 0 && p.allows(c, x) && fitsAlone(p, c, x);
      unchecked((eff[c] = ok ? (s > 0 ? unchecked(pi[c]) / s : Infinity) : -1));
    }
    const order = descending(eff);
    for (let i = 0; i < order.length; i++) if (unchecked(eff[unchecked(order[i])]) >= 0) this.items.push(unchecked(order[i]));
    for (let r = 0; r < p.R; r++) unchecked((this.room[r] = p.cap(x, r)));
  }

  /** An upper bound on what items i.. can add in the room left: the smaller of the two relaxations below. */
  relaxed(i: i32): f64 {
    return min(this.surrogate(i), this.lagrangian(i));
  }

  /** The Lagrangian bound with the root's resource prices over items i.. in the room left. */
  lagrangian(i: i32): f64 {
    const p = this.p;
    let v: f64 = 0;
    for (let r = 0; r < p.R; r++) v += unchecked(this.mu[r]) * max(0, unchecked(this.room[r]));
    for (let k = i; k < this.items.length; k++) {
      const c = unchecked(this.items[k]);
      const g = unchecked(this.gain[c]);
      if (g > 0) v += g * <f64>p.fit(c, this.room, unchecked(this.u[c]));
    }
    return v;
  }

  /** Fractional worth of items i.. in the remaining surrogate capacity (an upper bound on what they can add). */
  surrogate(i: i32): f64 {
    let cap: f64 = 0;
    const p = this.p;
    for (let r = 0; r < p.R; r++) {
      const c0 = p.cap(this.x, r);
      if (c0 > 0) cap += max(0, unchecked(this.room[r])) / c0;
    }
    let w: f64 = 0;
    for (let k = i; k < this.items.length; k++) {
      const c = unchecked(this.items[k]);
      const u = <f64>min(unchecked(this.u[c]), p.fit(c, this.room, unchecked(this.u[c])));
      if (u <= 0) continue;
      const s = unchecked(this.w[c]);
      const v = unchecked(this.pi[c]);
      if (s <= 0 || u * s <= cap) {
        w += u * v;
        cap -= u * s;
      } else {
        w += v * cap / s;
        break;
      }
    }
    return w;
  }

  /**
   * Keeps the current pattern among the KEEP best (column generation takes several per round). Cutting branches by
   * the KEEP-th best worth still finds the KEEP best patterns, the best of all among them.
   */
  keep(worth: f64): void {
    if (worth > this.best) {
      this.best = worth;
      for (let c = 0; c < this.p.C; c++) unchecked((this.out[c] = unchecked(this.cur[c])));
    }
    if (this.found.length >= KEEP) {
      let m = 0;
      for (let k = 1; k < this.worths.length; k++) if (unchecked(this.worths[k]) < unchecked(this.worths[m])) m = k;
      unchecked((this.found[m] = this.cur.slice()));
      unchecked((this.worths[m] = worth));
      let lo = Infinity;
      for (let k = 0; k < this.worths.length; k++) lo = min(lo, unchecked(this.worths[k]));
      this.floor = lo;
    } else {
      this.found.push(this.cur.slice());
      this.worths.push(worth);
    }
  }

  dive(i: i32, worth: f64): void {
    if (this.nodes >= this.limit) {
      this.complete = false;
      return;
    }
    this.nodes++;
    if (worth > this.floor + 1e-12) this.keep(worth);
    if (i >= this.items.length || worth + this.relaxed(i) <= this.floor * (1 + 1e-9) + 1e-12) return;
    const p = this.p;
    const c = unchecked(this.items[i]);
    const kmax = p.fit(c, this.room, unchecked(this.u[c]));
    for (let k = kmax; k >= 0; k--) {
      for (let r = 0; r < p.R; r++) unchecked((this.room[r] -= <f64>k * p.req(c, r)));
      unchecked((this.cur[c] = k));
      this.dive(i + 1, worth + <f64>k * unchecked(this.pi[c]));
      unchecked((this.cur[c] = 0));
      for (let r = 0; r < p.R; r++) unchecked((this.room[r] += <f64>k * p.req(c, r)));
      if (!this.complete) return;
    }
  }
}

/**
 * The pattern worth most on type x at prices pi, at most u[c] of each class, searching at most `limit` nodes; the
 * take goes to `out`. `start` is a worth already reached (a heuristic's), so that only better patterns are kept.
 */
export function exactBest(p: Problem, x: i32, pi: Float64Array, u: Int32Array, limit: i32, start: f64, out: Int32Array): ExactResult {
  out.fill(0);
  const s = new Search(p, x, pi, u, limit, out);
  s.best = start;
  s.floor = start;
  // Nothing can beat the Lagrangian bound at the root: when it is no better than `start`, there is nothing to search.
  if (s.root > start * (1 + 1e-9) + 1e-12) s.dive(0, 0);
  spend(<f64>s.nodes * <f64>(p.C * (p.R + 2)));
  const res = new ExactResult(out);
  res.worth = s.best;
  res.complete = s.complete;
  res.improved = s.best > start;
  // Best first.
  const order = new Float64Array(s.worths.length);
  for (let k = 0; k < order.length; k++) unchecked((order[k] = unchecked(s.worths[k])));
  const idx = descending(order);
  for (let k = 0; k < idx.length; k++) res.found.push(unchecked(s.found[unchecked(idx[k])]));
  return res;
}
