// Column generation over node patterns (the configuration LP of cutting stock): the master LP (master.ts) chooses
// how many nodes of each known pattern to open to cover every class's demand at least cost; its duals price each
// class's items; pricing looks for a pattern worth more than its node costs and adds it. Used by the improvement
// phase's pattern packer (patterns.ts) and by the integer-aware lower bound (boundcg.ts).
//
// Each round prices the types whose fractional bound (exact.ts ResourceBounds) leaves room for a pattern worth more
// than its price: the most promising heuristically (knapsack.ts), and when that finds nothing, exactly (branch and
// bound, exact.ts) in order of their bound until one yields a pattern. A round in which every type's bound or exact
// search is within the tolerance proves the LP optimal.
//
// At any round the duals, scaled down by the largest ratio of any type's bound on a pattern's worth to its price,
// are feasible for the LP's dual (Farley's bound), so objective / that ratio is a lower bound on the configuration
// LP, and hence on any integer plan; `lower` keeps the best such bound seen for the full demand.
import { Problem } from './problem';
import { Master } from './master';
import { descending } from './bins';
import { ResourceBounds, exactBest, lagrangeBound } from './exact';
import { price, undominated } from './knapsack';
import { exhausted, late, spend, workSpent } from './budget';

/** A pattern is added only if it is worth more than this times what its node costs. */
const WORTH_TOLERANCE: f64 = 1.0005;
/** Types priced heuristically per round (the best bounds), those of them searched harder, columns added per round. */
const PRICED = 16;
const SEARCHED = 8;
const ADD_PER_ROUND = 8;
/** Nodes one exact pricing search may visit, and how many types a round may search exactly. */
const EXACT_NODES = 4000;
/** The bound's limit on exact search nodes (boundcg.ts). */
export const EXACT_NODES_MAX = 4000 * 256;
const EXACT_TYPES = 12;
/** Exact pricing runs when the heuristics added fewer columns than this. */
const EXACT_BELOW = 2;
/**
 * Column generation stops when the objective is within GAP of the best Farley bound for this demand (near enough
 * the LP's optimum), or when the last TAIL_ROUNDS rounds gained less than TAIL of it.
 */
const GAP: f64 = 0.001;
const TAIL_ROUNDS = 30;
const TAIL: f64 = 0.0005;

/** Pods of one class per node above which the packer prices a type heuristically only. */
const CROWDED = 48;
/** The column pool's size: POOL_PER_CLASS columns per class, at least POOL_MIN (prune). */
const POOL_PER_CLASS = 8;
const POOL_MIN = 400;
/** Weight of the smoothing center in the pricing duals. */
const ALPHA: f64 = 0.0;

export const CG_OPTIMAL = 0;
const CG_STOPPED = 1;
export const CG_FAILED = 2;

function patternHash(t: Int32Array): u64 {
  let h: u64 = 1469598103934665603;
  for (let c = 0; c < t.length; c++) h = (h ^ <u64>(<u32>unchecked(t[c]))) * 1099511628211;
  return h;
}

export class ColumnGen {
  readonly m: Master;
  takes: Array<Int32Array> = new Array<Int32Array>();
  costs: Array<f64> = new Array<f64>();
  private byHash: Map<u64, Array<i32>> = new Map<u64, Array<i32>>();
  readonly und: Array<i32>;
  /** The best Farley bound seen while the demand was the full demand (`tracking`). */
  lower: f64 = 0;
  tracking: bool = false;
  /** Set by the last round: every type was shown to hold no pattern worth more than its price (times the tolerance). */
  proven: bool = false;
  /** Pricing rounds run. */
  rounds: i32 = 0;
  /** Stop when the objective tails off (the packer); the bound runs to the end of its budget instead. */
  tail: bool = true;
  /**
   * Dual smoothing (Wentges): pricing uses ALPHA * center + (1 - ALPHA) * the master's duals, the center being the
   * duals that gave the best Farley bound for this demand. Column generation's duals swing from round to round;
   * smoothed ones find columns that move the bound, and converge in far fewer rounds. A round that finds nothing at
   * smoothed duals is repeated at the master's own.
   */
  /** Nodes one exact search may visit; raised when a round ends with searches cut short and nothing found. */
  private nodeLimit: i32 = EXACT_NODES;
  /** How far the node limit may rise: far for the bound (its budget is all it has), a little for the packer. */
  maxNodes: i32 = EXACT_NODES * 16;
  private cutShort: bool = false;
  private center: Float64Array | null = null;
  private centerBound: f64 = -Infinity;
  private smooth: bool = true;

