// The master LP of pattern packing (patterns.ts), solved by a revised simplex that keeps its basis between
// solves:
//
//   minimise  Σ_j cost_j z_j   subject to   Σ_j take_jc z_j >= demand_c  (each class c),  z >= 0
//
// Column generation adds columns to a solved LP, which leaves the basis feasible: a few primal pivots
// re-optimise it. Rounding lowers the demand, which leaves the basis dual feasible: a few dual-simplex
// pivots restore feasibility. So each re-solve costs a handful of pivots, not a solve from scratch.
//
// Rows are pod classes (a few dozen), so the basis inverse is kept explicitly (C x C) and rebuilt from the
// basis every REFACTOR pivots, which bounds rounding drift. Columns 0..C-1 must be single-class patterns
// (column c takes only class c): that basis is feasible for any demand and is the fallback when neither
// warm start applies. Covering LPs are degenerate, so pivoting turns to Bland's rule (which cannot cycle)
// after a run of pivots that do not improve the objective, and stays with it to the end of the solve.

import { spend } from './budget';

const TOL: f64 = 1e-9;
const PIVOT_TOL: f64 = 1e-9;
const REFACTOR = 64;
const STALL = 16;

export class Master {
  readonly C: i32;
  /** Column j's take of class c at take[j][c]; costs are divided by `scale` inside. */
  take: Array<Float64Array> = new Array<Float64Array>();
  /** The same columns sparse: the classes each takes (ascending) and how many. Patterns hold a few classes each. */
  nzAt: Array<Int32Array> = new Array<Int32Array>();
  nzVal: Array<Float64Array> = new Array<Float64Array>();
  /** Nonzeros over all columns: what pricing every column costs. */
  nnz: i32 = 0;
  cost: Array<f64> = new Array<f64>();
  scale: f64 = 1;
  demand: Float64Array;
  /** Basic variable per row: j >= 0 a column, -(c + 1) the surplus of row c. */
  basis: Int32Array;
  binv: Float64Array;
  xB: Float64Array;
  /** Duals per class (per pod, in the caller's cost unit) after a successful solve. */
  duals: Float64Array;
  obj: f64 = 0;
  /**
   * Pivots a solve may take, as a multiple of (classes + columns) (0: 20). Rounding lowers it: when a warm start
   * fails (the dual simplex cycles after the demand dropped), the solve from the single-class basis on a degenerate
   * covering LP can take thousands of pivots, and rounding is better off finishing without it.
   */
  pivotsPerVar: i32 = 20;
  private w: Float64Array;
  private col: Float64Array;
  private inBasis: Uint8Array = new Uint8Array(0);

  constructor(C: i32) {
    this.C = C;
    this.demand = new Float64Array(C);
    this.basis = new Int32Array(C);
    this.binv = new Float64Array(C * C);
    this.xB = new Float64Array(C);
    this.duals = new Float64Array(C);
    this.w = new Float64Array(C);
    this.col = new Float64Array(C);
    for (let c = 0; c < C; c++) unchecked((this.basis[c] = c));
  }

  addColumn(t: Int32Array, cost: f64): void {
    if (this.take.length == 0) this.scale = cost > 0 ? cost : 1;
    const a = new Float64Array(this.C);
    let n = 0;
    for (let c = 0; c < this.C; c++) {
      unchecked((a[c] = <f64>unchecked(t[c])));
      if (unchecked(t[c]) != 0) n++;
    }
    const at = new Int32Array(n);
    const val = new Float64Array(n);
    n = 0;
    for (let c = 0; c < this.C; c++) {
      if (unchecked(t[c]) == 0) continue;
      unchecked((at[n] = c));
      unchecked((val[n] = <f64>unchecked(t[c])));
      n++;
    }
    this.take.push(a);
    this.nzAt.push(at);
    this.nzVal.push(val);
    this.nnz += n;
    this.cost.push(cost / this.scale);
  }

  setDemand(left: Int32Array): void {
    for (let c = 0; c < this.C; c++) unchecked((this.demand[c] = <f64>unchecked(left[c])));
  }

