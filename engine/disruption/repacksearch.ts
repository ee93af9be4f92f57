// Where the global repack looks for a cheaper layout. Removing every node and re-packing all pods from
// scratch throws away the free room of well-packed nodes, so the search removes the most wasteful nodes
// first: candidates are ordered by wasted dollars (price × the unused share of their scarcer resource) and
// the question becomes "how many of the most wasteful nodes should go?". Savings as a function of that
// count rise while removed pods still fit into the others' free room and fall once good nodes are torn
// down, so a coarse sweep of prefix lengths and a refinement around the best one find it in a handful of
// solves; a length is solved only where a concave curve through those tried (and 0 at length 0) could gain
// there. Then two variations of the best prefix: instance types capped at half (and a quarter) of the
// dearest node's price, which makes the greedy packer split work over smaller, cheaper nodes, and the
// prefix reduced to the nodes that were part of a saving unit; each only where what it could gain is worth
// a solve (repackcap.ts bounds what a cap could save).
import type { Snapshot } from '../domain/types.ts';
import { CPU, MEMORY } from '../domain/resources.ts';
import { capGain } from './repackcap.ts';
import { isActive } from '../scheduling/pods.ts';
import { bySavingsRatio } from './candidates.ts';
import type { Evaluation, Search } from './repackeval.ts';
import type { Candidate } from './types.ts';

/** The unused share of the node's scarcer resource (cpu or memory), by requests of its active pods. */
function idleShare(c: Candidate): number {
  let cpu = 0;
  let mem = 0;
  for (const p of c.node.pods) {
    if (!isActive(p)) continue;
    cpu += p.requests[CPU] ?? 0;
    mem += p.requests[MEMORY] ?? 0;
  }
  const a = c.node.allocatable;
  const used = Math.max((a[CPU] ?? 0) > 0 ? cpu / a[CPU]! : 0, (a[MEMORY] ?? 0) > 0 ? mem / a[MEMORY]! : 0);
  return Math.max(0, 1 - used);
}

/** Most wasted dollars first (price × idle share); ties by savings ratio. */
export function byWaste(cs: readonly Candidate[]): Candidate[] {
  const ratio = new Map<Candidate, number>();
  bySavingsRatio(cs).forEach((c, i) => ratio.set(c, i));
  return cs
    .map((c) => ({ c, w: c.price * idleShare(c), r: ratio.get(c)! }))
    .sort((a, b) => b.w - a.w || a.r - b.r)
    .map((x) => x.c);
}

const smallSavings = (e: Evaluation): number => e.small.reduce((a, u) => a + u.savings, 0);

/**
 * The better of two layouts: more savings, then less disruption, then (for the explanations: neither is
 * carried out when both save nothing) more saved by units below the minimum share.
 */
function better(a: Evaluation | undefined, b: Evaluation | undefined): Evaluation | undefined {
  if (!a) return b;
  if (!b) return a;
  if (b.savings > a.savings + 1e-9) return b;
  if (Math.abs(b.savings - a.savings) > 1e-9) return a;
  if (b.disruption !== a.disruption) return b.disruption < a.disruption ? b : a;
  return smallSavings(b) > smallSavings(a) + 1e-9 ? b : a;
}

type Point = { readonly k: number; readonly v: number | undefined };

/**
 * The most a concave savings curve through the tried points could save strictly between point i and its
 * neighbour on `side`: below the secants of the two adjacent pairs, extended into the gap. A missing secant
 * (no point beyond, or a length whose pods could not move) bounds nothing; with neither, Infinity.
 */
