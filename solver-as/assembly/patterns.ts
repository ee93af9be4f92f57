// Pattern packing, the cutting-stock way: a pattern is one node's take of each pod class. The master LP
// (master.ts) chooses how many nodes of each pattern to open so that every class is covered at least cost
//
//   minimise  Σ_j price_j z_j   subject to   Σ_j take_jc z_j >= left_c  (each class c),  z >= 0
//
// and its duals price each class's pods, not each resource: a pod is worth what the nodes it shares pay for
// it, so cpu-heavy and memory-heavy pods that fill a balanced node together are priced as such. Column
// generation starts from one single-class pattern per class and adds, per instance type, the pattern worth
// the most at those prices (knapsack.ts) while some pattern is worth more than its type costs.
//
// Rounding: open floor(z_j) nodes of each pattern and re-solve (with one more pricing round) for what is
// left; when no pattern reaches a whole node, open the node that loses least against the LP's prices (its
// cost beyond the worth of its pods, capped by what is left), and more such nodes while each loses at most
// SLACK. After every step, closing with the cheapest single node that holds everything left is a candidate
// end; the cheapest end is kept. Each node costs what the cheapest type holding its pods costs.
import { NR } from './layout';
import { Bin, Classes, Types, descending, fitCount, takeTotal } from './bins';
import { candidates, price, undominated } from './knapsack';
import { Master } from './master';

import { late, spend, workSpent } from './budget';

/** Column generation stops when no pattern is worth more than this times its type's price. */
const WORTH_TOLERANCE: f64 = 1.0005;
/** Pricing rounds for the full problem and for each residual. */
const ROUNDS_FULL = 80;
const ROUNDS_RESIDUAL = 1;
/** Types whose greedy patterns get the balanced fill and local search each round (the best-worth ones). */
const SEARCHED = 8;
/** Most columns added per round (the best-worth ones). */
const ADD_PER_ROUND = 8;
/** Column generation stops when the last TAIL_ROUNDS rounds gained less than TAIL of the LP objective. */
const TAIL_ROUNDS = 5;
const TAIL: f64 = 0.001;
/** The share of the group's work allowance that pricing may use (the rest is for rounding). */
const SOFT_SHARE: f64 = 0.5;
/** Rounding opens further nodes at the same LP prices while each loses at most this share of its cost. */
const SLACK: f64 = 0.01;

class Columns {
  take: Array<Int32Array> = new Array<Int32Array>();
  price: Array<f64> = new Array<f64>();
  lp: Master;
  constructor(C: i32) {
    this.lp = new Master(C);
  }
  add(t: Int32Array, price: f64): void {
    this.take.push(t);
    this.price.push(price);
    this.lp.addColumn(t, price);
  }
  has(t: Int32Array): bool {
    for (let j = 0; j < this.take.length; j++) {
      const o = unchecked(this.take[j]);
      let same = true;
      for (let c = 0; c < t.length && same; c++) if (unchecked(o[c]) != unchecked(t[c])) same = false;
      if (same) return true;
    }
    return false;
  }
}

/**
 * Column generation for demand `left`: solve, then up to `rounds` rounds of pricing the types `xs` and
 * re-solving; pricing stops early once the work spent passes `soft`. False past the safety-net deadline, or if
 * the LP would not solve.
 */