  constructor(readonly p: Problem) {
    this.m = new Master(p.C);
    this.und = undominated(p);
  }

  /** Columns a round may add: more when there are many classes (each needs its patterns). */
  @inline addPerRound(): i32 {
    return max(ADD_PER_ROUND, this.p.C / 4);
  }

  /** The pattern is a column already (hashed: thousands of columns). */
  has(t: Int32Array): bool {
    const h = patternHash(t);
    if (!this.byHash.has(h)) return false;
    const js = this.byHash.get(h);
    for (let i = 0; i < js.length; i++) {
      const o = unchecked(this.takes[unchecked(js[i])]);
      let same = true;
      for (let c = 0; c < t.length && same; c++) if (unchecked(o[c]) != unchecked(t[c])) same = false;
      if (same) return true;
    }
    return false;
  }

  private remember(t: Int32Array, j: i32): void {
    const h = patternHash(t);
    if (!this.byHash.has(h)) this.byHash.set(h, new Array<i32>());
    this.byHash.get(h).push(j);
  }

  /** Adds pattern t (priced on type x) unless known; returns whether it was new. */
  add(t: Int32Array, x: i32): bool {
    if (this.has(t)) return false;
    const cost = this.p.cost(t, x);
    if (cost == Infinity) return false;
    this.remember(t, this.takes.length);
    this.takes.push(t);
    this.costs.push(cost);
    this.m.addColumn(t, cost);
    spend(<f64>(this.p.C * 4));
    return true;
  }

  /** One single-class pattern per class, in class order (the master needs them first): the cheapest per item. */
  seedSingles(left: Int32Array): bool {
    const p = this.p;
    const room = new Float64Array(p.R);
    for (let c = 0; c < p.C; c++) {
      let bestX = -1;
      let bestK = 0;
      let bestPer: f64 = Infinity;
      for (let i = 0; i < this.und.length; i++) {
        const x = unchecked(this.und[i]);
        if (!p.allows(c, x)) continue;
        for (let r = 0; r < p.R; r++) unchecked((room[r] = p.cap(x, r)));
        const k = p.fit(c, room, max(1, unchecked(left[c])));
        if (k <= 0) continue;
        const per = unchecked(p.prices[x]) / <f64>k;
        if (per < bestPer) {
          bestPer = per;
          bestX = x;
          bestK = k;
        }
      }
      if (bestX < 0) return false;
      const t = new Int32Array(p.C);
      unchecked((t[c] = bestK));
      // Always added (even if equal to an earlier one): column c of the master must be class c's.
      this.remember(t, this.takes.length);
      this.takes.push(t);
      const cost = p.cost(t, bestX);
      this.costs.push(cost);
      this.m.addColumn(t, cost);
    }
    spend(<f64>(p.C * this.und.length * p.R));
    return true;
  }

  /**
   * Column generation for demand `left`: solve, then up to `rounds` pricing rounds, stopping early once the work
   * spent passes `soft`, the LP is proven optimal, or it tails off. CG_FAILED when the LP would not solve or the
   * safety-net deadline passed.
   */
  run(left: Int32Array, rounds: i32, soft: f64): i32 {
    const m = this.m;
    const history = new Array<f64>();
    for (let round = 0; ; round++) {
      if (late()) return CG_FAILED;
      m.setDemand(left);
      if (!m.solve()) return CG_FAILED;
      if (round == 0) this.resetCenter();
      if (round >= rounds || workSpent() > soft || exhausted()) return CG_STOPPED;
      if (this.tail && round >= TAIL_ROUNDS && unchecked(history[round - TAIL_ROUNDS]) - m.obj < TAIL * m.obj) return CG_STOPPED;
      if (this.tail && m.obj - this.centerBound <= GAP * m.obj) return CG_STOPPED;
      history.push(m.obj);
      this.rounds++;
      const smoothed = this.smooth && this.center != null;
      const added = this.round(left);
      if (this.proven) {
        m.setDemand(left);
        return m.solve() ? CG_OPTIMAL : CG_FAILED;
      }
      if (added == 0 && !smoothed) {
        // Searches cut short hid the columns (or the proof there are none): search deeper, within the budget.
        if (!this.cutShort || this.nodeLimit >= this.maxNodes) return CG_STOPPED;
        this.nodeLimit *= 4;
      }
      // Nothing at the smoothed duals: the next round prices at the master's own.
      this.smooth = added > 0;
    }
    return CG_STOPPED;
  }