export function concaveBound(pts: readonly Point[], i: number, side: -1 | 1): number {
  const line = (a: Point | undefined, b: Point | undefined) =>
    a?.v === undefined || b?.v === undefined ? undefined : { a, slope: (b.v - a.v) / (b.k - a.k) };
  const at = (l: ReturnType<typeof line>, k: number) => (l ? l.a.v! + l.slope * (k - l.a.k) : Infinity);
  const near = pts[i + side]!;
  const outer = line(pts[i + 2 * side], near);
  const inner = line(pts[i], pts[i - side]);
  // The minimum of the two lines peaks at an end of the gap or where they cross.
  const ends = [pts[i]!.k, near.k];
  if (outer && inner && outer.slope !== inner.slope) {
    const x =
      (inner.a.v! - outer.a.v! + outer.slope * outer.a.k - inner.slope * inner.a.k) / (outer.slope - inner.slope);
    if (x > Math.min(...ends) && x < Math.max(...ends)) ends.push(x);
  }
  return Math.max(...ends.map((k) => Math.min(at(outer, k), at(inner, k))));
}

/** The most a concave curve through the points (sorted by length) could reach at k beyond the last of them. */
export function concaveBeyond(pts: readonly Point[], k: number): number {
  const a = pts[pts.length - 2];
  const b = pts[pts.length - 1];
  if (a?.v === undefined || b?.v === undefined) return Infinity;
  return b.v + ((b.v - a.v) / (b.k - a.k)) * (k - b.k);
}

/**
 * A further solve is worth it only where it could beat the best layout found so far by 2%: each one re-solves
 * the pods of thousands of nodes, and the packer's own spread between neighbouring lengths is of that order
 * (measured at 5,227 candidates: 1,149.39, 1,154.66 and 1,151.77 $/h saved at 3,268, 3,921 and 4,574; at 1%
 * the search spent two more solves there to gain nothing).
 */
const MIN_GAIN = 1.02;

/** The best layout the search finds before `late()`; the first evaluation always runs. */
export async function searchLayout(
  s: Snapshot,
  ordered: readonly Candidate[],
  search: Search,
  late: () => boolean,
): Promise<Evaluation | undefined> {
  const p = new PrefixSearch(s, ordered, search, late);
  await p.coarse();
  await p.halveWhileRising();
  await p.lastLook();
  await p.refine();
  // Nothing saved: the caps still look at the best-evaluated prefix (one big node may become two small ones).
  if (!p.bestAnyK) return p.best;
  const prefix = ordered.slice(0, p.bestK || p.bestAnyK);
  await p.caps(prefix);
  await p.reduced(prefix);
  return p.best;
}

/** The state of one search over prefix lengths of the ordered candidates, and its steps. */
class PrefixSearch {
  /**
   * What each tried length saved (undefined: its pods could not move). Only the savings: an evaluation holds its
   * simulation (every simulated pod, the plan), and keeping each one alive to the end of the search made them
   * survive into the old generation, where collecting them cost more than any other step of a solve.
   */
  private readonly tried = new Map<number, number | undefined>();
  best: Evaluation | undefined;
  /** The best length with a saving unit, and the best-evaluated length at all (0: none). */
  bestK = 0;
  bestAnyK = 0;
  private readonly n: number;

  constructor(
    private readonly s: Snapshot,
    private readonly ordered: readonly Candidate[],
    private readonly search: Search,
    private readonly late: () => boolean,
  ) {
    this.n = ordered.length;
  }

  private saved(k: number): number {
    return this.tried.get(k) ?? 0;
  }

  /** The tried lengths as points of the savings curve, by length. */
  private points(): Point[] {
    return [...this.tried.keys()].sort((a, b) => a - b).map((k) => ({ k, v: this.tried.get(k) }));
  }

  private async tryPrefix(k: number): Promise<void> {
    if (k < 1 || k > this.n || this.tried.has(k) || (this.tried.size > 0 && this.late())) return;
    const ev = await this.search.evaluateMovable(this.s, this.ordered.slice(0, k));
    this.tried.set(k, ev?.savings);
    const b = better(this.best, ev);
    if (b !== this.best) {
      this.best = b;
      this.bestAnyK = k;
      // An evaluation without a saving unit is kept for its explanations, but is no length to refine around.
      if (b?.units.length) this.bestK = k;
    }
  }