function generate(ts: Types, cl: Classes, und: Array<i32>, xs: Array<i32>, cols: Columns, left: Int32Array, rounds: i32, soft: f64): bool {
  const C = left.length;
  const m = cols.lp;
  const total = new Float64Array(NR);
  const ratio = new Float64Array(xs.length);
  const found = new Array<Int32Array>();
  for (let i = 0; i < xs.length; i++) found.push(new Int32Array(C));
  const history = new Array<f64>();
  for (let round = 0; ; round++) {
    if (late()) return false;
    m.setDemand(left);
    if (!m.solve()) return false;
    if (round >= rounds || workSpent() > soft) return true;
    // Tailing off: less than TAIL of the objective gained over the last TAIL_ROUNDS rounds.
    if (round >= TAIL_ROUNDS && unchecked(history[round - TAIL_ROUNDS]) - m.obj < TAIL * m.obj) return true;
    history.push(m.obj);
    // Greedy patterns for every type, then the local search for the most promising ones.
    for (let i = 0; i < xs.length; i++) {
      const x = unchecked(xs[i]);
      unchecked((ratio[i] = price(ts, cl, x, left, m.duals, unchecked(found[i]), false) / unchecked(ts.prices[x])));
    }
    const greedy = descending(ratio);
    let bestRatio: f64 = 0;
    for (let i = 0; i < greedy.length; i++) {
      const k = unchecked(greedy[i]);
      const x = unchecked(xs[k]);
      if (i < SEARCHED) unchecked((ratio[k] = price(ts, cl, x, left, m.duals, unchecked(found[k]), true) / unchecked(ts.prices[x])));
      if (unchecked(ratio[k]) > bestRatio) bestRatio = unchecked(ratio[k]);
    }
    if (bestRatio <= WORTH_TOLERANCE) return true;
    const order = descending(ratio);
    let added = 0;
    for (let i = 0; i < order.length && added < ADD_PER_ROUND; i++) {
      const k = unchecked(order[i]);
      if (unchecked(ratio[k]) <= WORTH_TOLERANCE) break;
      const t = unchecked(found[k]);
      if (cols.has(t)) continue;
      takeTotal(cl, t, total);
      cols.add(t.slice(), ts.cost(total));
      added++;
    }
    if (added == 0) return true;
  }
  return true;
}

/**
 * Opens the one node (of any column, capped by what is left) that costs least beyond the LP's worth of its
 * pods, the most-used column on a tie; returns that loss as a share of its cost, or -1 if none takes a pod.
 */
function openLeastLoss(ts: Types, cl: Classes, und: Array<i32>, cols: Columns, left: Int32Array, bins: Array<Bin>): f64 {
  const C = left.length;
  const m = cols.lp;
  const capped = new Int32Array(C);
  const total = new Float64Array(NR);
  let pick = -1;
  let pickLoss: f64 = Infinity;
  let pickCost: f64 = 0;
  for (let j = 0; j < cols.take.length; j++) {
    const t = unchecked(cols.take[j]);
    let worth: f64 = 0;
    let any = false;
    for (let c = 0; c < C; c++) {
      const k = min(unchecked(t[c]), unchecked(left[c]));
      unchecked((capped[c] = k));
      if (k > 0) any = true;
      worth += <f64>k * unchecked(m.duals[c]);
    }
    if (!any) continue;
    takeTotal(cl, capped, total);
    const cost = ts.cost(total);
    const loss = cost - worth;
    if (loss < pickLoss - 1e-6 || (loss <= pickLoss + 1e-6 && pick >= 0 && m.z(j) > m.z(pick))) {
      pick = j;
      pickLoss = loss;
      pickCost = cost;
    }
  }
  if (pick < 0 || !open(bins, unchecked(cols.take[pick]), left)) return -1;
  return pickCost > 0 ? max(0, pickLoss) / pickCost : 0;
}

/** Opens one node of `take` (capped by what is left); false if it takes nothing. */
function open(bins: Array<Bin>, take: Int32Array, left: Int32Array): bool {
  const C = left.length;
  const t = new Int32Array(C);
  let any = false;
  for (let c = 0; c < C; c++) {
    const k = min(unchecked(take[c]), unchecked(left[c]));
    unchecked((t[c] = k));
    unchecked((left[c] -= k));
    if (k > 0) any = true;
  }
  if (any) bins.push(new Bin(-1, t));
  return any;
}

/**
 * Packs the group by patterns, or returns null (the safety-net deadline, or an LP that would not solve). Pricing and
 * re-solving stop at the work mark `mark` (budget.ts); rounding then finishes without them.
 */
