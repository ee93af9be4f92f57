// `npm run bench -- quality`: cost of plans against the LP lower bound (engine/bound) on named scenarios:
// ours (the wasm solver with its improvement phase), Karpenter's algorithm (the reference solver, exact),
// and the bound no plan can beat. ratio = costPerHour / lowerBound.
import { createEngine, snapshotOf } from '../../engine/index.ts';
import { solveReference, WasmSolver } from '../../engine/local.ts';
import type { BenchRow } from '../report.ts';
import { QUALITY_SCENARIOS } from '../scenarios/quality.ts';
import type { SuiteOptions } from './solver.ts';

export async function run(opts: SuiteOptions): Promise<BenchRow[]> {
  const engine = createEngine({ threads: 1 });
  const ours = new WasmSolver({ improveMs: 2000 });
  const rows: BenchRow[] = [];
  try {
    for (const s of QUALITY_SCENARIOS) {
      if (opts.quick && !s.quick) continue;
      opts.progress(`quality: ${s.name}`);
      const input = s.build();
      const t0 = performance.now();
      const plan = ours.solve(input);
      const ms = performance.now() - t0;
      const karpenter = solveReference(input);
      const bound = await engine.lowerBound(snapshotOf(input), input.pods);
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
        ratio: bound.perHour > 0 ? plan.costPerHour / bound.perHour : undefined,
        karpenterRatio: bound.perHour > 0 ? karpenter.costPerHour / bound.perHour : undefined,
        unschedulable: plan.unschedulable.length,
        karpenterUnschedulable: karpenter.unschedulable.length,
        ms,
      });
    }
  } finally {
    await engine.close();
  }
  return rows;
}