  /**
   * Half, then the full set while a concave curve through 0 (nothing saved at length 0) and half could gain
   * there, then a quarter unless the full set saved more than half did (a concave curve rising from half to
   * the full set is lower everywhere left of half). Refinement fills the gaps.
   */
  async coarse(): Promise<void> {
    const n = this.n;
    const half = Math.max(1, Math.round(n / 2));
    await this.tryPrefix(half);
    if (concaveBeyond([{ k: 0, v: 0 }, ...this.points()], n) > this.saved(this.bestK) * MIN_GAIN)
      await this.tryPrefix(n);
    if (!(this.tried.has(n) && this.saved(n) > this.saved(half))) await this.tryPrefix(Math.max(1, Math.round(n / 4)));
  }

  /** Savings still rising towards short prefixes: keep halving while it pays. */
  async halveWhileRising(): Promise<void> {
    const quarter = Math.round(this.n / 4);
    for (
      let k = Math.round(this.n / 8);
      k >= 1 && this.bestK > 0 && this.bestK <= quarter && this.saved(this.bestK) > 0;
      k = Math.floor(k / 2)
    ) {
      const before = this.bestK;
      await this.tryPrefix(k);
      if (this.bestK === before) break;
    }
  }

  /** Nothing saved anywhere: a last look at the few most wasteful nodes alone. */
  async lastLook(): Promise<void> {
    if (!this.best?.units.length) for (const k of [Math.round(this.n / 8), 1]) await this.tryPrefix(Math.max(1, k));
  }

  /**
   * Refines between the best length and its nearest tried neighbours while it still gains MIN_GAIN, on the
   * sides where a savings curve that rises and then falls (concave) through the tried lengths could.
   */
  async refine(): Promise<void> {
    for (let round = 0; round < 4 && this.bestK && !this.late(); round++) {
      const pts = this.points();
      const ks = pts.map((x) => x.k);
      const i = ks.indexOf(this.bestK);
      const before = this.saved(this.bestK);
      for (const side of [-1, 1] as const) {
        const other = ks[i + side];
        if (other === undefined || Math.abs(other - this.bestK) <= 1 || concaveBound(pts, i, side) <= before * MIN_GAIN)
          continue;
        await this.tryPrefix(Math.round((other + this.bestK) / 2));
      }
      if (this.saved(this.bestK) <= before * MIN_GAIN) break;
    }
  }

  /**
   * The prefix with instance types capped at half (then a quarter) of its dearest node's price. A cap only
   * changes the NodeClaims dearer than it: worth a solve only while what it could save on them (capGain)
   * exceeds MIN_GAIN of the best saving and the minimum share a unit must save of their price; the tighter
   * cap only after the looser one gained MIN_GAIN.
   */
  async caps(prefix: readonly Candidate[]): Promise<void> {
    const top = Math.max(...prefix.map((c) => c.price));
    for (const cap of [top / 2, top / 4]) {
      const dear = capGain(this.s, this.best?.sim.plan.newNodeClaims ?? [], cap, this.search.r.caches);
      if (
        this.late() ||
        dear.gain <=
          Math.max((this.best?.savings ?? 0) * (MIN_GAIN - 1), this.search.r.repackMinSavingsShare * dear.price)
      )
        break;
      const before = this.best;
      this.best = better(this.best, await this.search.evaluateMovable(this.s, prefix, cap));
      if (this.best === before || (this.best?.savings ?? 0) <= (before?.savings ?? 0) * MIN_GAIN) break;
    }
  }

  /**
   * The prefix reduced to the nodes of saving units: the others' free room becomes a destination, which saves
   * at most what they leave idle, so it is worth a solve only when that could gain MIN_GAIN.
   */
  async reduced(prefix: readonly Candidate[]): Promise<void> {
    const chosen = this.best;
    if (!chosen || this.late()) return;
    const kept = chosen.units.flatMap((u) => u.candidates);
    const inUnit = new Set(kept);
    const idle = prefix.reduce((a, c) => a + (inUnit.has(c) ? 0 : c.price * idleShare(c)), 0);
    if (kept.length && kept.length < prefix.length && idle > chosen.savings * (MIN_GAIN - 1))
      this.best = better(this.best, await this.search.evaluateMovable(this.s, byWaste(kept)));
  }
}