export function patternPack(ts: Types, cl: Classes, duals: Float64Array, seed: Array<Bin> | null, mark: f64): Array<Bin> | null {
  const C = cl.versions.length;
  const und = undominated(ts);
  spend(<f64>(ts.n * ts.n * NR));
  const xs = candidates(ts, und, duals);
  // Pricing may use about half the allowance; the rest is for rounding, which re-solves the LP after each step.
  const soft = workSpent() + max(0, mark - workSpent()) * SOFT_SHARE;
  const left = new Int32Array(C);
  for (let c = 0; c < C; c++) unchecked((left[c] = unchecked(cl.counts[c])));
  // Start from one single-class pattern per class: the type that holds its pods cheapest per pod.
  const cols = new Columns(C);
  const room = new Float64Array(NR);
  const total = new Float64Array(NR);
  for (let c = 0; c < C; c++) {
    let bestX = -1;
    let bestK = 0;
    let bestPer: f64 = Infinity;
    for (let i = 0; i < xs.length; i++) {
      const x = unchecked(xs[i]);
      for (let r = 0; r < NR; r++) unchecked((room[r] = ts.cap(x, r)));
      const k = min(unchecked(left[c]), fitCount(cl, c, room));
      if (k <= 0) continue;
      const per = unchecked(ts.prices[x]) / <f64>k;
      if (per < bestPer) {
        bestPer = per;
        bestX = x;
        bestK = k;
      }
    }
    if (bestX < 0) return null;
    const t = new Int32Array(C);
    unchecked((t[c] = bestK));
    takeTotal(cl, t, total);
    cols.add(t, ts.cost(total));
  }
  // And the nodes of another plan (the value packer's), as patterns to start from.
  if (seed != null) {
    for (let b = 0; b < seed.length; b++) {
      const t = unchecked(seed[b]).take;
      if (cols.has(t)) continue;
      takeTotal(cl, t, total);
      cols.add(t.slice(), ts.cost(total));
    }
  }
  const m = cols.lp;
  if (!generate(ts, cl, und, xs, cols, left, ROUNDS_FULL, soft)) return null;
  // Rounding. After each step, closing with one node that holds everything left is a candidate end; the
  // cheapest of those ends (or of none, if the rounding covers all) is kept.
  const bins = new Array<Bin>();
  let spent: f64 = 0;
  let bestCost: f64 = Infinity;
  let bestPrefix = -1;
  let bestClose: Int32Array | null = null;
  const all = new Int32Array(C);
  // Past the work mark (or the safety-net deadline), rounding finishes without re-solving: one least-loss node at
  // a time at the last prices.
  let done = false;
  for (;;) {
    let remaining = 0;
    for (let c = 0; c < C; c++) remaining += unchecked(left[c]);
    if (remaining == 0) {
      if (spent <= bestCost) {
        bestCost = spent;
        bestPrefix = bins.length;
        bestClose = null;
      }
      break;
    }
    for (let c = 0; c < C; c++) unchecked((all[c] = unchecked(left[c])));
    takeTotal(cl, all, total);
    const close = ts.cost(total);
    if (spent + close < bestCost) {
      bestCost = spent + close;
      bestPrefix = bins.length;
      bestClose = all.slice();
    }
    // Whole nodes of each pattern the LP uses; if none is whole, the one node (of any pattern, capped by
    // what is left) that costs least beyond the LP's worth of its pods, the most-used on a tie.
    const before = bins.length;
    for (let j = 0; j < cols.take.length && !done; j++) {
      const whole = <i32>Math.floor(m.z(j) + 1e-9);
      for (let q = 0; q < whole; q++) open(bins, unchecked(cols.take[j]), left);
    }
    // Then, while what is left needs more than one node, further nodes whose loss at the same prices is
    // within SLACK of their cost (re-solving after every node costs a pricing round each).
    if (bins.length == before) {
      if (openLeastLoss(ts, cl, und, cols, left, bins) < 0) return null;
      for (; !done; ) {
        for (let c = 0; c < C; c++) unchecked((all[c] = unchecked(left[c])));
        takeTotal(cl, all, total);
        if (ts.cost(total) < Infinity) break;
        const before2 = bins.length;
        const loss = openLeastLoss(ts, cl, und, cols, left, bins);
        if (loss < 0) break;
        if (loss > SLACK) {
          // Put it back: too dear at these prices.
          const t = unchecked(bins[before2]).take;
          for (let c = 0; c < C; c++) unchecked((left[c] += unchecked(t[c])));
          bins.pop();
          break;
        }
      }
    }
    for (let b = before; b < bins.length; b++) {
      takeTotal(cl, unchecked(bins[b]).take, total);
      spent += ts.cost(total);
    }
    if (spent >= bestCost) break;
    if (done) continue;
    if (workSpent() > mark || late()) done = true;
    else if (!generate(ts, cl, und, xs, cols, left, ROUNDS_RESIDUAL, soft)) return null;
  }
  const out = new Array<Bin>();
  for (let b = 0; b < bestPrefix; b++) out.push(unchecked(bins[b]));
  if (bestClose != null) out.push(new Bin(-1, bestClose));
  return out;
}
