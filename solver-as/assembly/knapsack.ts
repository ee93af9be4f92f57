// Pricing for pattern packing (patterns.ts): at given prices per pod of each class, the pattern (one node's
// take of each class) worth the most on an instance type. That is a bounded multi-dimensional knapsack;
// it is solved heuristically, which leaves column generation with patterns that are good, not provably best:
// greedy fills under several class orders (worth per unit of each resource, of their sum, of their maximum),
// and for the most promising types a balanced fill (one pod at a time, the class worth most per share of the
// room left) and add-one-and-repair moves on the best fill.
// cg.ts decides which types to price and falls back on exact pricing (exact.ts) when these find nothing.
//
// Types another type dominates (as large in every resource, no dearer) are never priced: every pattern of
// theirs fits the dominating type, which launches it for no more.
import { descending, sortWork } from './bins';
import { Problem } from './problem';
import { spend } from './budget';

/**
 * Types no other type dominates (ties: the lower index survives): one at least as large in every resource, no
 * dearer, and allowed to every class this one is.
 */
export function undominated(p: Problem): Array<i32> {
  const out = new Array<i32>();
  spend(<f64>(p.X * p.X * p.R));
  for (let x = 0; x < p.X; x++) {
    let dominated = false;
    for (let y = 0; y < p.X && !dominated; y++) {
      if (y == x || unchecked(p.prices[y]) > unchecked(p.prices[x])) continue;
      let geq = true;
      let strict = unchecked(p.prices[y]) < unchecked(p.prices[x]);
      for (let r = 0; r < p.R && geq; r++) {
        const a = p.cap(y, r);
        const b = p.cap(x, r);
        if (a < b) geq = false;
        else if (a > b) strict = true;
      }
      if (geq && p.allowed != null) for (let c = 0; c < p.C && geq; c++) if (p.allows(c, x) && !p.allows(c, y)) geq = false;
      if (geq && (strict || y < x)) dominated = true;
    }
    if (!dominated) out.push(x);
  }
  return out;
}

/** Greedy fill of type x's room in class order `order`, at most `u` of each class; returns the take's worth. */
function fillInOrder(p: Problem, x: i32, order: Array<i32>, u: Int32Array, pi: Float64Array, take: Int32Array, room: Float64Array): f64 {
  spend(<f64>(order.length * p.R * 2));
  for (let r = 0; r < p.R; r++) unchecked((room[r] = p.cap(x, r)));
  take.fill(0);
  let w: f64 = 0;
  for (let i = 0; i < order.length; i++) {
    const c = unchecked(order[i]);
    if (unchecked(pi[c]) <= 0 || !p.allows(c, x)) continue;
    const k = min(unchecked(u[c]), p.fit(c, room, i32.MAX_VALUE));
    if (k <= 0) continue;
    unchecked((take[c] = k));
    w += <f64>k * unchecked(pi[c]);
    for (let r = 0; r < p.R; r++) unchecked((room[r] -= <f64>k * p.req(c, r)));
  }
  return w;
}

/** Keys for the greedy orders: worth per unit of one resource, of their sum and of their maximum (share of the node). */
function orderKeys(p: Problem, x: i32, pi: Float64Array, variant: i32, key: Float64Array): bool {
  const C = p.C;
  for (let c = 0; c < C; c++) {
    let size: f64 = 0;
    for (let r = 0; r < p.R; r++) {
      const cap = p.cap(x, r);
      if (cap <= 0) continue;
      const s = p.req(c, r) / cap;
      if (variant < p.R) { if (r == variant) size = s; }
      else if (variant == p.R) size += s;
      else size = max(size, s);
    }
    if (variant < p.R && size <= 0) return false;
    unchecked((key[c] = size > 0 ? unchecked(pi[c]) / size : Infinity));
  }
  return true;
}