  private resetCenter(): void {
    this.center = null;
    this.centerBound = -Infinity;
    this.smooth = true;
  }

  /** The duals to price at: the master's, or smoothed towards the center. */
  private pricingDuals(): Float64Array {
    const pm = this.m.duals;
    const ctr = this.center;
    if (!this.smooth || ctr == null) return pm;
    const out = new Float64Array(this.p.C);
    for (let c = 0; c < this.p.C; c++) unchecked((out[c] = ALPHA * unchecked(ctr[c]) + (1 - ALPHA) * max(0, unchecked(pm[c]))));
    return out;
  }

  /**
   * Keeps the column pool small: past POOL_PER_CLASS columns per class, the non-basic columns that are dearest at the
   * master's duals go (never the single-class columns the master falls back on). Each simplex iteration reads every
   * column, so a pool of thousands made every re-solve cost more than the pricing that filled it.
   */
  private prune(): void {
    const C = this.p.C;
    const J = this.takes.length;
    const cap = max(POOL_MIN, POOL_PER_CLASS * C);
    if (J <= cap) return;
    const reducedCost = new Float64Array(J);
    for (let j = 0; j < J; j++) {
      let d = unchecked(this.costs[j]);
      const t = unchecked(this.takes[j]);
      for (let c = 0; c < C; c++) d -= <f64>unchecked(t[c]) * unchecked(this.m.duals[c]);
      unchecked((reducedCost[j] = j < C || this.m.isBasic(j) ? -Infinity : d));
    }
    spend(<f64>(J * C * 2));
    // Ascending reduced cost: the first cap / 2 stay.
    const order = descending(reducedCost.map<f64>((v) => -v));
    const keep = new Uint8Array(J);
    for (let k = 0; k < cap / 2; k++) unchecked((keep[unchecked(order[k])] = 1));
    const map = this.m.dropColumns(keep);
    const takes = new Array<Int32Array>();
    const costs = new Array<f64>();
    this.byHash = new Map<u64, Array<i32>>();
    for (let j = 0; j < J; j++) {
      if (unchecked(map[j]) < 0) continue;
      this.remember(unchecked(this.takes[j]), takes.length);
      takes.push(unchecked(this.takes[j]));
      costs.push(unchecked(this.costs[j]));
    }
    this.takes = takes;
    this.costs = costs;
  }

  /** One pricing round (at the master's duals, or smoothed ones); returns the columns added. */
  round(left: Int32Array): i32 {
    const p = this.p;
    const pi = this.pricingDuals();
    const atMaster = pi == this.m.duals;
    const rb = new ResourceBounds(p, pi, left);
    const X = this.und.length;
    const ratio = new Float64Array(X);
    const mu = new Float64Array(p.R);
    for (let i = 0; i < X; i++) {
      const x = unchecked(this.und[i]);
      let ub = rb.bound(x);
      // The Lagrangian bound is tighter but dearer: only where the cheap one leaves room for a column.
      if (ub > unchecked(p.prices[x]) * WORTH_TOLERANCE) ub = min(ub, lagrangeBound(p, x, pi, left, mu));
      unchecked((ratio[i] = ub / unchecked(p.prices[x])));
    }
    const order = descending(ratio);
    this.proven = false;
    let added = this.heuristicRound(left, pi, order, ratio);
    // Exact pricing when the heuristics found few columns (always with few types: they price one column each).
    if (added < EXACT_BELOW) added += this.exactRound(left, pi, order, ratio);
    // Proven only at the master's own duals, and only when nothing at all was added.
    if (!atMaster || added > 0) this.proven = false;
    this.noteBound(pi, left, ratio);
    return added;
  }

