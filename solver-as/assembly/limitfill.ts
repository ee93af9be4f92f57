// Exact fill under binding NodePool limits (docs/solver.md, "NodePool limits"). When a NodePool's limits cannot hold
// the pods whose home it is, the improvement phase keeps Karpenter's NodeClaims there (improve.ts): its packers fill
// nodes well but not to the last millicore of the limits, and the pods that overflow to a lower-weight NodePool are
// Karpenter's choice. This pass then improves those NodeClaims by local search, each step keeping every pod placed
// and every NodePool within its limits:
//
// - a step takes one or two nodes (of one NodePool or of two), their pods, and the room their types take of the
//   limits plus what the limits leave, and re-types them as one or two cheaper nodes whose types fit that room
//   (exact fill: the limited capacity never grows beyond what is there); a one-node step may pack other nodes along
//   at their own types (the three with most room left, then all, with up to three new types);
// - the pods are packed into the nodes (six orders: balancing, first fit, best fit, balancing the largest pods, and
//   two knapsack fills to the last unit of cpu, dpPack), and a pod that does not fit may go to the free room of
//   another node of these NodePools (so the split between the pools can shift);
// - the step is kept if it costs less and Karpenter's order still holds: no pod on a node of a lower-weight NodePool
//   could go to a fresh NodeClaim of a higher-weight one within the room the step leaves it (order.ts canTake).
//
// Steps are tried in a fixed order until a pass over all of them finds none, or the work budget is spent, so the
// result is deterministic. Each node launches as the cheapest type within its planned room (the launch's rules), and
// the NodeClaims are narrowed as the phase's own are (quota.ts).
import { IT_CAP, T_SET, V_REQS, V_REQUESTS } from '../abi';
import { LIMIT_DIMS, PODS, RESOURCES, TEMPLATES, f64At, it, tmpl, ver } from './layout';
import { compatFor } from './its';
import { Types, holds } from './bins';
import { limitsOf, placedVersion, placement } from './schedule';
import { MODE_WELL_KNOWN, canonicalInput, mergeCompatible } from './sets';
import { Claim, claimAt, claimCount, pushClaim, templateLen, templateStart } from './state';
import { exhausted, spend } from './budget';
import { canTake } from './order';
import { Fresh, capOf, narrow, namedUse, within } from './quota';
import { PLACED_CLAIM_BASE } from '../abi';

/** One node of the search: its group's types, the type it launches as, its pods. */
class Node {
  alive: bool = true;
  /** The claim it stands for (retired when the pass commits), or -1 for a node the pass opened. */
  claim: i32 = -1;
  x: i32 = -1;
  price: f64 = 0;
  constructor(
    readonly t: i32,
    readonly gset: i32,
    readonly ts: Types,
    public pods: Array<i32>,
    public total: Float64Array,
  ) {}
}

/** The search state: nodes, each template's room ([nodes, dims...]) and what the nodes' types take of it. */
class Fill {
  nodes: Array<Node> = new Array<Node>();
  rooms: Array<Float64Array> = new Array<Float64Array>();
  uses: Array<Float64Array> = new Array<Float64Array>();
  /** Template-local frontier per (group set, template): types no other type beats (cheaper, larger, smaller room). */
  fronts: Map<u64, Array<i32>> = new Map<u64, Array<i32>>();
  typesMemo: Map<u64, Types> = new Map<u64, Types>();
  gsetMemo: Map<u64, i32> = new Map<u64, i32>();
  oldCost: f64 = 0;
  constructor(readonly bound: Uint8Array) {
    for (let t = 0; t < TEMPLATES; t++) {
      this.rooms.push(limitsOf(t).slice());
      this.uses.push(new Float64Array(LIMIT_DIMS + 1));
    }
  }

  /** The group set of a pod version in template t (-1: incompatible), memoised. */
  gsetOf(v: i32, t: i32): i32 {
    const key = (<u64>v << 16) | <u64>t;
    if (this.gsetMemo.has(key)) return this.gsetMemo.get(key);
    const g = mergeCompatible(canonicalInput(tmpl(t, T_SET)), canonicalInput(ver(v, V_REQS)), MODE_WELL_KNOWN);
    this.gsetMemo.set(key, g);
    return g;
  }

  typesFor(t: i32, gset: i32): Types {
    const key = (<u64>gset << 16) | <u64>t;
    if (this.typesMemo.has(key)) return this.typesMemo.get(key);
    const compat = compatFor(gset, t);
    const local = new Array<i32>();
    for (let j = 0; j < templateLen(t); j++) if (unchecked(compat.ok[j]) != 0) local.push(j);
    const ts = new Types(t, local, gset, compat.price);
    this.typesMemo.set(key, ts);
    this.fronts.set(key, frontier(ts));
    return ts;
  }

  frontOf(n: Node): Array<i32> {
    return this.fronts.get((<u64>n.gset << 16) | <u64>n.t);
  }

  /** Adds (sign 1) or removes (-1) a node's type from its template's use. */
  account(n: Node, sign: f64): void {
    const u = unchecked(this.uses[n.t]);
    u[0] += sign;
    for (let d = 0; d < LIMIT_DIMS; d++) unchecked((u[d + 1] += sign * capOf(n.ts, n.x, d)));
  }

  /** What template t's limits leave beyond its nodes' types ([nodes, dims...]). */
  spare(t: i32): Float64Array {
    const r = unchecked(this.rooms[t]);
    const u = unchecked(this.uses[t]);
    const out = new Float64Array(LIMIT_DIMS + 1);
    for (let d = 0; d <= LIMIT_DIMS; d++) unchecked((out[d] = unchecked(r[d]) - unchecked(u[d])));
    return out;
  }
}

/** A type's price standing alone: its launch pays the cheaper of its spot and on-demand offerings. */
@inline function alonePrice(ts: Types, x: i32): f64 {
  return min(unchecked(ts.spot[x]), unchecked(ts.od[x]));
}

/**
 * The types worth re-typing to: those with a price, not dominated by a type that costs no more, holds at least as
 * much of every resource and takes no more of any limited dimension (ties: the lower index stays). By price.
 */
