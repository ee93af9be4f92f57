// Pattern packing, the cutting-stock way: column generation (cg.ts) over node patterns for the group's pods, then
// rounding the LP's solution into whole nodes. The master LP's duals price each class's pods, not each resource: a
// pod is worth what the nodes it shares pay for it, so cpu-heavy and memory-heavy pods that fill a balanced node
// together are priced as such.
//
// Rounding, step by step: open floor(z_j) nodes of each pattern; when no pattern reaches a whole node, open the
// pattern with the largest z (a dive), or, when every z is small, the node that loses least against the LP's prices;
// then re-solve what is left (with a few more pricing rounds) and repeat. After every step, closing with the one
// node that holds everything left is a candidate end; the cheapest end is kept. Each node costs what its launch
// would pay (Problem.cost).
import { Bin } from './bins';
import { CG_FAILED, ColumnGen } from './cg';
import { Problem } from './problem';
import { late, spend, workSpent } from './budget';

/** Pricing rounds for the full problem and for each residual. */
const ROUNDS_FULL = 200;
const ROUNDS_RESIDUAL = 3;
/** The share of the group's work allowance that the first column generation may use (the rest is for rounding). */
const SOFT_SHARE: f64 = 0.5;
/** A dive opens the largest pattern when its z is at least this; below it, the least-loss node. */
const DIVE_MIN: f64 = 0.5;

/**
 * The column generation rounding works on: at first the whole group's, later (when a re-solve fails: a degenerate
 * master the simplex gives up on) a fresh one over the classes still left, seeded with the old columns cut down to
 * them, whose small LP solves from scratch cheaply. `idx` maps its classes to the group's.
 */
class Stage {
  constructor(readonly cg: ColumnGen, readonly idx: Int32Array) {}

  /** What is left, in this stage's classes. */
  left(full: Int32Array): Int32Array {
    const out = new Int32Array(this.idx.length);
    for (let i = 0; i < this.idx.length; i++) unchecked((out[i] = unchecked(full[unchecked(this.idx[i])])));
    return out;
  }

  /** A take of this stage's classes, in the group's. */
  full(t: Int32Array, C: i32): Int32Array {
    const out = new Int32Array(C);
    for (let i = 0; i < this.idx.length; i++) unchecked((out[unchecked(this.idx[i])] = unchecked(t[i])));
    return out;
  }
}

/** A fresh stage over the classes with something left, or null if its LP would not solve. */
function restage(p: Problem, old: Stage, left: Int32Array, mark: f64): Stage | null {
  const keep = new Array<i32>();
  for (let c = 0; c < p.C; c++) if (unchecked(left[c]) > 0) keep.push(c);
  const idx = new Int32Array(keep.length);
  for (let i = 0; i < keep.length; i++) unchecked((idx[i] = unchecked(keep[i])));
  const sub = p.subset(idx, left);
  const st = new Stage(new ColumnGen(sub), idx);
  const subLeft = st.left(left);
  if (!st.cg.seedSingles(subLeft)) return null;
  for (let j = 0; j < old.cg.takes.length; j++) {
    const f = old.full(unchecked(old.cg.takes[j]), p.C);
    const t = new Int32Array(idx.length);
    let any = false;
    for (let i = 0; i < idx.length; i++) {
      const k = min(unchecked(f[unchecked(idx[i])]), unchecked(subLeft[i]));
      unchecked((t[i] = k));
      if (k > 0) any = true;
    }
    if (any) st.cg.add(t, -1);
  }
  spend(<f64>(old.cg.takes.length * p.C));
  return st.cg.run(subLeft, ROUNDS_RESIDUAL, mark) == CG_FAILED ? null : st;
}

/** Opens one node of group take `take` (capped by what is left); false if it takes nothing. */
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

/** The take of pattern j capped by what is left (stage classes), into `out`; false if it takes nothing. */
function capped(cg: ColumnGen, j: i32, left: Int32Array, out: Int32Array): bool {
  const t = unchecked(cg.takes[j]);
  let any = false;
  for (let c = 0; c < left.length; c++) {
    const k = min(unchecked(t[c]), unchecked(left[c]));
    unchecked((out[c] = k));
    if (k > 0) any = true;
  }
  return any;
}

/**
 * One step when no pattern reaches a whole node: the pattern with the largest z if it is at least DIVE_MIN,
 * else the node (of any pattern, capped by what is left) that costs least beyond the LP's worth of its pods, the
 * most-used on a tie. Returns the pattern's index, or -1 if no pattern takes a pod.
 */