  /** A pattern found at prices `pi` helps the master only if it is worth more than it costs at the master's duals. */
  private helps(take: Int32Array, cost: f64): bool {
    let w: f64 = 0;
    for (let c = 0; c < this.p.C; c++) w += <f64>unchecked(take[c]) * unchecked(this.m.duals[c]);
    return w > cost * WORTH_TOLERANCE;
  }

  /** Heuristic pricing of the PRICED most promising types; adds the best patterns worth more than they cost. */
  private heuristicRound(left: Int32Array, pi: Float64Array, order: Array<i32>, ratio: Float64Array): i32 {
    const p = this.p;
    const n = min(PRICED, order.length);
    const found = new Array<Int32Array>();
    const gain = new Float64Array(n);
    for (let k = 0; k < n; k++) {
      const i = unchecked(order[k]);
      const take = new Int32Array(p.C);
      found.push(take);
      if (unchecked(ratio[i]) <= WORTH_TOLERANCE) continue;
      const x = unchecked(this.und[i]);
      const w = price(p, x, left, pi, take, k < SEARCHED);
      const cost = w > 0 ? p.cost(take, x) : Infinity;
      unchecked((gain[k] = cost < Infinity && this.helps(take, cost) ? w / cost : 0));
    }
    const best = descending(gain);
    let added = 0;
    for (let k = 0; k < best.length && added < this.addPerRound(); k++) {
      const j = unchecked(best[k]);
      if (unchecked(gain[j]) <= WORTH_TOLERANCE) break;
      if (this.add(unchecked(found[j]), unchecked(this.und[unchecked(order[j])]))) added++;
    }
    // Few types (bin packing: one) give few columns a round; each best type also gives disjoint patterns.
    for (let k = 0; k < best.length && added < this.addPerRound(); k++) {
      const j = unchecked(best[k]);
      if (unchecked(gain[j]) <= WORTH_TOLERANCE) break;
      added += this.disjoint(left, pi, unchecked(this.und[unchecked(order[j])]), unchecked(found[j]), this.addPerRound() - added);
    }
    return added;
  }

  /**
   * Patterns of type x over the pods `first` leaves, then over what those leave, and so on (the best pattern, then
   * the best among the rest: together they look like a packing), while each is worth more than it costs at the
   * master's duals; at most `most` added.
   */
  private disjoint(left: Int32Array, pi: Float64Array, x: i32, first: Int32Array, most: i32): i32 {
    const p = this.p;
    const u = left.slice();
    let t = first;
    let added = 0;
    while (added < most) {
      for (let c = 0; c < p.C; c++) unchecked((u[c] = max(0, unchecked(u[c]) - unchecked(t[c]))));
      const take = new Int32Array(p.C);
      const w = price(p, x, u, pi, take, false);
      if (w <= 0) break;
      const cost = p.cost(take, x);
      if (cost == Infinity || !this.helps(take, cost)) break;
      if (this.add(take, x)) added++;
      t = take;
    }
    return added;
  }

