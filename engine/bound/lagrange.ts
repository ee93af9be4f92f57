// The whole-node pattern bound under NodePool limits (docs/lower-bound.md): the whole-node bound (limits.ts) lets a
// node's room be filled by any multiple of the gcd of the pods' requests, as if every request size came in endless
// supply. Where a few small pods are all that can fill the odd room that large pods leave, that is far too generous.
// This bound keeps the scarce request sizes as whole, counted items: a node carries a pattern (how many pods of each
// scarce size) and the rest of its room is filled by the plentiful sizes in multiples of their gcd. The counts of the
// scarce sizes are priced by Lagrange multipliers (any sign: every plan places each pod exactly once), so the
// whole-node dynamic program of limits.ts still solves the rest; every multiplier vector gives a valid bound, and
// Kelley's cutting-plane method (cuts.ts; at most a fixed number of steps) looks for the best one. Method: Lagrangian
// relaxation of the assignment constraints (Held and Karp; Fisher, "The Lagrangian relaxation method for solving
// integer programming problems", Management Science 1981) over the knapsack dynamic program of Gilmore and Gomory.
import { NODES } from '../domain/resources.ts';
import type { ProvisionInput } from '../model/types.ts';
import { CutMaster } from './cuts.ts';
import { limitLeft, type BoundGroups } from './model.ts';

/** Most combinations of scarce-size counts a node pattern may take (the product of count + 1 over the sizes). */
const MAX_COMBOS = 4096;
/** Most (node kind, pattern) shapes, table cells per NodePool, and DP steps per evaluation. */
const MAX_SHAPES = 400_000;
const MAX_CELLS = 2_000_000;
const MAX_STEPS = 40_000_000;
/** Cutting-plane steps (the bound's work budget: every step is one dynamic program). */
const DEFAULT_STEPS = 40;
/**
 * The multipliers' box, |π_s| <= BOX · L(0): every π is valid, so the box only bounds the search; the optimal
 * multipliers found stay far inside it (about 0.05 · L(0) on weighted-pools-limits).
 */
const BOX = 4;

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** The pods' requests of the limited resource as item sizes: the scarce ones tracked, the rest filled by their gcd. */
interface Items {
  /** Scarce sizes and their counts. */
  readonly sizes: readonly number[];
  readonly counts: readonly number[];
  /** The gcd of the plentiful sizes (their fill is any multiple of it). */
  readonly fluid: number;
  readonly demand: number;
}

/** A node kind: NodePool index, capacity counted by the limit, room for the pods' requests, cheapest price. */
interface Kind {
  readonly pool: number;
  readonly capK: number;
  readonly room: number;
  readonly price: number;
}

/** A node kind with a pattern of scarce pods: limit units, waste units, price (micros), its pattern. */
interface Shape {
  readonly pool: number;
  readonly cap: number;
  readonly waste: number;
  readonly price: number;
  readonly combo: number;
}

/** The relaxation solved at each multiplier vector. */
interface Relaxation {
  readonly items: Items;
  /** Per combination, the count of each scarce size. */
  readonly combos: readonly Int32Array[];
  readonly shapes: readonly Shape[];
  /** Per NodePool: its limit in units, the lowest capacity (units) a plan's NodePool may end at. */
  readonly to: readonly number[];
  readonly from: readonly number[];
  /** Waste units a plan may have in all; the limits' room beyond the demand, in units of z. */
  readonly slack: number;
  readonly leftOver: number;
  readonly u: number;
  readonly v: number;
}

export interface WholeNodePatterns {
  /** US dollars per hour (0 where no limited resource makes it apply). */
  readonly perHour: number;
  /** Cutting-plane steps run (dynamic programs solved). */
  readonly steps: number;
  /**
   * Whether the steps reached the Lagrangian dual's optimum over the multipliers' box (to a millionth): more steps
   * would not raise perHour.
   */
  readonly solved: boolean;
}

/** The best bound over the limited resources the pods request. */
export function wholeNodePatternBound(
  input: ProvisionInput,
  b: BoundGroups,
  opts: { readonly steps?: number } = {},
): WholeNodePatterns {
  let best: WholeNodePatterns = { perHour: 0, steps: 0, solved: false };
  const limited = new Set(input.nodePools.flatMap((p) => Object.keys(p.limits)));
  for (const k of [...limited].sort()) {
    if (k === NODES) continue;
    const r = b.resources.indexOf(k);
    if (r < 0) continue;
    const rel = relaxation(input, b, k, r);
    if (!rel) continue;
    const out = maximise(rel, opts.steps ?? DEFAULT_STEPS);
    if (out.perHour > best.perHour) best = out;
  }
  return best;
}