function frontier(ts: Types): Array<i32> {
  const out = new Array<i32>();
  spend(<f64>(ts.n * ts.n));
  for (let x = 0; x < ts.n; x++) {
    const px = alonePrice(ts, x);
    if (px == Infinity) continue;
    let dominated = false;
    for (let y = 0; y < ts.n && !dominated; y++) {
      if (y == x) continue;
      const py = alonePrice(ts, y);
      if (py > px) continue;
      let ge = true;
      let strict = py < px || y < x;
      for (let r = 0; r < RESOURCES && ge; r++) {
        if (ts.cap(y, r) < ts.cap(x, r)) ge = false;
        else if (ts.cap(y, r) > ts.cap(x, r)) strict = true;
      }
      for (let d = 0; d < LIMIT_DIMS && ge; d++) {
        if (capOf(ts, y, d) > capOf(ts, x, d)) ge = false;
        else if (capOf(ts, y, d) < capOf(ts, x, d)) strict = true;
      }
      if (ge && strict) dominated = true;
    }
    if (!dominated) out.push(x);
  }
  // By price, ties by index (insertion: the frontier is short).
  for (let i = 1; i < out.length; i++) {
    const x = unchecked(out[i]);
    const px = alonePrice(ts, x);
    let j = i - 1;
    while (j >= 0 && alonePrice(ts, unchecked(out[j])) > px) {
      unchecked((out[j + 1] = unchecked(out[j])));
      j--;
    }
    unchecked((out[j + 1] = x));
  }
  return out;
}

/**
 * The type a node of `total` launches as when its options are the types of `ts` within `lim` (capacity per limited
 * dimension), by the launch's rules as Types.pick: generic before exotic, spot unless dearer than the cheapest
 * on-demand, the cheapest; -1 if none holds it. `out[0]` gets its price.
 */
function pickWithin(ts: Types, total: Float64Array, lim: Float64Array, out: Float64Array): i32 {
  spend(<f64>(ts.n * RESOURCES));
  let anyGeneric = false;
  for (let x = 0; x < ts.n && !anyGeneric; x++) if (unchecked(ts.exotic[x]) == 0 && eligible(ts, x, total, lim)) anyGeneric = true;
  let floor = Infinity;
  let odX = -1;
  let spotX = -1;
  for (let x = 0; x < ts.n; x++) {
    if ((anyGeneric && unchecked(ts.exotic[x]) != 0) || !eligible(ts, x, total, lim)) continue;
    if (unchecked(ts.od[x]) < floor) {
      floor = unchecked(ts.od[x]);
      odX = x;
    }
    if (unchecked(ts.spot[x]) < Infinity && (spotX < 0 || unchecked(ts.spot[x]) < unchecked(ts.spot[spotX]))) spotX = x;
  }
  if (spotX >= 0 && unchecked(ts.spot[spotX]) <= floor) {
    out[0] = unchecked(ts.spot[spotX]);
    return spotX;
  }
  out[0] = floor;
  return odX;
}

function eligible(ts: Types, x: i32, total: Float64Array, lim: Float64Array): bool {
  for (let d = 0; d < LIMIT_DIMS; d++) if (capOf(ts, x, d) > unchecked(lim[d]) + 1e-6) return false;
  return holds(ts, x, total);
}

/** Type x's capacity per limited dimension. */
function limOf(ts: Types, x: i32): Float64Array {
  const out = new Float64Array(LIMIT_DIMS);
  for (let d = 0; d < LIMIT_DIMS; d++) unchecked((out[d] = capOf(ts, x, d)));
  return out;
}

/** The nodes of the bound templates' candidate claims; false when one cannot be represented (the pass does not run). */
function nodesOf(f: Fill, isCand: Uint8Array): bool {
  const byClaim = new Int32Array(claimCount());
  byClaim.fill(-1);
  const pods = new Array<Array<i32>>();
  const claimsOf = new Array<i32>();
  for (let p = 0; p < PODS; p++) {
    const at = unchecked(placement[p]);
    if (at > PLACED_CLAIM_BASE) continue;
    const c = PLACED_CLAIM_BASE - at;
    if (unchecked(isCand[c]) == 0 || unchecked(f.bound[claimAt(c).tmpl]) == 0) continue;
    if (unchecked(byClaim[c]) < 0) {
      unchecked((byClaim[c] = pods.length));
      pods.push(new Array<i32>());
      claimsOf.push(c);
    }
    unchecked(pods[unchecked(byClaim[c])]).push(p);
  }
  const price = new Float64Array(1);
  for (let i = 0; i < claimsOf.length; i++) {
    const c = claimAt(unchecked(claimsOf[i]));
    const ps = unchecked(pods[i]);
    const g = f.gsetOf(unchecked(placedVersion[unchecked(ps[0])]), c.tmpl);
    for (let k = 1; k < ps.length; k++) if (f.gsetOf(unchecked(placedVersion[unchecked(ps[k])]), c.tmpl) != g) return false;
    if (g < 0) return false;
    const ts = f.typesFor(c.tmpl, g);
    const n = new Node(c.tmpl, g, ts, ps, totalOf(ps));
    n.claim = unchecked(claimsOf[i]);
    n.x = pickWithin(ts, n.total, reservedLim(c.reserved), price);
    if (n.x < 0) return false;
    n.price = price[0];
    f.oldCost += n.price;
    const r = unchecked(f.rooms[c.tmpl]);
    for (let d = 0; d <= LIMIT_DIMS && d < c.reserved.length; d++) unchecked((r[d] += unchecked(c.reserved[d])));
    f.nodes.push(n);
    f.account(n, 1);
  }
  return f.nodes.length > 0;
}

/** A claim's reservation per limited dimension (Infinity where it reserved nothing). */
function reservedLim(reserved: Float64Array): Float64Array {
  const out = new Float64Array(LIMIT_DIMS);
  for (let d = 0; d < LIMIT_DIMS; d++) unchecked((out[d] = d + 1 < reserved.length ? unchecked(reserved[d + 1]) : Infinity));
  return out;
}

function totalOf(pods: Array<i32>): Float64Array {
  const t = new Float64Array(RESOURCES);
  for (let i = 0; i < pods.length; i++) addReq(t, unchecked(pods[i]), 1);
  return t;
}

@inline function addReq(total: Float64Array, p: i32, sign: f64): void {
  const rq = ver(unchecked(placedVersion[p]), V_REQUESTS);
  for (let r = 0; r < RESOURCES; r++) unchecked((total[r] += sign * f64At(rq + r)));
}

@inline function reqOf(p: i32, r: i32): f64 {
  return f64At(ver(unchecked(placedVersion[p]), V_REQUESTS) + r);
}

