// `npm run bench -- packing [--quick] [--sizes=N,N]`: vector bin packing instances (bench/scenarios/packing.ts) with a
// one-type catalog at $1/h, so a plan's cost is its number of bins. Per family: the bins of our plans (the wasm
// solver with its improvement phase) and of Karpenter's algorithm (the reference solver) over the best bound proven
// for each instance: the largest of the pattern bound (engine/bound, rounded to whole bins), the resource bound
// (ceil of the total size over the capacity, per dimension) and, for triplets, the optimum their construction fixes.
// Budgets are work, so bins and ratios do not depend on the machine's load; only ms does. Both are larger than the
// defaults (an offline packing job can afford seconds; a controller's provisioning decision keeps the default).
import { inThreadLp, lowerBound, solveReference, WasmSolver } from '../../engine/local.ts';
import type { BenchRow } from '../report.ts';
import { packingInput, packingInstances, type PackingInstance } from '../scenarios/packing.ts';
import type { SuiteOptions } from './solver.ts';

/** The improvement phase's work budget here (the default, DEFAULT_IMPROVE_WORK, is a quarter of it). */
export const PACKING_IMPROVE_WORK = 4e9;
/** The pattern bound's work budget here (eight times DEFAULT_BOUND_WORK). */
export const PACKING_BOUND_WORK = 4e9;

interface Result {
  readonly inst: PackingInstance;
  readonly ours: number;
  readonly karpenter: number;
  readonly bound: number;
  readonly boundKind: string;
  readonly unplaced: number;
  readonly ms: number;
}

/** ceil(total / capacity) in the fullest dimension: no packing uses fewer bins. */
function resourceBound(inst: PackingInstance): number {
  let best = 0;
  for (let d = 0; d < inst.dims; d++)
    best = Math.max(best, Math.ceil(inst.items.reduce((s, it) => s + it[d]!, 0) / inst.capacity - 1e-9));
  return best;
}

async function measure(inst: PackingInstance, ours: WasmSolver): Promise<Result> {
  const input = packingInput(inst);
  const t0 = performance.now();
  const plan = ours.solve(input);
  const ms = performance.now() - t0;
  const ref = solveReference(input);
  const b = await lowerBound(input, inThreadLp, { patternWork: PACKING_BOUND_WORK });
  const candidates: Array<[number, string]> = [
    [Math.ceil(b.perHour - 1e-6), b.kind],
    [resourceBound(inst), 'resources'],
  ];
  if (inst.optimum !== undefined) candidates.push([inst.optimum, 'construction']);
  const [bound, boundKind] = candidates.reduce((x, y) => (y[0] > x[0] ? y : x));
  const bins = (p: { newNodeClaims: readonly unknown[] }) => p.newNodeClaims.length;
  return {
    inst,
    ours: bins(plan),
    karpenter: bins(ref),
    bound,
    boundKind,
    unplaced: plan.unschedulable.length + ref.unschedulable.length,
    ms,
  };
}

const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);

/** One row per family (and one for all): mean and worst ratio of bins to the bound, ours and Karpenter's. */
function summarise(scenario: string, rs: readonly Result[]): BenchRow {
  const ratio = (r: Result, v: number) => v / r.bound;
  const sorted = [...rs.map((r) => r.ms)].sort((a, b) => a - b);
  return {
    suite: 'packing',
    scenario,
    engine: 'wasm-release',
    instances: rs.length,
    items: rs.reduce((s, r) => s + r.inst.items.length, 0),
    bins: rs.reduce((s, r) => s + r.ours, 0),
    karpenterBins: rs.reduce((s, r) => s + r.karpenter, 0),
    boundBins: rs.reduce((s, r) => s + r.bound, 0),
    ratio: mean(rs.map((r) => ratio(r, r.ours))),
    worstRatio: Math.max(...rs.map((r) => ratio(r, r.ours))),
    karpenterRatio: mean(rs.map((r) => ratio(r, r.karpenter))),
    provedOptimal: rs.filter((r) => r.ours === r.bound).length,
    worseThanKarpenter: rs.filter((r) => r.ours > r.karpenter).length,
    unplaced: rs.reduce((s, r) => s + r.unplaced, 0),
    ms: sorted[Math.floor(sorted.length / 2)] ?? 0,
  };
}

export async function run(opts: SuiteOptions & { sizes?: readonly number[] }): Promise<BenchRow[]> {
  const sizes = opts.sizes ?? (opts.quick ? [60] : [60, 120, 240]);
  const instances = packingInstances(sizes, opts.quick ? 2 : 4);
  const ours = new WasmSolver({ improveWork: PACKING_IMPROVE_WORK });
  const results: Result[] = [];
  for (const inst of instances) {
    opts.progress(`packing: ${inst.name}`);
    results.push(await measure(inst, ours));
  }
  const families = [...new Set(results.map((r) => r.inst.family))];
  return [
    ...families.map((f) =>
      summarise(
        f,
        results.filter((r) => r.inst.family === f),
      ),
    ),
    summarise('all', results),
  ];
}
