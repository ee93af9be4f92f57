// Kelley's cutting-plane master for maximising a concave piecewise-linear function over a box (docs/lower-bound.md,
// "Multipliers"): every evaluation of the Lagrangian bound L at π gives a cut L(x) <= c + g·x (c the cost of the
// relaxation's minimiser, g its subgradient), and the next π is the point of the box where the least cut is largest:
//
//     max t   subject to   t <= c_j + g_j·π   (every cut j),   -box <= π_i <= box
//
// (J. E. Kelley, "The cutting-plane method for solving convex programs", J. SIAM 8, 1960; on a Lagrangian dual it is
// Dantzig-Wolfe decomposition seen from the dual side). Its value is an upper bound on max L, so the gap to the best
// L seen says when the search is done. It is solved as its dual, a tiny LP with one row per multiplier and the
// convexity row,
//
//     min Σ_j c_j·λ_j + box·Σ_i (α_i + β_i)   subject to   Σ_j λ_j = 1,   α_i - β_i - Σ_j g_{j,i}·λ_j = 0,   λ, α, β >= 0
//
// by a dense primal simplex with Bland's rule (no cycling), warm from the last basis as cuts are added; the row duals
// are (t, π). Plain floating-point arithmetic in a fixed order: the same cuts give the same π on every machine.

/** Reduced costs and ratios within this are taken as zero. */
const EPS = 1e-9;

interface MasterPoint {
  /** The next multipliers. */
  readonly pi: Float64Array;
  /** The master's value: no π in the box has L(π) above it. */
  readonly upper: number;
}

export class CutMaster {
  private readonly rows: number;
  /** Columns of the dual LP: the 2m box columns first, then one per cut. */
  private readonly cols: Float64Array[] = [];
  private readonly cost: number[] = [];
  private basis: number[] = [];

  constructor(
    private readonly m: number,
    box: number,
  ) {
    this.rows = m + 1;
    for (let i = 0; i < m; i++)
      for (const sign of [1, -1]) {
        const a = new Float64Array(this.rows);
        a[i + 1] = sign;
        this.cols.push(a);
        this.cost.push(box);
      }
  }

  /** Adds the cut t <= c + g·π. */
  add(c: number, g: ArrayLike<number>): void {
    const a = new Float64Array(this.rows);
    a[0] = 1;
    for (let i = 0; i < this.m; i++) a[i + 1] = -g[i]!;
    this.cols.push(a);
    this.cost.push(c);
    if (this.basis.length === 0) this.basis = this.startBasis(a);
  }

  /** The first cut with one box column per row is a feasible basis: λ = 1, α_i - β_i = g_i. */
  private startBasis(first: Float64Array): number[] {
    const basis = [this.cols.length - 1];
    for (let i = 0; i < this.m; i++) basis.push(2 * i + (first[i + 1]! <= 0 ? 0 : 1));
    return basis;
  }

  /** Solves the master (at most `maxPivots` pivots); undefined when it has no cut or the pivots run out. */
  solve(maxPivots = 1000): MasterPoint | undefined {
    if (this.basis.length === 0) return undefined;
    for (let pivot = 0; pivot <= maxPivots; pivot++) {
      const inv = invert(this.basis.map((j) => this.cols[j]!));
      if (!inv) return undefined;
      const y = this.duals(inv);
      const enter = this.entering(y);
      if (enter < 0) return { pi: y.slice(1), upper: y[0]! };
      const leave = this.leaving(inv, enter);
      if (leave < 0) return undefined;
      this.basis[leave] = enter;
    }
    return undefined;
  }

  /** y = c_B · B⁻¹ (inv holds B⁻¹ by rows). */
  private duals(inv: Float64Array[]): Float64Array {
    const y = new Float64Array(this.rows);
    this.basis.forEach((j, r) => {
      const c = this.cost[j]!;
      for (let k = 0; k < this.rows; k++) y[k]! += c * inv[r]![k]!;
    });
    return y;
  }

  /** Bland's rule: the first column with a negative reduced cost, or -1 when the basis is optimal. */
  private entering(y: Float64Array): number {
    const inBasis = new Set(this.basis);
    const scale = 1 + Math.abs(y[0]!);
    for (let j = 0; j < this.cols.length; j++) {
      if (inBasis.has(j)) continue;
      const a = this.cols[j]!;
      let d = this.cost[j]!;
      for (let k = 0; k < this.rows; k++) d -= y[k]! * a[k]!;
      if (d < -EPS * scale) return j;
    }
    return -1;
  }

  /** The ratio test (ties to the smallest column index, Bland's rule); -1 when the column is unbounded. */
  private leaving(inv: Float64Array[], enter: number): number {
    const a = this.cols[enter]!;
    let best = -1;
    let ratio = Infinity;
    for (let r = 0; r < this.rows; r++) {
      let u = 0;
      for (let k = 0; k < this.rows; k++) u += inv[r]![k]! * a[k]!;
      if (u <= EPS) continue;
      const x = inv[r]![0]! / u; // the basic solution is B⁻¹·e₀
      if (best < 0 || x < ratio - EPS || (x <= ratio + EPS && this.basis[r]! < this.basis[best]!)) {
        ratio = x;
        best = r;
      }
    }
    return best;
  }
}

/** B⁻¹ of the matrix whose columns are `cols`, by rows (Gauss-Jordan, partial pivoting); undefined if singular. */
function invert(cols: readonly Float64Array[]): Float64Array[] | undefined {
  const n = cols.length;
  const a = Array.from({ length: n }, (_, r) => Float64Array.from(cols, (c) => c[r]!));
  const inv = Array.from({ length: n }, (_, r) => {
    const row = new Float64Array(n);
    row[r] = 1;
    return row;
  });
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[p]![c]!)) p = r;
    if (Math.abs(a[p]![c]!) < 1e-12) return undefined;
    [a[c], a[p]] = [a[p]!, a[c]!];
    [inv[c], inv[p]] = [inv[p]!, inv[c]!];
    const d = a[c]![c]!;
    for (let k = 0; k < n; k++) {
      a[c]![k]! /= d;
      inv[c]![k]! /= d;
    }
    for (let r = 0; r < n; r++) {
      const f = a[r]![c]!;
      if (r === c || f === 0) continue;
      for (let k = 0; k < n; k++) {
        a[r]![k]! -= f * a[c]![k]!;
        inv[r]![k]! -= f * inv[c]![k]!;
      }
    }
  }
  return inv;
}
