// Packing one requirement group of free pods into new nodes, two ways, keeping the cheaper plan:
//
// 1. By resource value, guided by the covering LP (lp.ts): its duals price each resource so that no
//    instance type is worth more than it costs. Nodes are opened one type at a time, always the type whose
//    filled node is worth the most per dollar at those prices (only types the LP prices near their cost are
//    worth opening), filled largest pods first; the last node is the cheapest type that holds what is left.
//    Fast, but it fills each node with the pods worth most, so cpu-heavy and memory-heavy pods can end up
//    on separate nodes that each waste the other resource.
// 2. By patterns (patterns.ts): column generation over node patterns prices each pod class by the nodes it
//    shares, then rounds; it mixes pods onto balanced nodes. It gets the group's share of the work budget
//    (budget.ts); its result is dropped only if the wall-clock safety net fires.
//
// Every node then launches as the cheapest type that holds its pods (the NodeClaim keeps all that fit), so
// a half-empty node costs what a smaller type costs. Pods are grouped by request vectors (bins.ts).
import { RESOURCES } from './layout';
import { Bin, Classes, Types, binsCost, descending, fitCount, req } from './bins';
import { fillPack } from './fill';
import { patternPack } from './patterns';
import { Problem } from './problem';
import { coverDuals } from './lp';

import { late, spend } from './budget';

/** By value: open the type whose filled node is worth most per dollar; close with the cheapest fit. */
function valuePack(ts: Types, cl: Classes, left: Int32Array, duals: Float64Array, shortlist: Array<i32>, bins: Array<Bin>): bool {
  const C = cl.versions.length;
  const worth = new Float64Array(C);
  for (let c = 0; c < C; c++) {
    let w: f64 = 0;
    for (let r = 0; r < RESOURCES; r++) w += unchecked(duals[r]) * req(cl, c, r);
    unchecked((worth[c] = w));
  }
  const orderC = descending(worth);
  let remaining = 0;
  for (let c = 0; c < C; c++) remaining += unchecked(left[c]);
  const take = new Int32Array(C);
  const room = new Float64Array(RESOURCES);
  while (remaining > 0) {
    if (late()) return false;
    spend(<f64>((shortlist.length + 1) * C * RESOURCES + ts.n * RESOURCES));
    let bestX = -1;
    let bestEff: f64 = -1;
    let bestTake = new Int32Array(0);
    let bestAll = false;
    // Closing: whatever is left fits one node of some type; take the one its launch would pick.
    const total = new Float64Array(RESOURCES);
    for (let c = 0; c < C; c++) for (let r = 0; r < RESOURCES; r++) unchecked((total[r] += <f64>unchecked(left[c]) * req(cl, c, r)));
    const closeX = ts.pick(total);
    for (let si = 0; si < shortlist.length; si++) {
      const x = unchecked(shortlist[si]);
      for (let r = 0; r < RESOURCES; r++) unchecked((room[r] = ts.cap(x, r)));
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
        for (let r = 0; r < RESOURCES; r++) unchecked((room[r] -= <f64>k * req(cl, c, r)));
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
    for (let r = 0; r < RESOURCES; r++) v += unchecked(duals[r]) * ts.cap(x, r);
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

const EXTRA_NODE_SAVING: f64 = 5000;

/** The cheaper of two plans (a null one loses): `b` only if its extra nodes pay for themselves. */
function cheaper(ts: Types, cl: Classes, a: Array<Bin> | null, b: Array<Bin> | null): Array<Bin> | null {
  if (b == null) return a;
  if (a == null) return b;
  // More nodes must pay for themselves: each carries what prices do not show (its root volume, about
  // $0.002/h for 20 GiB of gp3; addresses; one more node to run), so a plan with more nodes must save
  // EXTRA_NODE_SAVING (micro-dollars per hour) per extra node.
  const bc = binsCost(ts, cl, b);
  const ac = binsCost(ts, cl, a);
  if (b.length > a.length) return bc < ac - EXTRA_NODE_SAVING * <f64>(b.length - a.length) ? b : a;
  return bc < ac ? b : a;
}

/**
 * Packs the group into nodes, or returns null (safety-net deadline, or no feasible LP): by resource value (above),
 * for one instance type also by fullest nodes (fill.ts), and by patterns (patterns.ts) until the work mark `mark`,
 * keeping the cheapest (the value plan on a tie, or unless each extra node saves $0.005/h).
 */
export function packGroup(ts: Types, cl: Classes, mark: f64): Array<Bin> | null {
  const C = cl.versions.length;
  const demand = new Float64Array(RESOURCES);
  for (let c = 0; c < C; c++) for (let r = 0; r < RESOURCES; r++) unchecked((demand[r] += req(cl, c, r) * <f64>unchecked(cl.counts[c])));
  const duals = new Float64Array(RESOURCES);
  if (coverDuals(ts.caps, ts.prices, demand, RESOURCES, ts.n, duals) < 0) return null;
  const left = new Int32Array(C);
  for (let c = 0; c < C; c++) unchecked((left[c] = unchecked(cl.counts[c])));
  const bins = new Array<Bin>();
  const byValue = valuePack(ts, cl, left, duals, efficient(ts, duals), bins) ? bins : null;
  const problem = Problem.ofGroup(ts, cl);
  const byFill = ts.n == 1 ? fillPack(problem, mark) : null;
  const byPattern = patternPack(problem, byValue, mark);
  return cheaper(ts, cl, cheaper(ts, cl, byValue, byFill), byPattern);
}