/** The worth of `take` after trying to add one pod of each class, making room by dropping the least dense pods. */
function improveTake(p: Problem, x: i32, order: Array<i32>, u: Int32Array, pi: Float64Array, take: Int32Array, w: f64): f64 {
  const C = p.C;
  const trial = new Int32Array(C);
  const base = new Float64Array(p.R);
  const room = new Float64Array(p.R);
  for (let pass = 0; pass < 3; pass++) {
    spend(<f64>(C * C * p.R * 3));
    let improved = false;
    for (let r = 0; r < p.R; r++) {
      let used: f64 = 0;
      for (let c = 0; c < C; c++) used += <f64>unchecked(take[c]) * p.req(c, r);
      unchecked((base[r] = p.cap(x, r) - used));
    }
    for (let d = 0; d < C; d++) {
      if (unchecked(pi[d]) <= 0 || unchecked(take[d]) >= unchecked(u[d]) || !p.allows(d, x)) continue;
      for (let c = 0; c < C; c++) unchecked((trial[c] = unchecked(take[c])));
      unchecked((trial[d] += 1));
      for (let r = 0; r < p.R; r++) unchecked((room[r] = unchecked(base[r]) - p.req(d, r)));
      // Drop pods, least dense first in `order` (reverse), never the added class, until it fits.
      for (let i = order.length - 1; i >= 0; i--) {
        let fits = true;
        for (let r = 0; r < p.R && fits; r++) if (unchecked(room[r]) < -1e-6) fits = false;
        if (fits) break;
        const c = unchecked(order[i]);
        if (c == d || unchecked(trial[c]) == 0) continue;
        // As many as the most overdrawn resource this class uses needs, at most all of them.
        let drop = 0;
        for (let r = 0; r < p.R; r++) {
          const s = p.req(c, r);
          if (unchecked(room[r]) >= -1e-6 || s <= 0) continue;
          drop = max(drop, <i32>Math.ceil((-unchecked(room[r]) - 1e-6) / s));
        }
        drop = min(drop, unchecked(trial[c]));
        if (drop == 0) continue;
        unchecked((trial[c] -= drop));
        for (let r = 0; r < p.R; r++) unchecked((room[r] += <f64>drop * p.req(c, r)));
      }
      let ok = true;
      for (let r = 0; r < p.R && ok; r++) if (unchecked(room[r]) < -1e-6) ok = false;
      if (!ok) continue;
      // Refill the freed room in order.
      for (let i = 0; i < order.length; i++) {
        const c = unchecked(order[i]);
        if (unchecked(pi[c]) <= 0 || !p.allows(c, x)) continue;
        const k = min(unchecked(u[c]) - unchecked(trial[c]), p.fit(c, room, i32.MAX_VALUE));
        if (k <= 0) continue;
        unchecked((trial[c] += k));
        for (let r = 0; r < p.R; r++) unchecked((room[r] -= <f64>k * p.req(c, r)));
      }
      let tw: f64 = 0;
      for (let c = 0; c < C; c++) tw += <f64>unchecked(trial[c]) * unchecked(pi[c]);
      if (tw > w + 1e-9) {
        w = tw;
        for (let c = 0; c < C; c++) unchecked((take[c] = unchecked(trial[c])));
        for (let r = 0; r < p.R; r++) unchecked((base[r] = unchecked(room[r])));
        improved = true;
      }
    }
    if (!improved) break;
  }
  return w;
}

/**
 * Greedy fill one pod at a time, each time the class worth the most per share of the room left (summed over
 * resources): as one resource runs short its price rises, so the node fills with pods that balance it.
 */
function balancedFill(p: Problem, x: i32, u: Int32Array, pi: Float64Array, take: Int32Array, room: Float64Array): f64 {
  const C = p.C;
  for (let r = 0; r < p.R; r++) unchecked((room[r] = p.cap(x, r)));
  take.fill(0);
  let w: f64 = 0;
  for (;;) {
    spend(<f64>(C * p.R * 2));
    let best = -1;
    let bestKey: f64 = 0;
    for (let c = 0; c < C; c++) {
      if (unchecked(pi[c]) <= 0 || unchecked(take[c]) >= unchecked(u[c]) || !p.allows(c, x)) continue;
      let share: f64 = 0;
      let fits = true;
      for (let r = 0; r < p.R; r++) {
        const s = p.req(c, r);
        if (s <= 0) continue;
        const left = unchecked(room[r]);
        if (s > left + 1e-6) { fits = false; break; }
        share += s / max(left, 1e-9);
      }
      if (!fits) continue;
      const key = share > 0 ? unchecked(pi[c]) / share : Infinity;
      if (best < 0 || key > bestKey) {
        best = c;
        bestKey = key;
      }
    }
    if (best < 0) return w;
    unchecked((take[best] += 1));
    w += unchecked(pi[best]);
    for (let r = 0; r < p.R; r++) unchecked((room[r] -= p.req(best, r)));
  }
  return w;
}

/** The best pattern found for type x at class prices `pi`, into `best`; returns its worth. */
export function price(p: Problem, x: i32, u: Int32Array, pi: Float64Array, best: Int32Array, search: bool): f64 {
  const C = p.C;
  const key = new Float64Array(C);
  const take = new Int32Array(C);
  const room = new Float64Array(p.R);
  let bestW: f64 = 0;
  let bestOrder = new Array<i32>();
  best.fill(0);
  for (let v = 0; v < p.R + 2; v++) {
    if (!orderKeys(p, x, pi, v, key)) continue;
    const order = descending(key);
    spend(sortWork(C));
    const w = fillInOrder(p, x, order, u, pi, take, room);
    if (w > bestW + 1e-12) {
      bestW = w;
      bestOrder = order;
      for (let c = 0; c < C; c++) unchecked((best[c] = unchecked(take[c])));
    }
  }
  if (search) {
    const w = balancedFill(p, x, u, pi, take, room);
    if (w > bestW + 1e-12) {
      bestW = w;
      for (let c = 0; c < C; c++) unchecked((best[c] = unchecked(take[c])));
    }
  }
  if (bestW <= 0 || !search) return bestW;
  return improveTake(p, x, bestOrder, u, pi, best, bestW);
}

