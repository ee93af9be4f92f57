// The integer-aware lower bound (docs/lower-bound.md): column generation over node patterns in the solver module
// (solver-as/assembly/boundcg.ts), on the bound model's options and pod classes. Farley's bound on the configuration
// LP is valid whenever the generation stops; when every option costs the same, the number of nodes is a whole
// number, so the bound rounds up to a whole number of nodes (the Gilmore-Gomory argument for cutting stock).
import * as A from '../../solver-as/abi.ts';
import { solverModule } from '../solver/module.ts';
import { instantiateSolver, type SolverExports } from '../solver/wasm.ts';
import type { BoundGroups } from './model.ts';

/** Default work budget of the bound (units of solver-as/assembly/budget.ts). */
const DEFAULT_BOUND_WORK = 5e8;

export interface PatternBound {
  /** US dollars per hour; no plan placing these pods on new nodes costs less. */
  readonly perHour: number;
  /** 'optimal': the configuration LP was solved (the bound is within 0.05% of it); 'stopped': the budget ended it. */
  readonly status: 'optimal' | 'stopped' | 'failed' | 'empty';
  /** Rounded up to whole nodes (every option costs the same). */
  readonly rounded: boolean;
  readonly work: number;
  readonly rounds: number;
}

type BoundExports = SolverExports & { boundPatterns(input: number): number };

/** The block solver-as/abi.ts describes (BH_*), over the options some class uses. */
function encode(b: BoundGroups, work: number): { block: Uint8Array; prices: number[] } {
  const used = [...new Set(b.classes.flatMap((c) => c.options))].sort((x, y) => x - y);
  const col = new Map(used.map((o, i) => [o, i]));
  const R = b.resources.length;
  const C = b.classes.length;
  const X = used.length;
  const at = { reqs: A.BH_WORDS * 4 };
  const caps = at.reqs + C * R * 8;
  const prices = caps + X * R * 8;
  const counts = prices + X * 8;
  const allowed = counts + C * 4;
  const size = allowed + C * X;
  const buf = new ArrayBuffer(Math.ceil(size / 8) * 8);
  const h = new Int32Array(buf, 0, A.BH_WORDS);
  h.set([
    A.BOUND_MAGIC,
    A.ABI_VERSION,
    R,
    C,
    X,
    Math.min(0x7fffffff, Math.ceil(work / 1000)),
    at.reqs,
    caps,
    prices,
    counts,
    allowed,
  ]);
  const f = new Float64Array(buf);
  b.classes.forEach((c, i) => f.set(c.requests, at.reqs / 8 + i * R));
  used.forEach((o, i) => {
    f.set(b.options[o]!.cap, caps / 8 + i * R);
    f[prices / 8 + i] = b.options[o]!.price;
  });
  const n = new Int32Array(buf, counts, C);
  const a = new Uint8Array(buf, allowed, C * X);
  b.classes.forEach((c, i) => {
    n[i] = c.count;
    for (const o of c.options) a[i * X + col.get(o)!] = 1;
  });
  return { block: new Uint8Array(buf), prices: used.map((o) => b.options[o]!.price) };
}

function run(x: BoundExports, block: Uint8Array): Float64Array {
  x.reset();
  const at = x.alloc(block.byteLength);
  new Uint8Array(x.memory.buffer, at, block.byteLength).set(block);
  const r = x.boundPatterns(at);
  return new Float64Array(x.memory.buffer.slice(r, r + A.BR_WORDS * 8));
}

/**
 * Classes that share no option, directly or through other classes, in separate components: no node can hold pods of
 * two components, so the bound of the whole is the sum of theirs, each solved (and rounded) on its own.
 */
function components(b: BoundGroups): BoundGroups[] {
  const parent = b.classes.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  const byOption = new Map<number, number>();
  b.classes.forEach((c, i) => {
    for (const o of c.options) {
      const j = byOption.get(o);
      if (j === undefined) byOption.set(o, i);
      else parent[find(i)] = find(j);
    }
  });
  const groups = new Map<number, BoundGroups['classes'][number][]>();
  b.classes.forEach((c, i) => {
    const r = find(i);
    const g = groups.get(r);
    if (g) g.push(c);
    else groups.set(r, [c]);
  });
  return [...groups.values()].map((classes) => ({ ...b, classes }));
}

let instance: BoundExports | undefined;

/**
 * This thread's instance of the solver module for the bound, made on first use and reused: every run starts by
 * resetting it, and a fresh instance per component would allocate (and have the kernel zero) its memory again.
 */
function boundInstance(): BoundExports {
  return (instance ??= instantiateSolver(solverModule('release')) as BoundExports);
}

/** One component's bound within `work` units. */
function componentBound(b: BoundGroups, work: number): PatternBound {
  const { block, prices } = encode(b, work);
  const r = run(boundInstance(), block);
  const code = r[A.BR_STATUS]!;
  const status: PatternBound['status'] =
    code === A.BS_OPTIMAL ? 'optimal' : code === A.BS_STOPPED ? 'stopped' : 'failed';
  let micros = status === 'failed' ? 0 : r[A.BR_BOUND]!;
  const same = prices.every((p) => p === prices[0]);
  // Whole nodes of one price: the plan costs a whole multiple of it (the small margin absorbs rounding error).
  const rounded = same && prices[0]! > 0 && micros > 0;
  if (rounded) micros = prices[0]! * Math.ceil(micros / prices[0]! - 1e-6);
  return { perHour: micros / 1e6, status, rounded, work: r[A.BR_WORK]!, rounds: r[A.BR_ROUNDS]! };
}

const RANK: Record<PatternBound['status'], number> = { empty: 0, optimal: 1, stopped: 2, failed: 3 };

/**
 * The pattern bound of the model's pods (its unplaceable pods left out, as the LP bound leaves them): the sum over
 * the components, each given its pods' share of the work budget. A failed component adds nothing (the rest stays a
 * valid bound); the status is the worst of theirs.
 */
export function patternBound(b: BoundGroups, opts: { work?: number } = {}): PatternBound {
  if (b.classes.length === 0) return { perHour: 0, status: 'empty', rounded: false, work: 0, rounds: 0 };
  const total = opts.work ?? DEFAULT_BOUND_WORK;
  const pods = (g: BoundGroups) => g.classes.reduce((s, c) => s + c.count, 0);
  const all = pods(b);
  let out: PatternBound = { perHour: 0, status: 'empty', rounded: false, work: 0, rounds: 0 };
  for (const part of components(b)) {
    const r = componentBound(part, (total * pods(part)) / all);
    out = {
      perHour: out.perHour + r.perHour,
      status: RANK[r.status] > RANK[out.status] ? r.status : out.status,
      rounded: out.rounded || r.rounded,
      work: out.work + r.work,
      rounds: Math.max(out.rounds, r.rounds),
    };
  }
  return out;
}