  /**
   * Keeps only the columns with keep[j] != 0 (which must include every basic one), renumbered in order; returns the
   * new index of each old column (-1: dropped). The basis and its inverse stay valid: only the numbering changes.
   */
  dropColumns(keep: Uint8Array): Int32Array {
    const J = this.take.length;
    const map = new Int32Array(J);
    const take = new Array<Float64Array>();
    const nzAt = new Array<Int32Array>();
    const nzVal = new Array<Float64Array>();
    const cost = new Array<f64>();
    let nnz = 0;
    for (let j = 0; j < J; j++) {
      if (unchecked(keep[j]) == 0) {
        unchecked((map[j] = -1));
        continue;
      }
      unchecked((map[j] = take.length));
      take.push(unchecked(this.take[j]));
      nzAt.push(unchecked(this.nzAt[j]));
      nzVal.push(unchecked(this.nzVal[j]));
      nnz += unchecked(this.nzAt[j]).length;
      cost.push(unchecked(this.cost[j]));
    }
    this.take = take;
    this.nzAt = nzAt;
    this.nzVal = nzVal;
    this.nnz = nnz;
    this.cost = cost;
    for (let i = 0; i < this.C; i++) {
      const k = unchecked(this.basis[i]);
      if (k >= 0) unchecked((this.basis[i] = unchecked(map[k])));
    }
    this.markBasis();
    return map;
  }

  /** Column j is basic. */
  isBasic(j: i32): bool {
    for (let i = 0; i < this.C; i++) if (unchecked(this.basis[i]) == j) return true;
    return false;
  }

  /** z of column j in the current basic solution. */
  z(j: i32): f64 {
    for (let i = 0; i < this.C; i++) if (unchecked(this.basis[i]) == j) return max(0, unchecked(this.xB[i]));
    return 0;
  }

  /** Optimises for the current columns and demand; false if it could not (singular basis, iteration cap). */
  solve(): bool {
    const C = this.C;
    if (!this.refactor()) {
      for (let c = 0; c < C; c++) unchecked((this.basis[c] = c));
      if (!this.refactor()) return false;
    }
    let feasible = true;
    for (let i = 0; i < C; i++) if (unchecked(this.xB[i]) < -TOL) feasible = false;
    if (!feasible && !(this.dualFeasible() && this.dualSimplex())) {
      for (let c = 0; c < C; c++) unchecked((this.basis[c] = c));
      if (!this.refactor()) return false;
    }
    if (!this.primalSimplex()) return false;
    this.prices();
    let obj: f64 = 0;
    for (let i = 0; i < C; i++) {
      const j = unchecked(this.basis[i]);
      if (j >= 0) obj += unchecked(this.cost[j]) * max(0, unchecked(this.xB[i]));
    }
    this.obj = obj * this.scale;
    for (let c = 0; c < C; c++) unchecked((this.duals[c] *= this.scale));
    return true;
  }

  private colVec(k: i32, out: Float64Array): void {
    if (k >= 0) {
      const a = unchecked(this.take[k]);
      for (let c = 0; c < this.C; c++) unchecked((out[c] = unchecked(a[c])));
    } else {
      out.fill(0);
      unchecked((out[-k - 1] = -1));
    }
  }

  /** Rebuilds the basis inverse (Gauss-Jordan, partial pivoting) and xB; false if singular. */
  private refactor(): bool {
    const C = this.C;
    const m = new Float64Array(C * C);
    // The work is the row operations done (a sparse basis needs few), each over two rows of C.
    let ops: f64 = <f64>C;
    for (let i = 0; i < C; i++) {
      this.colVec(unchecked(this.basis[i]), this.col);
      for (let r = 0; r < C; r++) unchecked((m[r * C + i] = unchecked(this.col[r])));
    }
    const inv = this.binv;
    inv.fill(0);
    for (let i = 0; i < C; i++) unchecked((inv[i * C + i] = 1));
    for (let k = 0; k < C; k++) {
      let p = k;
      for (let r = k + 1; r < C; r++) if (Math.abs(unchecked(m[r * C + k])) > Math.abs(unchecked(m[p * C + k]))) p = r;
      const pv = unchecked(m[p * C + k]);
      if (Math.abs(pv) < 1e-12) return false;
      if (p != k) {
        for (let j = 0; j < C; j++) {
          let t = unchecked(m[k * C + j]);
          unchecked((m[k * C + j] = unchecked(m[p * C + j])));
          unchecked((m[p * C + j] = t));
          t = unchecked(inv[k * C + j]);
          unchecked((inv[k * C + j] = unchecked(inv[p * C + j])));
          unchecked((inv[p * C + j] = t));
        }
      }
      for (let j = 0; j < C; j++) {
        unchecked((m[k * C + j] /= pv));
        unchecked((inv[k * C + j] /= pv));
      }
      for (let r = 0; r < C; r++) {
        if (r == k) continue;
        const f = unchecked(m[r * C + k]);
        if (f == 0) continue;
        ops += 1;
        for (let j = 0; j < C; j++) {
          unchecked((m[r * C + j] -= f * unchecked(m[k * C + j])));
          unchecked((inv[r * C + j] -= f * unchecked(inv[k * C + j])));
        }
      }
    }
    spend(ops * <f64>(2 * C) + <f64>C * <f64>C);
    // Rows of B^-1 follow the basis order: B's column i is basis[i], so row i of B^-1 gives xB[i].
    for (let i = 0; i < C; i++) {
      let v: f64 = 0;
      for (let c = 0; c < C; c++) v += unchecked(inv[i * C + c]) * unchecked(this.demand[c]);
      unchecked((this.xB[i] = v));
    }
    this.markBasis();
    return true;
  }