/** A node a step opens: its template and group, the type it is planned as, and the pods packed into it. */
class Target {
  pods: Array<i32> = new Array<i32>();
  rem: Float64Array;
  constructor(readonly t: i32, readonly gset: i32, readonly ts: Types, readonly x: i32) {
    this.rem = new Float64Array(RESOURCES);
    for (let r = 0; r < RESOURCES; r++) unchecked((this.rem[r] = ts.cap(x, r)));
  }
}

/** A combination of one or two new types (b < 0: one) for a step, by estimated price. */
class Combo {
  /** A third type, of side sa (-1: none). */
  c: i32 = -1;
  constructor(readonly est: f64, readonly a: i32, readonly sa: i32, readonly b: i32, readonly sb: i32) {}
}

/** The margin a step must save (micro-dollars per hour), so that rounding never makes a step pay. */
const EPS: f64 = 0.5;
/** How many combinations a step packs at most (cheapest first). */
const MAX_TRIES = 6;
/** How many combinations a step that packs every node along tries (each packing is of every pod). */
const WIDE_TRIES = 40;
/** Packing orders tried per combination: balancing, first fit, best fit, balancing the largest pods only. */
const MODES = 6;

/** The side a new node may take: one of the step's nodes' (template, group). */
class Side {
  constructor(readonly t: i32, readonly gset: i32, readonly ts: Types, readonly front: Array<i32>) {}
}

function sidesOf(f: Fill, s: Array<Node>): Array<Side> {
  const out = new Array<Side>();
  for (let i = 0; i < s.length; i++) {
    const n = unchecked(s[i]);
    let seen = false;
    for (let k = 0; k < out.length; k++) if (unchecked(out[k]).t == n.t && unchecked(out[k]).gset == n.gset) seen = true;
    if (!seen) out.push(new Side(n.t, n.gset, n.ts, f.frontOf(n)));
  }
  return out;
}

/** Per template, the room the step may use: what the limits leave plus what the step's nodes' types take. */
function budgetsOf(f: Fill, s: Array<Node>): Array<Float64Array> {
  const out = new Array<Float64Array>();
  for (let t = 0; t < TEMPLATES; t++) out.push(f.spare(t));
  for (let i = 0; i < s.length; i++) {
    const n = unchecked(s[i]);
    const b = unchecked(out[n.t]);
    b[0] += 1;
    for (let d = 0; d < LIMIT_DIMS; d++) unchecked((b[d + 1] += capOf(n.ts, n.x, d)));
  }
  return out;
}

/** Types a and b (b < 0: none) of sides sa, sb fit the budgets. */
function fitsBudgets(sides: Array<Side>, budgets: Array<Float64Array>, a: i32, sa: i32, b: i32, sb: i32): bool {
  const A = unchecked(sides[sa]);
  const ba = unchecked(budgets[A.t]);
  if (b >= 0 && unchecked(sides[sb]).t == A.t) {
    const B = unchecked(sides[sb]);
    if (ba[0] < 2 - 1e-9) return false;
    for (let d = 0; d < LIMIT_DIMS; d++) if (capOf(A.ts, a, d) + capOf(B.ts, b, d) > unchecked(ba[d + 1]) + 1e-6) return false;
    return true;
  }
  if (ba[0] < 1 - 1e-9) return false;
  for (let d = 0; d < LIMIT_DIMS; d++) if (capOf(A.ts, a, d) > unchecked(ba[d + 1]) + 1e-6) return false;
  if (b < 0) return true;
  const B = unchecked(sides[sb]);
  const bb = unchecked(budgets[B.t]);
  if (bb[0] < 1 - 1e-9) return false;
  for (let d = 0; d < LIMIT_DIMS; d++) if (capOf(B.ts, b, d) > unchecked(bb[d + 1]) + 1e-6) return false;
  return true;
}

/** The new types' room plus the free room elsewhere holds the step's pods, in every resource. */
function mayHold(sides: Array<Side>, c: Combo, need: Float64Array): bool {
  const A = unchecked(sides[c.sa]);
  for (let r = 0; r < RESOURCES; r++) {
    let have = A.ts.cap(c.a, r);
    if (c.b >= 0) have += unchecked(sides[c.sb]).ts.cap(c.b, r);
    if (have + 1e-6 < unchecked(need[r])) return false;
  }
  return true;
}

/** The combinations of one or two frontier types that fit the budgets and are estimated to cost less than `old`. */
function combosOf(sides: Array<Side>, budgets: Array<Float64Array>, old: f64, need: Float64Array): Array<Combo> {
  const out = new Array<Combo>();
  for (let sa = 0; sa < sides.length; sa++) {
    const A = unchecked(sides[sa]);
    for (let i = 0; i < A.front.length; i++) {
      const a = unchecked(A.front[i]);
      const pa = alonePrice(A.ts, a);
      if (pa >= old - EPS) break;
      spend(<f64>(A.front.length * LIMIT_DIMS + RESOURCES));
      if (!fitsBudgets(sides, budgets, a, sa, -1, -1)) continue;
      const one = new Combo(pa, a, sa, -1, -1);
      if (mayHold(sides, one, need)) out.push(one);
      for (let sb = sa; sb < sides.length; sb++) {
        const B = unchecked(sides[sb]);
        for (let j = sb == sa ? i : 0; j < B.front.length; j++) {
          const b = unchecked(B.front[j]);
          const est = pa + alonePrice(B.ts, b);
          if (est >= old - EPS) break;
          if (!fitsBudgets(sides, budgets, a, sa, b, sb)) continue;
          const two = new Combo(est, a, sa, b, sb);
          if (mayHold(sides, two, need)) out.push(two);
        }
      }
    }
  }
  out.sort((p, q) => (p.est < q.est ? -1 : p.est > q.est ? 1 : p.sa != q.sa ? p.sa - q.sa : p.a != q.a ? p.a - q.a : p.sb != q.sb ? p.sb - q.sb : p.b - q.b));
  return out;
}

/** The combinations of three types of one side that fit its budget, hold `need` and cost less than `old`. */
function triplesOf(side: Side, budget: Float64Array, old: f64, need: Float64Array, out: Array<Combo>): void {
  if (unchecked(budget[0]) < 3 - 1e-9) return;
  const F = side.front;
  const ts = side.ts;
  for (let i = 0; i < F.length; i++) {
    const a = unchecked(F[i]);
    const pa = alonePrice(ts, a);
    if (pa * 3 >= old - EPS) break;
    for (let j = i; j < F.length; j++) {
      const b = unchecked(F[j]);
      const pb = pa + alonePrice(ts, b);
      if (pb + alonePrice(ts, b) >= old - EPS) break;
      spend(<f64>(F.length * (LIMIT_DIMS + RESOURCES)));
      for (let k = j; k < F.length; k++) {
        const c = unchecked(F[k]);
        const est = pb + alonePrice(ts, c);
        if (est >= old - EPS) break;
        if (!tripleFits(ts, a, b, c, budget, need)) continue;
        const combo = new Combo(est, a, 0, b, 0);
        combo.c = c;
        out.push(combo);
      }
    }
  }
}

