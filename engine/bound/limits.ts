// The whole-node bound under NodePool limits (docs/lower-bound.md): when every option the pods may use belongs to a
// NodePool with a limit on a resource the pods request, and the limits leave little more than the pods' requests, a
// plan must reach those requests with whole nodes whose capacity beyond what pods can use (the kubelet's reserve, the
// daemonsets, the part no sum of requests can fill) fits in the few units the limits leave. The resource LP takes
// fractions of the cheapest types; this bound counts whole nodes, per NodePool, by dynamic programming.
//
// For a limited resource k with total request D: a node of option o counts capK_o against its NodePool's limit and
// can hold pods whose k-requests sum to at most use_o (its capacity net of daemonsets, rounded down to a multiple of
// the gcd of the pods' requests); its waste is capK_o - use_o. A plan's nodes satisfy, per NodePool P,
// Σ capK <= left_P, and overall Σ use >= D. So Σ waste <= Σ_P left_P - D = H, and each P's capacity is within H of
// left_P. The bound is the least price of whole nodes meeting those two rows; it ignores every other resource and
// which pod fits which option, so it only ever helps where the limits bind.
import { NODES } from '../domain/resources.ts';
import type { ProvisionInput } from '../model/types.ts';
import { limitLeft, type BoundGroups } from './model.ts';

/** Largest DP table (capacity units x waste units, per NodePool) the bound builds. */
const MAX_CELLS = 4_000_000;
/** Largest DP work (cells x distinct options). */
const MAX_WORK = 20_000_000;