  private markBasis(): void {
    const J = this.take.length;
    if (this.inBasis.length < J + this.C) this.inBasis = new Uint8Array((J + this.C) * 2);
    this.inBasis.fill(0);
    for (let i = 0; i < this.C; i++) {
      const k = unchecked(this.basis[i]);
      unchecked((this.inBasis[k >= 0 ? this.C + k : -k - 1] = 1));
    }
  }

  /** Duals y = c_B B^-1 (in scaled cost units). */
  private prices(): void {
    const C = this.C;
    const y = this.duals;
    y.fill(0);
    // Row by row of B^-1 (contiguous), each dual still summed over the rows in order.
    for (let i = 0; i < C; i++) {
      const j = unchecked(this.basis[i]);
      if (j < 0) continue;
      const cb = unchecked(this.cost[j]);
      const row = i * C;
      for (let c = 0; c < C; c++) unchecked((y[c] += cb * unchecked(this.binv[row + c])));
    }
  }

  /** Reduced cost of variable k (a column, or a surplus) at the current duals. */
  private reduced(k: i32): f64 {
    if (k < 0) return unchecked(this.duals[-k - 1]);
    const at = unchecked(this.nzAt[k]);
    const val = unchecked(this.nzVal[k]);
    let d = unchecked(this.cost[k]);
    for (let n = 0; n < at.length; n++) d -= unchecked(this.duals[unchecked(at[n])]) * unchecked(val[n]);
    return d;
  }

  private dualFeasible(): bool {
    this.prices();
    const J = this.take.length;
    for (let r = 0; r < this.C; r++) if (this.reduced(-r - 1) < -TOL) return false;
    for (let j = 0; j < J; j++) if (this.reduced(j) < -TOL) return false;
    return true;
  }

  /** Pivots variable k into row p, w = B^-1 a_k already computed. */
  private pivot(p: i32, k: i32, pivots: i32): bool {
    const C = this.C;
    const w = this.w;
    const pv = unchecked(w[p]);
    const inv = this.binv;
    for (let c = 0; c < C; c++) unchecked((inv[p * C + c] /= pv));
    unchecked((this.xB[p] /= pv));
    for (let i = 0; i < C; i++) {
      if (i == p) continue;
      const f = unchecked(w[i]);
      if (f == 0) continue;
      for (let c = 0; c < C; c++) unchecked((inv[i * C + c] -= f * unchecked(inv[p * C + c])));
      unchecked((this.xB[i] -= f * unchecked(this.xB[p])));
    }
    unchecked((this.basis[p] = k));
    if (pivots % REFACTOR == REFACTOR - 1) return this.refactor();
    this.markBasis();
    return true;
  }

  private direction(k: i32): void {
    const C = this.C;
    if (k < 0) {
      // A surplus: minus column -k - 1 of B^-1.
      const c = -k - 1;
      for (let i = 0; i < C; i++) unchecked((this.w[i] = -unchecked(this.binv[i * C + c])));
      return;
    }
    const at = unchecked(this.nzAt[k]);
    const val = unchecked(this.nzVal[k]);
    for (let i = 0; i < C; i++) {
      let v: f64 = 0;
      for (let n = 0; n < at.length; n++) v += unchecked(this.binv[i * C + unchecked(at[n])]) * unchecked(val[n]);
      unchecked((this.w[i] = v));
    }
  }

