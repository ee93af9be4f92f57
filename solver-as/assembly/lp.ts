// A small dense two-phase simplex for the covering LP that guides node shapes:
//
//   minimise  Σ_j price_j x_j   subject to   Σ_j cap_rj x_j >= demand_r  (r < R),  x >= 0
//
// R is the number of resource dimensions (a handful), so the tableau is (R + 1) rows by (J + 2R + 1)
// columns, the last row holding the reduced costs, and each pivot costs O(R·J). What we need from it are
// the duals: a price per unit of each resource such that no instance type is worth more than it costs,
// which scores how well a bin of pods uses a node. Rows are scaled so every demand is 1 (CPU millicores and
// memory bytes differ by 10^8). Covering LPs over instance catalogs are highly degenerate (many types with
// proportional shapes), so pivoting uses Dantzig's rule until it stalls and then Bland's rule, which
// cannot cycle.

import { spend } from './budget';

let tab: Float64Array = new Float64Array(0);
let cols: i32 = 0;
let rows: i32 = 0; // constraint rows; row `rows` is the objective
let basis: Int32Array = new Int32Array(0);

const EPS: f64 = 1e-9;

@inline function at(i: i32, j: i32): f64 {
  return unchecked(tab[i * cols + j]);
}
@inline function set(i: i32, j: i32, v: f64): void {
  unchecked((tab[i * cols + j] = v));
}

function pivot(pr: i32, pc: i32): void {
  const pv = at(pr, pc);
  const base = pr * cols;
  for (let j = 0; j < cols; j++) unchecked((tab[base + j] /= pv));
  for (let i = 0; i <= rows; i++) {
    if (i == pr) continue;
    const f = at(i, pc);
    if (f == 0) continue;
    const bi = i * cols;
    for (let j = 0; j < cols; j++) unchecked((tab[bi + j] -= f * unchecked(tab[base + j])));
  }
  unchecked((basis[pr] = pc));
}

/** Loads the objective row for `cost` (reduced costs against the current basis). */
function loadObjective(cost: Float64Array): void {
  const o = rows * cols;
  for (let j = 0; j < cols; j++) unchecked((tab[o + j] = unchecked(cost[j])));
  for (let i = 0; i < rows; i++) {
    const cb = unchecked(cost[unchecked(basis[i])]);
    if (cb == 0) continue;
    for (let j = 0; j < cols; j++) unchecked((tab[o + j] -= cb * at(i, j)));
  }
}

/** Pivots until optimal for the loaded objective over columns < `usable`; false if unbounded. */
function optimise(usable: i32, maxIter: i32): bool {
  const rhs = cols - 1;
  let stalled = 0;
  let last: f64 = Infinity;
  for (let iter = 0; iter < maxIter; iter++) {
    spend(<f64>((rows + 1) * cols));
    const bland = stalled > 20;
    let enter = -1;
    let best: f64 = -EPS;
    for (let j = 0; j < usable; j++) {
      const d = at(rows, j);
      if (d < best) {
        enter = j;
        if (bland) break;
        best = d;
      }
    }
    if (enter < 0) return true;
    let leave = -1;
    let ratio: f64 = Infinity;
    for (let i = 0; i < rows; i++) {
      const a = at(i, enter);
      if (a <= EPS) continue;
      const r = at(i, rhs) / a;
      if (r < ratio - EPS || (bland && Math.abs(r - ratio) <= EPS && leave >= 0 && unchecked(basis[i]) < unchecked(basis[leave]))) {
        ratio = r;
        leave = i;
      }
    }
    if (leave < 0) return false;
    pivot(leave, enter);
    const obj = -at(rows, rhs);
    if (obj < last - EPS) {
      last = obj;
      stalled = 0;
    } else stalled++;
  }
  return true;
}

/**
 * Solves the covering LP: `cap` is R x J row-major, `price` has J entries, `demand` R entries. Writes the
 * resource prices (duals, per original unit) into `duals` and returns the LP optimum, or -1 when infeasible.
 */
export function coverDuals(cap: Float64Array, price: Float64Array, demand: Float64Array, R: i32, J: i32, duals: Float64Array, primal: Float64Array | null = null): f64 {
  rows = R;
  cols = J + 2 * R + 1;
  tab = new Float64Array((rows + 1) * cols);
  basis = new Int32Array(rows);
  const rhs = cols - 1;
  for (let r = 0; r < R; r++) {
    const d = unchecked(demand[r]);
    const scale: f64 = d > 0 ? 1.0 / d : 1.0;
    for (let j = 0; j < J; j++) set(r, j, unchecked(cap[r * J + j]) * scale);
    set(r, J + r, -1);
    set(r, J + R + r, 1);
    set(r, rhs, d > 0 ? 1 : 0);
    unchecked((basis[r] = J + R + r));
  }
  // Phase 1: drive the artificial variables out.
  const c1 = new Float64Array(cols);
  for (let r = 0; r < R; r++) unchecked((c1[J + R + r] = 1));
  loadObjective(c1);
  optimise(J + R, 20000);
  let infeas: f64 = 0;
  for (let r = 0; r < R; r++) if (unchecked(basis[r]) >= J + R) infeas += at(r, rhs);
  if (infeas > 1e-7) return -1;
  // Phase 2: the real costs; artificial columns may not enter.
  const c2 = new Float64Array(cols);
  for (let j = 0; j < J; j++) unchecked((c2[j] = unchecked(price[j])));
  loadObjective(c2);
  if (!optimise(J + R, 20000)) return -1;
  let obj: f64 = 0;
  for (let r = 0; r < R; r++) obj += unchecked(c2[unchecked(basis[r])]) * at(r, rhs);
  if (primal != null) {
    primal.fill(0);
    for (let r = 0; r < R; r++) {
      const b = unchecked(basis[r]);
      if (b < J) unchecked((primal[b] = at(r, rhs)));
    }
  }
  // The dual of row r is the reduced cost of its surplus column; undo the row scaling.
  for (let r = 0; r < R; r++) {
    const dem = unchecked(demand[r]);
    unchecked((duals[r] = dem > 0 ? at(rows, J + r) / dem : 0));
  }
  return obj;
}