function tripleFits(ts: Types, a: i32, b: i32, c: i32, budget: Float64Array, need: Float64Array): bool {
  for (let d = 0; d < LIMIT_DIMS; d++) if (capOf(ts, a, d) + capOf(ts, b, d) + capOf(ts, c, d) > unchecked(budget[d + 1]) + 1e-6) return false;
  for (let r = 0; r < RESOURCES; r++) if (ts.cap(a, r) + ts.cap(b, r) + ts.cap(c, r) + 1e-6 < unchecked(need[r])) return false;
  return true;
}

/** A step's pods: cpu first, then memory, largest first (ties: pod index). */
function sortedPods(s: Array<Node>): Array<i32> {
  const out = new Array<i32>();
  for (let i = 0; i < s.length; i++) {
    const ps = unchecked(s[i]).pods;
    for (let k = 0; k < ps.length; k++) out.push(unchecked(ps[k]));
  }
  out.sort((a, b) => {
    for (let r = 0; r < 2 && r < RESOURCES; r++) {
      const d = reqOf(b, r) - reqOf(a, r);
      if (d != 0) return d < 0 ? -1 : 1;
    }
    return a - b;
  });
  spend(<f64>(out.length * 8));
  return out;
}

/** How much of the tightest resource a bin keeps after taking pod p, as a share of its type (-1: does not fit). */
function slackAfter(rem: Float64Array, ts: Types, x: i32, p: i32): f64 {
  let worst: f64 = Infinity;
  for (let r = 0; r < RESOURCES; r++) {
    const left = unchecked(rem[r]) - reqOf(p, r);
    if (left < -1e-6) return -1;
    const cap = ts.cap(x, r);
    if (cap > 0) worst = min(worst, max(0, left) / cap);
  }
  return worst;
}

/** The target bin for pod p in `mode` (-1: none fits). */
function chooseBin(f: Fill, bins: Array<Target>, p: i32, mode: i32, largest: f64): i32 {
  const v = unchecked(placedVersion[p]);
  const balance = mode == 0 || (mode == 3 && reqOf(p, 0) >= largest);
  let best = -1;
  let bestScore: f64 = 0;
  for (let i = 0; i < bins.length; i++) {
    const b = unchecked(bins[i]);
    if (f.gsetOf(v, b.t) != b.gset) continue;
    const sc = slackAfter(b.rem, b.ts, b.x, p);
    if (sc < 0) continue;
    if (mode == 1) return i;
    if (best < 0 || (balance ? sc > bestScore : sc < bestScore)) {
      best = i;
      bestScore = sc;
    }
  }
  return best;
}

/** The free room of the nodes outside the step (their type's room less their pods). */
function spillRooms(f: Fill, inStep: Uint8Array): Array<Float64Array> {
  const out = new Array<Float64Array>();
  for (let i = 0; i < f.nodes.length; i++) {
    const n = unchecked(f.nodes[i]);
    const rem = new Float64Array(RESOURCES);
    if (n.alive && unchecked(inStep[i]) == 0) for (let r = 0; r < RESOURCES; r++) unchecked((rem[r] = n.ts.cap(n.x, r) - unchecked(n.total[r])));
    out.push(rem);
  }
  return out;
}

/** A pod the targets cannot take goes to the first node outside the step with room for it; -1 if none. */
function spillTo(f: Fill, rooms: Array<Float64Array>, inStep: Uint8Array, p: i32): i32 {
  const v = unchecked(placedVersion[p]);
  for (let i = 0; i < f.nodes.length; i++) {
    const n = unchecked(f.nodes[i]);
    if (!n.alive || unchecked(inStep[i]) != 0 || f.gsetOf(v, n.t) != n.gset) continue;
    if (slackAfter(unchecked(rooms[i]), n.ts, n.x, p) >= 0) return i;
  }
  return -1;
}

/** Packs the step's pods into the targets (and spills); per pod, where it went (bin, or -(node + 1)); null if one fits nowhere. */
function packStep(f: Fill, pods: Array<i32>, bins: Array<Target>, inStep: Uint8Array, mode: i32): Int32Array | null {
  if (mode >= 4) return dpPack(f, pods, bins, mode == 5);
  const rooms = spillRooms(f, inStep);
  const where = new Int32Array(pods.length);
  const largest = pods.length > 0 ? reqOf(unchecked(pods[0]), 0) : 0;
  spend(<f64>(pods.length * (bins.length + 1) * RESOURCES));
  for (let k = 0; k < pods.length; k++) {
    const p = unchecked(pods[k]);
    const i = chooseBin(f, bins, p, mode, largest);
    if (i >= 0) {
      const b = unchecked(bins[i]);
      for (let r = 0; r < RESOURCES; r++) unchecked((b.rem[r] -= reqOf(p, r)));
      b.pods.push(p);
      unchecked((where[k] = i));
      continue;
    }
    const n = spillTo(f, rooms, inStep, p);
    if (n < 0) return null;
    spend(<f64>(f.nodes.length * RESOURCES));
    const room = unchecked(rooms[n]);
    for (let r = 0; r < RESOURCES; r++) unchecked((room[r] -= reqOf(p, r)));
    unchecked((where[k] = -(n + 1)));
  }
  return where;
}

/** What a step changed, to take it back when Karpenter's order would not hold. */
class Undo {
  added: i32 = 0;
  spilled: Array<i32> = new Array<i32>();
  spillPods: Array<Array<i32>> = new Array<Array<i32>>();
  spillTotals: Array<Float64Array> = new Array<Float64Array>();
  spillX: Array<i32> = new Array<i32>();
  spillPrice: Array<f64> = new Array<f64>();
}

/** The new nodes' types and prices and the spilled nodes' (null when the step does not pay). */
class Priced {
  xs: Array<i32> = new Array<i32>();
  prices: Array<f64> = new Array<f64>();
  /** Per node index: the pods spilled onto it. */
  spills: Map<i32, Array<i32>> = new Map<i32, Array<i32>>();
  spillOrder: Array<i32> = new Array<i32>();
  cost: f64 = 0;
}