  private primalSimplex(): bool {
    const C = this.C;
    const limit = this.pivotsPerVar * (C + this.take.length) + 200;
    let stalled = 0;
    let bland = false;
    let last: f64 = Infinity;
    for (let it = 0; it < limit; it++) {
      spend(this.pivotWork());
      this.prices();
      if (stalled > STALL) bland = true;
      // Entering: most negative reduced cost (Dantzig), or the first negative (Bland: surpluses, then columns).
      let enter: i32 = 0;
      let found = false;
      let best: f64 = -TOL;
      const J = this.take.length;
      for (let q = 0; q < C + J && !(bland && found); q++) {
        if (unchecked(this.inBasis[q]) != 0) continue;
        const k = q < C ? -q - 1 : q - C;
        const d = this.reduced(k);
        if (d < best) {
          enter = k;
          found = true;
          if (!bland) best = d;
        }
      }
      if (!found) return true;
      this.direction(enter);
      let p = -1;
      let ratio: f64 = Infinity;
      for (let i = 0; i < C; i++) {
        const a = unchecked(this.w[i]);
        if (a <= PIVOT_TOL) continue;
        const r = max(0, unchecked(this.xB[i])) / a;
        if (r < ratio - TOL || (Math.abs(r - ratio) <= TOL && p >= 0 && this.order(unchecked(this.basis[i])) < this.order(unchecked(this.basis[p])))) {
          ratio = r;
          p = i;
        }
      }
      if (p < 0) return false;
      if (!this.pivot(p, enter, it)) return false;
      let obj: f64 = 0;
      for (let i = 0; i < C; i++) {
        const j = unchecked(this.basis[i]);
        if (j >= 0) obj += unchecked(this.cost[j]) * unchecked(this.xB[i]);
      }
      if (obj < last - 1e-12 * max(1.0, Math.abs(obj))) {
        last = obj;
        stalled = 0;
      } else stalled++;
    }
    return false;
  }

  /** One pivot's work: the duals and the update of B^-1 (C x C each), pricing every column (its nonzeros). */
  @inline private pivotWork(): f64 {
    return <f64>(2 * this.C * this.C + this.nnz + this.take.length);
  }

  @inline private order(k: i32): i32 {
    return k < 0 ? -k - 1 : this.C + k;
  }

  /** Restores primal feasibility from a dual-feasible basis; false if it could not. */
  private dualSimplex(): bool {
    const C = this.C;
    // Lowering the demand takes a few pivots; a dual simplex that runs long is cycling on a degenerate basis, and
    // the primal simplex from the single-class basis (solve) is the cheaper way out.
    const limit = 10 * C + 100;
    for (let it = 0; it < limit; it++) {
      spend(this.pivotWork());
      // Leaving: the most infeasible row, or after a while (degenerate bases cycle) the first by variable order.
      const bland = it > 2 * C;
      let p = -1;
      let worst: f64 = -TOL;
      for (let i = 0; i < C; i++) {
        const x = unchecked(this.xB[i]);
        if (x >= -TOL) continue;
        if (bland ? p < 0 || this.order(unchecked(this.basis[i])) < this.order(unchecked(this.basis[p])) : x < worst) {
          worst = x;
          p = i;
        }
      }
      if (p < 0) return true;
      this.prices();
      // Row p of B^-1 A for every nonbasic variable; entering: the least reduced cost per unit of |alpha|.
      let enter: i32 = 0;
      let found = false;
      let ratio: f64 = Infinity;
      const J = this.take.length;
      for (let q = 0; q < C + J; q++) {
        if (unchecked(this.inBasis[q]) != 0) continue;
        let alpha: f64 = 0;
        let k: i32;
        if (q < C) {
          k = -q - 1;
          alpha = -unchecked(this.binv[p * C + q]);
        } else {
          k = q - C;
          const at = unchecked(this.nzAt[k]);
          const val = unchecked(this.nzVal[k]);
          for (let n = 0; n < at.length; n++) alpha += unchecked(this.binv[p * C + unchecked(at[n])]) * unchecked(val[n]);
        }
        if (alpha >= -PIVOT_TOL) continue;
        const r = max(0, this.reduced(k)) / -alpha;
        if (r < ratio - TOL) {
          ratio = r;
          enter = k;
          found = true;
        }
      }
      if (!found) return false;
      this.direction(enter);
      if (!this.pivot(p, enter, it)) return false;
    }
    return false;
  }
}