interface Shape {
  /** Limit units the node takes, waste units it carries, its price (micros). */
  readonly cap: number;
  readonly waste: number;
  readonly price: number;
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** The whole-node bound, $/h (0 when no limited resource makes it apply). */
export function limitsBound(input: ProvisionInput, b: BoundGroups): number {
  let best = 0;
  const limited = new Set(input.nodePools.flatMap((p) => Object.keys(p.limits)));
  for (const k of limited) {
    if (k === NODES) continue;
    const r = b.resources.indexOf(k);
    if (r >= 0) best = Math.max(best, boundFor(input, b, k, r));
  }
  return best;
}

/** The bound for limited resource k (index r of the model's resources), in $/h; 0 when it does not apply. */
function boundFor(input: ProvisionInput, b: BoundGroups, k: string, r: number): number {
  const used = [...new Set(b.classes.flatMap((c) => c.options))];
  const templates = [...new Set(used.map((o) => b.options[o]!.template))].sort((x, y) => x - y);
  const left = templates.map((t) => limitLeft(input, b.pools[t]!, k));
  if (!used.length || left.some((l) => !(l < Infinity))) return 0;
  const demand = b.classes.reduce((s, c) => s + c.count * c.requests[r]!, 0);
  const step = b.classes.reduce((g, c) => (c.requests[r]! > 0 ? gcd(g, c.requests[r]!) : g), 0);
  const all = left.reduce((s, l) => s + Math.max(0, l), 0);
  if (demand <= 0 || !Number.isInteger(step) || step <= 0 || all < demand) return 0;
  const raw = used.map((o) => {
    const opt = b.options[o]!;
    const capK = opt.capacity[k] ?? 0;
    const use = Math.floor(opt.cap[r]! / step) * step;
    return { t: templates.indexOf(opt.template), capK, waste: capK - use, price: opt.price };
  });
  if (raw.some((x) => !Number.isInteger(x.capK) || x.capK <= 0 || x.waste < 0)) return 0;
  // Units: the limit counts capacities in multiples of u, waste in multiples of v.
  const u = raw.reduce((g, x) => gcd(g, x.capK), 0);
  const v = raw.reduce((g, x) => gcd(g, x.waste), u);
  const slack = Math.floor((all - demand) / v);
  const capSlack = Math.floor((all - demand) / u);
  const tables = templates.map((_, i) => {
    const shapes = cheapestShapes(
      raw.filter((x) => x.t === i).map((x) => ({ ...x, cap: x.capK / u, waste: x.waste / v })),
    );
    return poolTable(shapes, Math.floor(Math.max(0, left[i]!) / u), slack, capSlack);
  });
  if (tables.some((t) => t === undefined)) return 0;
  // What the limits leave beyond the demand, less what flooring each limit to whole units of u lost.
  const floored = templates.reduce((s, _, i) => s + Math.floor(Math.max(0, left[i]!) / u) * u, 0);
  if (floored < demand) return 0;
  return combine(tables as PoolTable[], floored - demand, u, v) / 1e6;
}

/** Per (capacity, waste) the cheapest option: the others never help. */
function cheapestShapes(xs: readonly Shape[]): Shape[] {
  const by = new Map<string, Shape>();
  for (const x of xs) {
    const key = `${x.cap}/${x.waste}`;
    const old = by.get(key);
    if (!old || x.price < old.price) by.set(key, x);
  }
  return [...by.values()].sort((a, b) => a.cap - b.cap || a.waste - b.waste || a.price - b.price);
}

/** Least price of whole nodes per (capacity units in [from, to], waste units <= slack) of one NodePool. */
interface PoolTable {
  readonly from: number;
  readonly to: number;
  readonly slack: number;
  /** cost[(c - from) * (slack + 1) + w]; Infinity where no set of nodes has that capacity and waste. */
  readonly cost: Float64Array;
}

/**
 * Unbounded knapsack over the NodePool's shapes: least price of nodes with capacity exactly c units and waste exactly
 * w units, for c up to `to` (the limit) and w up to `slack`. Only c within `capSlack` units of the limit is kept: a
 * plan's NodePool takes at least its limit less what the limits leave beyond the requests (the other NodePools
 * cannot make up more).
 */
function poolTable(shapes: readonly Shape[], to: number, slack: number, capSlack: number): PoolTable | undefined {
  const W = slack + 1;
  const cells = (to + 1) * W;
  if (cells > MAX_CELLS || cells * Math.max(1, shapes.length) > MAX_WORK) return undefined;
  const dp = new Float64Array(cells).fill(Infinity);
  dp[0] = 0;
  for (let c = 1; c <= to; c++) {
    for (const s of shapes) {
      if (s.cap > c) break;
      const base = (c - s.cap) * W;
      for (let w = s.waste; w < W; w++) {
        const prev = dp[base + w - s.waste]!;
        if (prev + s.price < dp[c * W + w]!) dp[c * W + w] = prev + s.price;
      }
    }
  }
  const from = Math.max(0, to - capSlack);
  return { from, to, slack, cost: dp.slice(from * W) };
}

/**
 * Least total price over the NodePools' tables with Σ (capacity · u - waste · v) >= demand, micros. Each NodePool's
 * shortfall below its limit, (to - c) · u + w · v, counts in units of z = gcd(u, v); the shortfalls of all NodePools
 * may add up to at most what the limits leave beyond the demand, so the tables combine one at a time over it.
 */
function combine(tables: readonly PoolTable[], leftOver: number, u: number, v: number): number {
  const z = gcd(u, v);
  const E = Math.floor(leftOver / z);
  if ((E + 1) * (E + 1) * tables.length > MAX_WORK) return 0;
  let state = new Float64Array(E + 1).fill(Infinity);
  state[0] = 0;
  for (const t of tables) {
    const W = t.slack + 1;
    const own = new Float64Array(E + 1).fill(Infinity);
    for (let c = t.from; c <= t.to; c++)
      for (let w = 0; w < W; w++) {
        const e = ((t.to - c) * u + w * v) / z;
        const cost = t.cost[(c - t.from) * W + w]!;
        if (e <= E && cost < own[e]!) own[e] = cost;
      }
    const next = new Float64Array(E + 1).fill(Infinity);
    for (let a = 0; a <= E; a++) {
      if (state[a] === Infinity) continue;
      for (let e = 0; a + e <= E; e++) if (state[a]! + own[e]! < next[a + e]!) next[a + e] = state[a]! + own[e]!;
    }
    state = next;
  }
  const best = Math.min(...state);
  return best === Infinity ? 0 : best;
}