function priceStep(f: Fill, bins: Array<Target>, pods: Array<i32>, where: Int32Array): Priced | null {
  const out = new Priced();
  const price = new Float64Array(1);
  for (let i = 0; i < bins.length; i++) {
    const b = unchecked(bins[i]);
    if (b.pods.length == 0) {
      out.xs.push(-1);
      out.prices.push(0);
      continue;
    }
    const x = pickWithin(b.ts, totalOf(b.pods), limOf(b.ts, b.x), price);
    if (x < 0) return null;
    out.xs.push(x);
    out.prices.push(price[0]);
    out.cost += price[0];
  }
  for (let k = 0; k < pods.length; k++) {
    const w = unchecked(where[k]);
    if (w >= 0) continue;
    const n = -w - 1;
    if (!out.spills.has(n)) {
      out.spills.set(n, new Array<i32>());
      out.spillOrder.push(n);
    }
    out.spills.get(n).push(unchecked(pods[k]));
  }
  for (let i = 0; i < out.spillOrder.length; i++) {
    const n = unchecked(f.nodes[unchecked(out.spillOrder[i])]);
    const total = n.total.slice();
    const add = out.spills.get(unchecked(out.spillOrder[i]));
    for (let k = 0; k < add.length; k++) addReq(total, unchecked(add[k]), 1);
    const x = pickWithin(n.ts, total, limOf(n.ts, n.x), price);
    if (x < 0) return null;
    out.cost += price[0] - n.price;
  }
  return out;
}

function applyStep(f: Fill, idx: Array<i32>, bins: Array<Target>, pr: Priced, changed: Uint8Array): Undo {
  const u = new Undo();
  for (let i = 0; i < idx.length; i++) {
    const n = unchecked(f.nodes[unchecked(idx[i])]);
    f.account(n, -1);
    n.alive = false;
    unchecked((changed[n.t] = 1));
  }
  const price = new Float64Array(1);
  for (let i = 0; i < pr.spillOrder.length; i++) {
    const ni = unchecked(pr.spillOrder[i]);
    const n = unchecked(f.nodes[ni]);
    u.spilled.push(ni);
    u.spillPods.push(n.pods.slice());
    u.spillTotals.push(n.total.slice());
    u.spillX.push(n.x);
    u.spillPrice.push(n.price);
    f.account(n, -1);
    const add = pr.spills.get(ni);
    for (let k = 0; k < add.length; k++) {
      n.pods.push(unchecked(add[k]));
      addReq(n.total, unchecked(add[k]), 1);
    }
    n.x = pickWithin(n.ts, n.total, limOf(n.ts, n.x), price);
    n.price = price[0];
    f.account(n, 1);
    unchecked((changed[n.t] = 1));
  }
  for (let i = 0; i < bins.length; i++) {
    const b = unchecked(bins[i]);
    if (b.pods.length == 0) continue;
    const n = new Node(b.t, b.gset, b.ts, b.pods, totalOf(b.pods));
    n.x = unchecked(pr.xs[i]);
    n.price = unchecked(pr.prices[i]);
    f.nodes.push(n);
    f.account(n, 1);
    unchecked((changed[n.t] = 1));
    u.added++;
  }
  return u;
}

function undoStep(f: Fill, idx: Array<i32>, u: Undo): void {
  for (let i = 0; i < u.added; i++) f.account(f.nodes.pop(), -1);
  for (let i = 0; i < u.spilled.length; i++) {
    const n = unchecked(f.nodes[unchecked(u.spilled[i])]);
    f.account(n, -1);
    n.pods = unchecked(u.spillPods[i]);
    n.total = unchecked(u.spillTotals[i]);
    n.x = unchecked(u.spillX[i]);
    n.price = unchecked(u.spillPrice[i]);
    f.account(n, 1);
  }
  for (let i = 0; i < idx.length; i++) {
    const n = unchecked(f.nodes[unchecked(idx[i])]);
    n.alive = true;
    f.account(n, 1);
  }
}

/**
 * Karpenter's order holds: no pod on a node of a later template (the pass's nodes, and the versions of the other
 * claims there) could go to a fresh NodeClaim of an earlier bound template within the room it has left.
 */
function orderHolds(f: Fill, others: Array<Array<i32>>): bool {
  for (let hi = 0; hi < TEMPLATES; hi++) {
    if (unchecked(f.bound[hi]) == 0) continue;
    const spare = f.spare(hi);
    if (unchecked(spare[0]) < 1 || !anyWithin(hi, spare)) continue;
    const seen = new Map<i32, bool>();
    for (let i = 0; i < f.nodes.length; i++) {
      const n = unchecked(f.nodes[i]);
      if (!n.alive || n.t <= hi) continue;
      for (let k = 0; k < n.pods.length; k++) if (takes(hi, unchecked(placedVersion[unchecked(n.pods[k])]), spare, seen)) return false;
    }
    for (let lo = hi + 1; lo < TEMPLATES; lo++) {
      const vs = unchecked(others[lo]);
      for (let k = 0; k < vs.length; k++) if (takes(hi, unchecked(vs[k]), spare, seen)) return false;
    }
  }
  return true;
}

function takes(t: i32, v: i32, room: Float64Array, seen: Map<i32, bool>): bool {
  if (seen.has(v)) return seen.get(v);
  const r = canTake(t, v, room);
  seen.set(v, r);
  return r;
}

/** Some type of template t fits `room` in every limited dimension (else no fresh NodeClaim could open). */
function anyWithin(t: i32, room: Float64Array): bool {
  const start = templateStart(t);
  for (let j = 0; j < templateLen(t); j++) {
    const cap = it(start + j, IT_CAP);
    let ok = true;
    for (let d = 0; d < LIMIT_DIMS && ok; d++) if (f64At(cap + d) > unchecked(room[d + 1]) + 1e-6) ok = false;
    if (ok) return true;
  }
  return false;
}