function pickOne(cg: ColumnGen, left: Int32Array): i32 {
  const p = cg.p;
  const m = cg.m;
  const t = new Int32Array(p.C);
  let pick = -1;
  let pickZ: f64 = DIVE_MIN;
  for (let j = 0; j < cg.takes.length; j++) {
    const z = m.z(j);
    if (z >= pickZ && capped(cg, j, left, t)) {
      pick = j;
      pickZ = z;
    }
  }
  if (pick >= 0) return pick;
  let pickLoss: f64 = Infinity;
  spend(<f64>(cg.takes.length * p.C * 4));
  for (let j = 0; j < cg.takes.length; j++) {
    if (!capped(cg, j, left, t)) continue;
    let worth: f64 = 0;
    for (let c = 0; c < p.C; c++) worth += <f64>unchecked(t[c]) * unchecked(m.duals[c]);
    const loss = p.cost(t, -1) - worth;
    if (loss < pickLoss - 1e-6 || (loss <= pickLoss + 1e-6 && pick >= 0 && m.z(j) > m.z(pick))) {
      pick = j;
      pickLoss = loss;
    }
  }
  return pick;
}

/** What a node of `take` costs. */
@inline function costOf(p: Problem, take: Int32Array): f64 {
  return p.cost(take, -1);
}

/** The best end found so far: the first `prefix` bins, then `close` (a node holding everything left), if any. */
class Ending {
  cost: f64 = Infinity;
  prefix: i32 = -1;
  close: Int32Array | null = null;
  consider(cost: f64, prefix: i32, close: Int32Array | null): void {
    if (cost >= this.cost) return;
    this.cost = cost;
    this.prefix = prefix;
    this.close = close;
  }
}

/** Opens whole nodes of the stage's patterns (floor z), or one by pickOne; false if nothing can be opened. */
function step(st: Stage, left: Int32Array, bins: Array<Bin>, wholeToo: bool): bool {
  const cg = st.cg;
  const C = left.length;
  const before = bins.length;
  if (wholeToo) {
    for (let j = 0; j < cg.takes.length; j++) {
      const whole = <i32>Math.floor(cg.m.z(j) + 1e-9);
      if (whole <= 0) continue;
      const f = st.full(unchecked(cg.takes[j]), C);
      for (let q = 0; q < whole; q++) open(bins, f, left);
    }
  }
  if (bins.length > before) return true;
  const j = pickOne(cg, st.left(left));
  return j >= 0 && open(bins, st.full(unchecked(cg.takes[j]), C), left);
}

/**
 * Rounds the LP's solution into nodes for demand `left` (changed), re-solving after each step until the work
 * passes `mark`; returns the cheapest sequence of steps plus closing node, or null if no step could be taken.
 */
function round(cg: ColumnGen, left: Int32Array, mark: f64): Array<Bin> | null {
  const p = cg.p;
  const idx = new Int32Array(p.C);
  for (let c = 0; c < p.C; c++) unchecked((idx[c] = c));
  let st = new Stage(cg, idx);
  const bins = new Array<Bin>();
  const end = new Ending();
  let spent: f64 = 0;
  let done = false;
  cg.m.pivotsPerVar = 2;
  for (;;) {
    let remaining = 0;
    for (let c = 0; c < p.C; c++) remaining += unchecked(left[c]);
    if (remaining == 0) {
      end.consider(spent - 1e-9, bins.length, null);
      break;
    }
    // A candidate end: one node holding everything left.
    end.consider(spent + costOf(p, left), bins.length, left.slice());
    const before = bins.length;
    if (!step(st, left, bins, !done)) return null;
    for (let b = before; b < bins.length; b++) spent += costOf(p, unchecked(bins[b]).take);
    if (spent >= end.cost) break;
    if (done) continue;
    if (workSpent() > mark || late()) done = true;
    else if (st.cg.run(st.left(left), ROUNDS_RESIDUAL, mark) == CG_FAILED) {
      const next = restage(p, st, left, mark);
      if (next == null) done = true;
      else st = next;
    }
  }
  const out = new Array<Bin>();
  for (let b = 0; b < end.prefix; b++) out.push(unchecked(bins[b]));
  const close = end.close;
  if (close != null) out.push(new Bin(-1, close));
  return out;
}

/**
 * Packs a group by patterns, or returns null (the safety-net deadline, a class no type holds, or an LP that would
 * not solve). `seed`: another plan's nodes, as patterns to start from. Pricing and re-solving stop at the work mark
 * `mark` (budget.ts); rounding then finishes without them.
 */
export function patternPack(p: Problem, seed: Array<Bin> | null, mark: f64): Array<Bin> | null {
  const left = new Int32Array(p.C);
  for (let c = 0; c < p.C; c++) unchecked((left[c] = unchecked(p.counts[c])));
  const cg = new ColumnGen(p);
  if (!cg.seedSingles(left)) return null;
  if (seed != null) for (let b = 0; b < seed.length; b++) cg.add(unchecked(seed[b]).take.slice(), -1);
  const soft = workSpent() + max(0, mark - workSpent()) * SOFT_SHARE;
  if (cg.run(left, ROUNDS_FULL, soft) == CG_FAILED) return null;
  return round(cg, left, mark);
}