/** Items, node kinds and shapes (ordered by NodePool, capacity, waste) for limited resource k (index r); undefined where the bound does not apply. */
function relaxation(input: ProvisionInput, b: BoundGroups, k: string, r: number): Relaxation | undefined {
  const used = [...new Set(b.classes.flatMap((c) => c.options))].sort((x, y) => x - y);
  const templates = [...new Set(used.map((o) => b.options[o]!.template))].sort((x, y) => x - y);
  const left = templates.map((t) => limitLeft(input, b.pools[t]!, k));
  if (!used.length || left.some((l) => !(l < Infinity))) return undefined;
  const kinds = kindsOf(b, used, templates, k, r);
  if (!kinds) return undefined;
  for (let tracked = MAX_COMBOS; tracked >= 1; tracked = Math.floor(tracked / 4)) {
    const items = itemsOf(b, r, tracked);
    if (!items) return undefined;
    const rel = shapesOf(items, kinds, left);
    if (rel !== 'too-large') return rel;
  }
  return undefined;
}

/** Per (NodePool, capacity, room), the cheapest option: in this relaxation the others never help. */
function kindsOf(b: BoundGroups, used: number[], templates: number[], k: string, r: number): Kind[] | undefined {
  const by = new Map<string, Kind>();
  for (const o of used) {
    const opt = b.options[o]!;
    const capK = opt.capacity[k] ?? 0;
    const room = Math.floor(opt.cap[r]!);
    if (!Number.isInteger(capK) || capK <= 0 || room > capK) return undefined;
    const kind = { pool: templates.indexOf(opt.template), capK, room, price: opt.price };
    const key = `${kind.pool}/${capK}/${room}`;
    const old = by.get(key);
    if (!old || kind.price < old.price) by.set(key, kind);
  }
  return [...by.values()].sort((x, y) => x.pool - y.pool || x.capK - y.capK || x.room - y.room);
}

/**
 * The pods' requests of resource r by size. The sizes with the fewest pods are tracked while the product of their
 * (count + 1) stays within `maxCombos`; the largest by total request is never tracked (it fills what is left).
 */
function itemsOf(b: BoundGroups, r: number, maxCombos: number): Items | undefined {
  const count = new Map<number, number>();
  for (const c of b.classes) {
    const s = c.requests[r]!;
    if (s > 0) count.set(s, (count.get(s) ?? 0) + c.count);
  }
  const all = [...count.entries()].sort((x, y) => x[0] - y[0]);
  if (!all.length || all.some(([s]) => !Number.isInteger(s))) return undefined;
  const demand = all.reduce((t, [s, n]) => t + s * n, 0);
  const bulk = all.reduce((m, x) => (x[0] * x[1] > m[0] * m[1] ? x : m));
  const sizes: number[] = [];
  const counts: number[] = [];
  let combos = 1;
  let fluid = 0;
  for (const [s, n] of [...all].sort((x, y) => x[1] - y[1] || x[0] - y[0])) {
    if (s !== bulk[0] && combos * (n + 1) <= maxCombos) {
      sizes.push(s);
      counts.push(n);
      combos *= n + 1;
    } else fluid = gcd(fluid, s);
  }
  return { sizes, counts, fluid, demand };
}

/** Every combination of scarce counts (mixed radix). */
function combosOf(items: Items): Int32Array[] {
  const out: Int32Array[] = [new Int32Array(items.sizes.length)];
  items.counts.forEach((n, i) => {
    const base = out.length;
    for (let m = 1; m <= n; m++)
      for (let j = 0; j < base; j++) {
        const c = out[j]!.slice();
        c[i] = m;
        out.push(c);
      }
  });
  return out;
}