/** Per template, the distinct versions of the pods on claims the pass does not hold. */
function othersOf(f: Fill): Array<Array<i32>> {
  const mine = new Uint8Array(claimCount());
  for (let i = 0; i < f.nodes.length; i++) if (unchecked(f.nodes[i]).claim >= 0) unchecked((mine[unchecked(f.nodes[i]).claim] = 1));
  const out = new Array<Array<i32>>();
  for (let t = 0; t < TEMPLATES; t++) out.push(new Array<i32>());
  for (let p = 0; p < PODS; p++) {
    const at = unchecked(placement[p]);
    if (at > PLACED_CLAIM_BASE) continue;
    const c = PLACED_CLAIM_BASE - at;
    if (unchecked(mine[c]) != 0) continue;
    const vs = unchecked(out[claimAt(c).tmpl]);
    const v = unchecked(placedVersion[p]);
    if (!vs.includes(v)) vs.push(v);
  }
  return out;
}

/** The step's pods less what the nodes outside it have free (what the new types must at least hold). */
function needOf(f: Fill, s: Array<Node>, inStep: Uint8Array): Float64Array {
  const need = new Float64Array(RESOURCES);
  for (let i = 0; i < s.length; i++) for (let r = 0; r < RESOURCES; r++) unchecked((need[r] += unchecked(unchecked(s[i]).total[r])));
  for (let i = 0; i < f.nodes.length; i++) {
    const n = unchecked(f.nodes[i]);
    if (!n.alive || unchecked(inStep[i]) != 0) continue;
    for (let r = 0; r < RESOURCES; r++) unchecked((need[r] -= max(0, n.ts.cap(n.x, r) - unchecked(n.total[r]))));
  }
  return need;
}

/**
 * Tries to re-type the nodes `idx` as cheaper ones, with the nodes `keep` (their types kept) packed along, so that
 * their room can take what the new types leave; true if a step was kept.
 */
function tryStep(f: Fill, idx: Array<i32>, keep: Array<i32>, others: Array<Array<i32>>, changed: Uint8Array): bool {
  const s = new Array<Node>();
  const all = idx.concat(keep);
  const inStep = new Uint8Array(f.nodes.length);
  let old: f64 = 0;
  for (let i = 0; i < all.length; i++) {
    const n = unchecked(f.nodes[unchecked(all[i])]);
    if (i < idx.length) s.push(n);
    old += n.price;
    unchecked((inStep[unchecked(all[i])] = 1));
  }
  const sides = sidesOf(f, s);
  const need = needOf(f, s, inStep);
  for (let i = 0; i < keep.length; i++) {
    const n = unchecked(f.nodes[unchecked(keep[i])]);
    for (let r = 0; r < RESOURCES; r++) unchecked((need[r] -= n.ts.cap(n.x, r) - unchecked(n.total[r])));
  }
  let kept: f64 = 0;
  for (let i = 0; i < keep.length; i++) kept += unchecked(f.nodes[unchecked(keep[i])]).price;
  const budgets = budgetsOf(f, s);
  const combos = combosOf(sides, budgets, old - kept, need);
  if (idx.length == 1 && keep.length > HELPERS) {
    triplesOf(unchecked(sides[0]), unchecked(budgets[unchecked(sides[0]).t]), old - kept, need, combos);
    combos.sort((p, q) => (p.est < q.est ? -1 : p.est > q.est ? 1 : p.a != q.a ? p.a - q.a : p.b != q.b ? p.b - q.b : p.c - q.c));
  }
  if (combos.length == 0) return false;
  const all2 = new Array<Node>();
  for (let i = 0; i < all.length; i++) all2.push(unchecked(f.nodes[unchecked(all[i])]));
  const pods = sortedPods(all2);
  for (let k = 0; k < combos.length && k < (keep.length > HELPERS ? WIDE_TRIES : MAX_TRIES) && !exhausted(); k++) {
    for (let mode = 0; mode < MODES; mode++) {
      const bins = binsOf(f, sides, unchecked(combos[k]), keep);
      const where = packStep(f, pods, bins, inStep, mode);
      if (where == null) continue;
      const pr = priceStep(f, bins, pods, where);
      if (pr == null || pr.cost >= old - EPS) continue;
      const u = applyStep(f, all, bins, pr, changed);
      if (orderHolds(f, others)) return true;
      undoStep(f, all, u);
    }
  }
  return false;
}

/** The step's bins: the combination's new types, then the kept nodes' own. */
function binsOf(f: Fill, sides: Array<Side>, c: Combo, keep: Array<i32>): Array<Target> {
  const bins = new Array<Target>();
  const A = unchecked(sides[c.sa]);
  bins.push(new Target(A.t, A.gset, A.ts, c.a));
  if (c.b >= 0) {
    const B = unchecked(sides[c.sb]);
    bins.push(new Target(B.t, B.gset, B.ts, c.b));
  }
  if (c.c >= 0) bins.push(new Target(A.t, A.gset, A.ts, c.c));
  for (let i = 0; i < keep.length; i++) {
    const n = unchecked(f.nodes[unchecked(keep[i])]);
    bins.push(new Target(n.t, n.gset, n.ts, n.x));
  }
  return bins;
}

/** Every alive node but i. */
function allBut(f: Fill, i: i32): Array<i32> {
  const out = new Array<i32>();
  for (let j = 0; j < f.nodes.length; j++) if (j != i && unchecked(f.nodes[j]).alive) out.push(j);
  return out;
}

/** How many nodes a one-node step packs along when it fails alone. */
const HELPERS = 3;

/** The HELPERS alive nodes other than i with the most free room (the smallest share left over their resources), best first. */
function helpersOf(f: Fill, i: i32): Array<i32> {
  const out = new Array<i32>();
  const score = new Array<f64>();
  for (let j = 0; j < f.nodes.length; j++) {
    const n = unchecked(f.nodes[j]);
    if (j == i || !n.alive) continue;
    let sc: f64 = Infinity;
    for (let r = 0; r < RESOURCES; r++) {
      const cap = n.ts.cap(n.x, r);
      if (cap > 0) sc = min(sc, (cap - unchecked(n.total[r])) / cap);
    }
    // Insertion into the short list, best first (ties: the lower index first).
    out.push(j);
    score.push(sc);
    let k = out.length - 1;
    while (k > 0 && unchecked(score[k - 1]) < sc) {
      unchecked((out[k] = unchecked(out[k - 1])));
      unchecked((score[k] = unchecked(score[k - 1])));
      k--;
    }
    unchecked((out[k] = j));
    unchecked((score[k] = sc));
    if (out.length > HELPERS) {
      out.pop();
      score.pop();
    }
  }
  return out;
}