  /**
   * Exact pricing, types in order of their bound, until one yields a pattern worth more than it costs. A completed
   * search replaces the type's bound by its exact best; `proven` is set when every type is within the tolerance.
   */
  private exactRound(left: Int32Array, pi: Float64Array, order: Array<i32>, ratio: Float64Array): i32 {
    const p = this.p;
    const take = new Int32Array(p.C);
    let searched = 0;
    let open = false;
    let added = 0;
    for (let k = 0; k < order.length; k++) {
      const i = unchecked(order[k]);
      if (unchecked(ratio[i]) <= WORTH_TOLERANCE) break;
      if (searched >= EXACT_TYPES) {
        open = true;
        break;
      }
      const x = unchecked(this.und[i]);
      // Nodes that hold many pods: the fractional bound is all but exact there and the search would not finish;
      // the heuristics price them. (The bound keeps them: it needs the proof.)
      if (this.tail && this.crowded(x, left)) continue;
      searched++;
      const res = exactBest(p, x, pi, left, this.nodeLimit, unchecked(p.prices[x]) * WORTH_TOLERANCE, take);
      // The patterns it found, best first.
      for (let f = 0; f < res.found.length && added < this.addPerRound(); f++) {
        const t = unchecked(res.found[f]);
        let w: f64 = 0;
        for (let c = 0; c < p.C; c++) w += <f64>unchecked(t[c]) * unchecked(pi[c]);
        const cost = p.cost(t, x);
        if (w > cost * WORTH_TOLERANCE && this.helps(t, cost) && this.add(t, x)) added++;
      }
      if (res.complete) unchecked((ratio[i] = res.worth / unchecked(p.prices[x])));
      else open = true;
      if (added >= this.addPerRound()) break;
    }
    this.proven = !open && added == 0;
    this.cutShort = open;
    return added;
  }

  /**
   * Farley's bound at the master's own duals with every type's best pattern searched exactly (to `limit` nodes):
   * during the generation a round that found columns heuristically bounds a pattern's worth only by the fractional
   * knapsack, so the bound it notes is weak until the generation converges. Searched once at the end, at the duals
   * of the last master, the ratio is that of the true best pattern and the bound is close to the master's value.
   * A type whose search does not finish keeps its fractional bound, so the result stays valid.
   */
  exactFarley(left: Int32Array, limit: i32): void {
    const p = this.p;
    const m = this.m;
    m.setDemand(left);
    if (!m.solve()) return;
    const pi = new Float64Array(p.C);
    for (let c = 0; c < p.C; c++) unchecked((pi[c] = max(0, unchecked(m.duals[c]))));
    const rb = new ResourceBounds(p, pi, left);
    const take = new Int32Array(p.C);
    const mu = new Float64Array(p.R);
    const ratio = new Float64Array(this.und.length);
    for (let i = 0; i < this.und.length; i++) {
      const x = unchecked(this.und[i]);
      const price = unchecked(p.prices[x]);
      let ub = min(rb.bound(x), lagrangeBound(p, x, pi, left, mu));
      if (ub > price) {
        const res = exactBest(p, x, pi, left, limit, price, take);
        if (res.complete) ub = res.worth;
      }
      unchecked((ratio[i] = ub / price));
    }
    this.noteBound(pi, left, ratio);
  }

  /** Type x holds more than CROWDED pods of some class: pricing it exactly is a search it cannot finish. */
  private crowded(x: i32, left: Int32Array): bool {
    const p = this.p;
    const room = new Float64Array(p.R);
    for (let r = 0; r < p.R; r++) unchecked((room[r] = p.cap(x, r)));
    for (let c = 0; c < p.C; c++) if (unchecked(left[c]) > 0 && p.fit(c, room, CROWDED + 1) > CROWDED) return true;
    return false;
  }

  /**
   * Farley's bound at prices pi for demand `left`: pi . left over the largest ratio of a type's bound on a pattern's
   * worth to its price (pi clamped at 0: the bounds ignore the rest too). The best such prices become the smoothing
   * center; `lower` keeps the best bound while the demand is the full demand.
   */
  private noteBound(pi: Float64Array, left: Int32Array, ratio: Float64Array): void {
    let theta: f64 = 1;
    for (let i = 0; i < ratio.length; i++) theta = max(theta, unchecked(ratio[i]));
    let pd: f64 = 0;
    for (let c = 0; c < this.p.C; c++) pd += max(0, unchecked(pi[c])) * <f64>unchecked(left[c]);
    const b = pd / theta;
    if (b > this.centerBound) {
      this.centerBound = b;
      const ctr = new Float64Array(this.p.C);
      for (let c = 0; c < this.p.C; c++) unchecked((ctr[c] = max(0, unchecked(pi[c]))));
      this.center = ctr;
    }
    if (this.tracking && b > this.lower) this.lower = b;
  }
}