function shapesOf(items: Items, kinds: readonly Kind[], left: readonly number[]): Relaxation | 'too-large' | undefined {
  const all = left.reduce((s, l) => s + Math.max(0, l), 0);
  if (items.demand <= 0 || all < items.demand) return undefined;
  const H = all - items.demand;
  const combos = combosOf(items);
  const volume = combos.map((c) => c.reduce((s, m, i) => s + m * items.sizes[i]!, 0));
  const raw: Array<{ pool: number; capK: number; waste: number; price: number; combo: number }> = [];
  for (const kd of kinds)
    for (let i = 0; i < combos.length; i++) {
      if (volume[i]! > kd.room) continue;
      const fill = volume[i]! + Math.floor((kd.room - volume[i]!) / items.fluid) * items.fluid;
      const waste = kd.capK - fill;
      if (waste <= H) raw.push({ pool: kd.pool, capK: kd.capK, waste, price: kd.price, combo: i });
      if (raw.length > MAX_SHAPES) return 'too-large';
    }
  const u = kinds.reduce((g, x) => gcd(g, x.capK), 0);
  const v = raw.reduce((g, x) => gcd(g, x.waste), u);
  const to = left.map((l) => Math.floor(Math.max(0, l) / u));
  const floored = to.reduce((s, t) => s + t * u, 0);
  if (floored < items.demand) return undefined;
  const capSlack = Math.floor(H / u);
  const slack = Math.floor(H / v);
  if (to.some((t) => (t + 1) * (slack + 1) > MAX_CELLS)) return 'too-large';
  const shapes = raw
    .map((x) => ({ pool: x.pool, cap: x.capK / u, waste: x.waste / v, price: x.price, combo: x.combo }))
    .sort((a, b) => a.pool - b.pool || a.cap - b.cap || a.waste - b.waste || a.combo - b.combo);
  return {
    items,
    combos,
    shapes,
    to,
    from: to.map((t) => Math.max(0, t - capSlack)),
    slack,
    leftOver: floored - items.demand,
    u,
    v,
  };
}

/** The multipliers' bound L(π) and the scarce counts its nodes use (the subgradient is counts - used). */
interface Evaluation {
  readonly value: number;
  readonly used: Float64Array;
}

/**
 * Kelley's cutting-plane method from π = 0 (where the bound is at least the whole-node bound's): each evaluation adds
 * the cut L(x) <= cost + (counts - used)·x, and the next π is where the cuts' minimum is largest within a box. Every
 * L(π) is a valid bound, so the best seen is reported; the master's value bounds the dual from above, and the search
 * stops when the best L(π) is within a millionth of it (the dual is solved) or the steps run out.
 */
function maximise(rel: Relaxation, steps: number): WholeNodePatterns {
  const n = rel.items.sizes.length;
  let pi = new Float64Array(n);
  let best = -Infinity;
  let master: CutMaster | undefined;
  let run = 0;
  let solved = false;
  while (run < Math.max(1, steps) && !solved) {
    const e = evaluate(rel, pi);
    run++;
    if (e === undefined) break;
    best = Math.max(best, e.value);
    const g = rel.items.counts.map((c, i) => c - e.used[i]!);
    // With no scarce size, or counts met exactly, L(π) is the dual's optimum (no π does better than its own bound).
    if (g.every((x) => x === 0)) {
      solved = true;
      break;
    }
    // Cuts in $/h: the master's tolerances are relative to values of order one.
    master ??= new CutMaster(n, BOX * Math.max(1, e.value / 1e6));
    master.add((e.value - g.reduce((t, x, i) => t + x * pi[i]!, 0)) / 1e6, g);
    const next = master.solve();
    if (!next) break;
    solved = next.upper * 1e6 - best <= 1e-6 * Math.abs(best);
    pi = next.pi.map((x) => x * 1e6);
  }
  return { perHour: best > 0 ? best / 1e6 : 0, steps: run, solved };
}

/** One multiplier vector's bound: the whole-node DP over shapes priced price - π·pattern, plus π·counts. */
function evaluate(rel: Relaxation, pi: Float64Array): Evaluation | undefined {
  const cost = rel.shapes.map((s) => s.price - rel.combos[s.combo]!.reduce((t, m, i) => t + m * pi[i]!, 0));
  const tables = rel.to.map((_, p) => poolTable(rel, p, cost));
  if (tables.some((t) => t === undefined)) return undefined;
  const best = combine(tables as PoolTable[], rel);
  if (!best) return undefined;
  const used = new Float64Array(rel.items.sizes.length);
  for (const s of best.shapes) rel.combos[rel.shapes[s]!.combo]!.forEach((m, i) => (used[i]! += m));
  const constant = rel.items.counts.reduce((t, c, i) => t + c * pi[i]!, 0);
  return { value: best.cost + constant, used };
}

interface PoolTable {
  readonly W: number;
  readonly from: number;
  readonly to: number;
  /** cost and the last shape of the cheapest set, per (capacity c, waste w) at c * W + w. */
  readonly cost: Float64Array;
  readonly last: Int32Array;
}

