// A covering problem for column generation (patterns.ts, cg.ts): classes of equal items (pods with equal requests)
// with a demand each, and node types with a capacity and a price; a pattern is one node's take of each class. The
// improvement phase builds one per requirement group (its pods and the types the group may use, costed as their
// launch would pay); the integer-aware lower bound (boundcg.ts) builds one over every NodePool's options, where a
// class may use only the options its pods allow (`allowed`).
import { Classes, Types, takeTotal } from './bins';
import { RESOURCES } from './layout';

export class Problem {
  /** Item requests, class-major (R per class). */
  readonly reqs: Float64Array;
  /** Type capacities, type-major (R per type). */
  readonly caps: Float64Array;
  readonly prices: Float64Array;
  readonly counts: Int32Array;
  /** allowed[c * X + x] != 0 when class c may use type x; null: every class may use every type. */
  allowed: Uint8Array | null = null;
  /** The improvement phase's types: a pattern costs what its launch would pay (bins.ts). Null: its type's price. */
  launch: Types | null = null;
  launchClasses: Classes | null = null;
  private total: Float64Array;

  constructor(readonly C: i32, readonly X: i32, readonly R: i32) {
    this.reqs = new Float64Array(C * R);
    this.caps = new Float64Array(X * R);
    this.prices = new Float64Array(X);
    this.counts = new Int32Array(C);
    this.total = new Float64Array(R);
  }

  @inline req(c: i32, r: i32): f64 {
    return unchecked(this.reqs[c * this.R + r]);
  }
  @inline cap(x: i32, r: i32): f64 {
    return unchecked(this.caps[x * this.R + r]);
  }
  @inline allows(c: i32, x: i32): bool {
    const a = this.allowed;
    return a == null || unchecked(a[c * this.X + x]) != 0;
  }

  /** How many items of class c fit `room` (R entries), at most `u`. */
  fit(c: i32, room: Float64Array, u: i32): i32 {
    let k = u;
    for (let r = 0; r < this.R && k > 0; r++) {
      const s = this.req(c, r);
      if (s <= 0) continue;
      const f = unchecked(room[r]) + 1e-9 < s ? 0 : <i32>Math.floor((unchecked(room[r]) + 1e-9) / s);
      if (f < k) k = f;
    }
    return k;
  }

  /**
   * What a node of `take` costs: as launched (improvement phase); else the price of type x it was priced on, or
   * (x < 0) of the cheapest type that holds it and that all its classes may use.
   */
  cost(take: Int32Array, x: i32): f64 {
    const ts = this.launch;
    if (ts != null) {
      takeTotal(this.launchClasses!, take, this.total);
      return ts.cost(this.total);
    }
    if (x >= 0) return unchecked(this.prices[x]);
    const total = this.total;
    total.fill(0);
    for (let c = 0; c < this.C; c++) for (let r = 0; r < this.R; r++) unchecked((total[r] += <f64>unchecked(take[c]) * this.req(c, r)));
    let best = Infinity;
    for (let y = 0; y < this.X; y++) {
      if (unchecked(this.prices[y]) >= best) continue;
      let ok = true;
      for (let r = 0; r < this.R && ok; r++) if (unchecked(total[r]) > this.cap(y, r) + 1e-6) ok = false;
      for (let c = 0; c < this.C && ok; c++) if (unchecked(take[c]) > 0 && !this.allows(c, y)) ok = false;
      if (ok) best = unchecked(this.prices[y]);
    }
    return best;
  }

  /** The classes `idx` of this problem, with demand `left` (a residual problem for rounding, patterns.ts). */
  subset(idx: Int32Array, left: Int32Array): Problem {
    const C = idx.length;
    const q = new Problem(C, this.X, this.R);
    for (let i = 0; i < C; i++) {
      const c = unchecked(idx[i]);
      unchecked((q.counts[i] = unchecked(left[c])));
      for (let r = 0; r < this.R; r++) unchecked((q.reqs[i * this.R + r] = this.req(c, r)));
    }
    q.caps.set(this.caps);
    q.prices.set(this.prices);
    const a = this.allowed;
    if (a != null) {
      const b = new Uint8Array(C * this.X);
      for (let i = 0; i < C; i++) for (let x = 0; x < this.X; x++) unchecked((b[i * this.X + x] = unchecked(a[unchecked(idx[i]) * this.X + x])));
      q.allowed = b;
    }
    q.launch = this.launch;
    const cl = this.launchClasses;
    if (cl != null) q.launchClasses = cl.subset(idx);
    return q;
  }

  /** The improvement phase's problem for one group: its classes and types (all allowed), costed as launched. */
  static ofGroup(ts: Types, cl: Classes): Problem {
    const C = cl.versions.length;
    const p = new Problem(C, ts.n, RESOURCES);
    for (let c = 0; c < C; c++) {
      unchecked((p.counts[c] = unchecked(cl.counts[c])));
      for (let r = 0; r < RESOURCES; r++) unchecked((p.reqs[c * RESOURCES + r] = unchecked(cl.reqs[c * RESOURCES + r])));
    }
    for (let x = 0; x < ts.n; x++) {
      unchecked((p.prices[x] = unchecked(ts.prices[x])));
      for (let r = 0; r < RESOURCES; r++) unchecked((p.caps[x * RESOURCES + r] = ts.cap(x, r)));
    }
    p.launch = ts;
    p.launchClasses = cl;
    return p;
  }
}
