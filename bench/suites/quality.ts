// `npm run bench -- quality`: cost of plans against the lower bound (engine/bound) on named scenarios: ours (the wasm
// solver with its improvement phase), Karpenter's algorithm (the reference solver, exact; priced as its launches
// would pay, as ours is), and the best bound no plan can beat (the resource LP or the integer-aware pattern bound:
// lowerBoundKind says which). The bound is of the pods the plans place (both place the same ones), so a scenario
// whose limits leave pods out compares what is placed. ratio = costPerHour / lowerBound.
import { asLaunched, createEngine, snapshotOf } from '../../engine/index.ts';
import { solveReference, WasmSolver } from '../../engine/local.ts';
import type { BenchRow } from '../report.ts';
import { QUALITY_SCENARIOS } from '../scenarios/quality.ts';
import type { SuiteOptions } from './solver.ts';

export async function run(opts: SuiteOptions): Promise<BenchRow[]> {
  const engine = createEngine({ threads: 1 });
  const ours = new WasmSolver();
  const rows: BenchRow[] = [];
  try {
    for (const s of QUALITY_SCENARIOS) {
      if (opts.quick && !s.quick) continue;
      opts.progress(`quality: ${s.name}`);
      const input = s.build();
      const t0 = performance.now();
      const plan = ours.solve(input);
      const ms = performance.now() - t0;
      const karpenter = asLaunched(input, solveReference(input));
      const left = new Set(plan.unschedulable.map((e) => e.uid));
      const placed = input.pods.filter((p) => !left.has(p.uid));
      const bound = await engine.lowerBound(snapshotOf(input), placed);
      rows.push({
        suite: 'quality',
        scenario: s.name,
        engine: 'wasm-release',
        pods: input.pods.length,
        nodes: plan.newNodeClaims.length,
        karpenterNodes: karpenter.newNodeClaims.length,
        costPerHour: plan.costPerHour,
        karpenterCostPerHour: karpenter.costPerHour,
        lowerBound: bound.perHour,
        lowerBoundKind: bound.kind,
        lpBound: bound.lp,
        ratio: bound.perHour > 0 ? plan.costPerHour / bound.perHour : undefined,
        karpenterRatio: bound.perHour > 0 ? karpenter.costPerHour / bound.perHour : undefined,
        unschedulable: plan.unschedulable.length,
        karpenterUnschedulable: karpenter.unschedulable.length,
        ms,
        ...(plan.truncated ? { truncated: true } : {}),
      });
    }
  } finally {
    await engine.close();
  }
  return rows;
}