/** Passes over every node and pair of nodes until one keeps no step or the work budget is spent. */
function search(f: Fill, changed: Uint8Array): bool {
  const others = othersOf(f);
  let any = false;
  let again = true;
  const one = new Array<i32>(1);
  const two = new Array<i32>(2);
  const none = new Array<i32>();
  while (again && !exhausted()) {
    again = false;
    const n = f.nodes.length;
    for (let i = 0; i < n && !exhausted(); i++) {
      if (!unchecked(f.nodes[i]).alive) continue;
      unchecked((one[0] = i));
      if (tryStep(f, one, none, others, changed) || tryStep(f, one, helpersOf(f, i), others, changed)) again = true;
      else if (tryStep(f, one, allBut(f, i), others, changed)) again = true;
    }
    for (let i = 0; i < n && !exhausted(); i++) {
      for (let j = i + 1; j < n && !exhausted(); j++) {
        if (!unchecked(f.nodes[i]).alive || !unchecked(f.nodes[j]).alive) continue;
        unchecked((two[0] = i));
        unchecked((two[1] = j));
        if (tryStep(f, two, none, others, changed)) again = true;
      }
    }
    if (again) any = true;
  }
  return any;
}

function aliveCost(f: Fill): f64 {
  let c: f64 = 0;
  for (let i = 0; i < f.nodes.length; i++) if (unchecked(f.nodes[i]).alive) c += unchecked(f.nodes[i]).price;
  return c;
}

/** The new claims of template t (narrowed within its room), or null if its nodes' types do not fit it. */
function freshOf(f: Fill, t: i32): Array<Fresh> | null {
  const fresh = new Array<Fresh>();
  for (let i = 0; i < f.nodes.length; i++) {
    const n = unchecked(f.nodes[i]);
    if (n.alive && n.t == t) fresh.push(new Fresh(n.gset, n.ts, n.total, n.pods, n.x, n.price));
  }
  const room = unchecked(f.rooms[t]);
  if (!within(namedUse(fresh), room)) return null;
  narrow(fresh, room);
  return fresh;
}

/** Retires the claims of the changed templates' nodes and adds the new ones; returns how many templates changed. */
function commitFill(f: Fill, changed: Uint8Array): i32 {
  const plans = new Array<Array<Fresh> | null>();
  for (let t = 0; t < TEMPLATES; t++) {
    const fresh = unchecked(changed[t]) != 0 ? freshOf(f, t) : null;
    if (unchecked(changed[t]) != 0 && fresh == null) return 0;
    plans.push(fresh);
  }
  for (let i = 0; i < f.nodes.length; i++) {
    const n = unchecked(f.nodes[i]);
    if (n.claim < 0 || unchecked(changed[n.t]) == 0) continue;
    const c = claimAt(n.claim);
    c.pods = 0;
    c.liveLen = 0;
  }
  let count = 0;
  for (let t = 0; t < TEMPLATES; t++) {
    const fresh = unchecked(plans[t]);
    if (fresh == null) continue;
    count++;
    const lim = limitsOf(t);
    const room = unchecked(f.rooms[t]);
    for (let d = 0; d <= LIMIT_DIMS; d++) unchecked((lim[d] = unchecked(room[d])));
    for (let i = 0; i < fresh.length; i++) {
      const fr = unchecked(fresh[i]);
      for (let d = 0; d <= LIMIT_DIMS; d++) unchecked((lim[d] -= unchecked(fr.reserved[d])));
      const cl = new Claim(t, fr.set, fr.live, fr.live.length, claimCount(), 0);
      for (let r = 0; r < RESOURCES; r++) unchecked((cl.total[r] = unchecked(fr.total[r])));
      cl.pods = fr.pods.length;
      cl.reserved = fr.reserved;
      const ci = pushClaim(cl);
      for (let q = 0; q < fr.pods.length; q++) unchecked((placement[unchecked(fr.pods[q])] = PLACED_CLAIM_BASE - ci));
    }
  }
  return count;
}

/**
 * The pass: improves the candidate claims (isCand) of the templates whose limits bound the phase (`bound`), and of
 * the templates after the first of them, by exact fill; returns how many templates' claims were replaced (0: none). Uses the work budget as it is left.
 */
export function fillLimits(bound: Uint8Array, isCand: Uint8Array): i32 {
  // The bound templates and every later one: the pods the limits push down find their nodes there.
  const inPass = new Uint8Array(TEMPLATES);
  let from = TEMPLATES;
  for (let t = 0; t < TEMPLATES; t++) if (unchecked(bound[t]) != 0 && from == TEMPLATES) from = t;
  for (let t = from; t < TEMPLATES; t++) unchecked((inPass[t] = 1));
  const f = new Fill(inPass);
  if (!nodesOf(f, isCand)) return 0;
  for (let t = 0; t < TEMPLATES; t++) if (!within(unchecked(f.uses[t]), unchecked(f.rooms[t]))) return 0;
  const changed = new Uint8Array(TEMPLATES);
  if (!search(f, changed)) return 0;
  if (aliveCost(f) >= f.oldCost - EPS) return 0;
  return commitFill(f, changed);
}