/**
 * Unbounded knapsack over pool p's shapes (the cheapest per capacity and waste at these prices): least price of nodes
 * with capacity exactly c units and waste exactly w units, remembering the last shape for the reconstruction.
 */
function poolTable(rel: Relaxation, p: number, cost: readonly number[]): PoolTable | undefined {
  const W = rel.slack + 1;
  const to = rel.to[p]!;
  const list = frontier(rel, p, cost);
  if ((to + 1) * W * list.length > MAX_STEPS) return undefined;
  const caps = Int32Array.from(list, (i) => rel.shapes[i]!.cap);
  const wastes = Int32Array.from(list, (i) => rel.shapes[i]!.waste);
  const prices = Float64Array.from(list, (i) => cost[i]!);
  const dp = new Float64Array((to + 1) * W).fill(Infinity);
  const last = new Int32Array((to + 1) * W).fill(-1);
  dp[0] = 0;
  for (let c = 1; c <= to; c++)
    for (let j = 0; j < list.length; j++) {
      const cap = caps[j]!;
      if (cap > c) break;
      const base = (c - cap) * W - wastes[j]!;
      const price = prices[j]!;
      for (let w = wastes[j]!; w < W; w++) {
        const x = dp[base + w]! + price;
        if (x < dp[c * W + w]!) {
          dp[c * W + w] = x;
          last[c * W + w] = list[j]!;
        }
      }
    }
  return { W, from: rel.from[p]!, to, cost: dp, last };
}

/**
 * Pool p's shapes that can be in a cheapest set at these prices: per capacity, those cheaper than every shape with
 * less waste (a node with less waste and a lower price is as good anywhere), in the shapes' order (by capacity).
 */
function frontier(rel: Relaxation, p: number, cost: readonly number[]): number[] {
  const S = rel.shapes;
  const out: number[] = [];
  let cap = -1;
  let least = Infinity;
  for (let i = 0; i < S.length; i++) {
    if (S[i]!.pool !== p) continue;
    if (S[i]!.cap !== cap) {
      cap = S[i]!.cap;
      least = Infinity;
    }
    if (cost[i]! < least) {
      least = cost[i]!;
      out.push(i);
    }
  }
  return out;
}

/**
 * The cheapest choice of one (capacity, waste) cell per NodePool whose shortfalls below the limits, (to - c) · u +
 * w · v, add up to at most what the limits leave beyond the demand; with the shapes of the nodes it uses.
 */
function combine(tables: readonly PoolTable[], rel: Relaxation): { cost: number; shapes: number[] } | undefined {
  const E = Math.floor(rel.leftOver / rel.v);
  const unit = rel.u / rel.v;
  let state = new Float64Array(E + 1).fill(Infinity);
  state[0] = 0;
  const picks: Array<Int32Array> = [];
  const froms: Array<Int32Array> = [];
  for (const t of tables) {
    const own = new Float64Array(E + 1).fill(Infinity);
    const cell = new Int32Array(E + 1).fill(-1);
    for (let c = t.from; c <= t.to; c++)
      for (let w = 0; w < t.W; w++) {
        const e = (t.to - c) * unit + w;
        const x = t.cost[c * t.W + w]!;
        if (e <= E && x < own[e]!) {
          own[e] = x;
          cell[e] = c * t.W + w;
        }
      }
    const next = new Float64Array(E + 1).fill(Infinity);
    const from = new Int32Array(E + 1).fill(-1);
    for (let a = 0; a <= E; a++) {
      if (state[a] === Infinity) continue;
      for (let e = 0; a + e <= E; e++)
        if (state[a]! + own[e]! < next[a + e]!) {
          next[a + e] = state[a]! + own[e]!;
          from[a + e] = a;
        }
    }
    picks.push(cell);
    froms.push(from);
    state = next;
  }
  let at = 0;
  for (let a = 1; a <= E; a++) if (state[a]! < state[at]!) at = a;
  const best = state[at]!;
  if (best === Infinity) return undefined;
  const shapes: number[] = [];
  for (let p = tables.length - 1; p >= 0; p--) {
    const a = froms[p]![at]!;
    let x = picks[p]![at - a]!;
    const t = tables[p]!;
    while (x > 0) {
      const i = t.last[x]!;
      shapes.push(i);
      x -= rel.shapes[i]!.cap * t.W + rel.shapes[i]!.waste;
    }
    at = a;
  }
  return { cost: best, shapes };
}