/** Greatest common divisor of two non-negative integers. */
function gcd(a: i64, b: i64): i64 {
  while (b != 0) {
    const t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/** The most cpu units a DP fill may span (larger nodes are left to the other orders). */
const DP_UNITS: i64 = 20000;

/**
 * Fills bins one at a time, each with the pods left that fill its cpu most (a knapsack over the pods' classes by
 * cpu in units of the requests' greatest common divisor, least memory at each fill, within its memory), bins in
 * the given order or largest first. Where the limits leave a few millicores, this fills nodes to the last unit where
 * the orders above leave gaps. Per pod, its bin; null when pods are left.
 */
function dpPack(f: Fill, pods: Array<i32>, bins: Array<Target>, largestFirst: bool): Int32Array | null {
  if (RESOURCES < 2 || pods.length == 0) return null;
  let g: i64 = 0;
  for (let k = 0; k < pods.length; k++) g = gcd(<i64>Math.round(reqOf(unchecked(pods[k]), 0)), g);
  if (g <= 0) return null;
  const where = new Int32Array(pods.length);
  where.fill(-1);
  const order = binOrder(bins, largestFirst);
  let podsMem: f64 = 0;
  let binsMem: f64 = 0;
  for (let k = 0; k < pods.length; k++) podsMem += reqOf(unchecked(pods[k]), 1);
  for (let i = 0; i < bins.length; i++) binsMem += unchecked(bins[i]).rem[1];
  for (let oi = 0; oi < order.length; oi++) {
    const b = unchecked(bins[unchecked(order[oi])]);
    // Its share of the memory left, so that the bins filled last are not left the heaviest pods.
    const goal = binsMem > 0 ? (b.rem[1] * podsMem) / binsMem : 0;
    binsMem -= b.rem[1];
    const before = b.rem[1];
    if (!dpFill(f, pods, where, b, unchecked(order[oi]), g, goal)) return null;
    podsMem -= before - b.rem[1];
  }
  for (let k = 0; k < pods.length; k++) if (unchecked(where[k]) < 0) return null;
  return where;
}

function binOrder(bins: Array<Target>, largestFirst: bool): Array<i32> {
  const out = new Array<i32>();
  for (let i = 0; i < bins.length; i++) {
    out.push(i);
    if (!largestFirst) continue;
    let k = out.length - 1;
    while (k > 0 && unchecked(bins[unchecked(out[k - 1])]).rem[0] < unchecked(bins[i]).rem[0]) {
      unchecked((out[k] = unchecked(out[k - 1])));
      k--;
    }
    unchecked((out[k] = i));
  }
  return out;
}

/** One bin's knapsack fill (dpPack); false when its units exceed DP_UNITS. */
function dpFill(f: Fill, pods: Array<i32>, where: Int32Array, b: Target, bi: i32, g: i64, goal: f64): bool {
  const A = <i32>(<i64>Math.floor(b.rem[0] + 1e-6) / g);
  if (<i64>A > DP_UNITS) return false;
  // Items: the pods left that the bin's group takes, in runs of equal requests split in powers of two.
  const first = new Array<i32>();
  const runLen = new Array<i32>();
  const v0 = new Array<i32>();
  for (let k = 0; k < pods.length; k++) {
    if (unchecked(where[k]) >= 0) continue;
    const p = unchecked(pods[k]);
    if (f.gsetOf(unchecked(placedVersion[p]), b.t) != b.gset) continue;
    const n = first.length;
    if (n > 0 && sameReq(unchecked(pods[unchecked(first[n - 1])]), p) && unchecked(v0[n - 1]) == k - 1) {
      unchecked((runLen[n - 1] += 1));
      unchecked((v0[n - 1] = k));
      continue;
    }
    first.push(k);
    runLen.push(1);
    v0.push(k);
  }
  const itemRun = new Array<i32>();
  const itemCount = new Array<i32>();
  for (let r = 0; r < first.length; r++) {
    let left = unchecked(runLen[r]);
    for (let m = 1; left > 0; m <<= 1) {
      const c = min(m, left);
      itemRun.push(r);
      itemCount.push(c);
      left -= c;
    }
  }
  const I = itemRun.length;
  const dp = new Float64Array(A + 1);
  dp.fill(Infinity);
  dp[0] = 0;
  const choice = new Uint8Array(I * (A + 1));
  spend(<f64>I * <f64>(A + 1));
  for (let i = 0; i < I; i++) {
    const p = unchecked(pods[unchecked(first[unchecked(itemRun[i])])]);
    const cnt = unchecked(itemCount[i]);
    const w = <i32>(<i64>Math.round(reqOf(p, 0) * <f64>cnt) / g);
    const m = reqOf(p, 1) * <f64>cnt;
    for (let c = A; c >= w; c--) {
      const nv = unchecked(dp[c - w]) + m;
      if (nv < unchecked(dp[c])) {
        unchecked((dp[c] = nv));
        unchecked((choice[i * (A + 1) + c] = 1));
      }
    }
  }
  let c = A;
  while (c > 0 && !(unchecked(dp[c]) <= b.rem[1] + 1e-6)) c--;
  // Take the chosen items: the first pods left of each run.
  const takeRun = new Int32Array(first.length);
  for (let i = I - 1; i >= 0 && c > 0; i--) {
    if (unchecked(choice[i * (A + 1) + c]) == 0) continue;
    const r = unchecked(itemRun[i]);
    const cnt = unchecked(itemCount[i]);
    unchecked((takeRun[r] += cnt));
    c -= <i32>(<i64>Math.round(reqOf(unchecked(pods[unchecked(first[r])]), 0) * <f64>cnt) / g);
  }
  rebalance(pods, first, runLen, takeRun, min(goal, b.rem[1]));
  for (let r = 0; r < first.length; r++) {
    let need = unchecked(takeRun[r]);
    for (let k = unchecked(first[r]); k < pods.length && need > 0; k++) {
      if (unchecked(where[k]) >= 0) continue;
      const p = unchecked(pods[k]);
      if (!sameReq(unchecked(pods[unchecked(first[r])]), p) || slackAfter(b.rem, b.ts, b.x, p) < 0) continue;
      for (let q = 0; q < RESOURCES; q++) unchecked((b.rem[q] -= reqOf(p, q)));
      b.pods.push(p);
      unchecked((where[k] = bi));
      need--;
    }
  }
  return true;
}

function sameReq(a: i32, b: i32): bool {
  for (let r = 0; r < RESOURCES; r++) if (reqOf(a, r) != reqOf(b, r)) return false;
  return true;
}

/**
 * Moves a knapsack fill's memory toward `goal` without changing its cpu: swaps pods it takes for pods left with the
 * same cpu and more memory, while the fill stays within the goal.
 */
function rebalance(pods: Array<i32>, first: Array<i32>, runLen: Array<i32>, take: Int32Array, goal: f64): void {
  const R = first.length;
  let mem: f64 = 0;
  for (let r = 0; r < R; r++) mem += <f64>unchecked(take[r]) * reqOf(unchecked(pods[unchecked(first[r])]), 1);
  let moved = true;
  while (moved && mem < goal) {
    moved = false;
    spend(<f64>(R * R));
    for (let lo = R - 1; lo >= 0 && !moved; lo--) {
      if (unchecked(take[lo]) == 0) continue;
      const pl = unchecked(pods[unchecked(first[lo])]);
      for (let hi = 0; hi < R && !moved; hi++) {
        const ph = unchecked(pods[unchecked(first[hi])]);
        if (unchecked(take[hi]) >= unchecked(runLen[hi]) || reqOf(ph, 0) != reqOf(pl, 0)) continue;
        const d = reqOf(ph, 1) - reqOf(pl, 1);
        if (d <= 0 || mem + d > goal) continue;
        unchecked((take[lo] -= 1));
        unchecked((take[hi] += 1));
        mem += d;
        moved = true;
      }
    }
  }
}
