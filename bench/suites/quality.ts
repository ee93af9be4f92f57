// `npm run bench -- quality`: cost of plans against the lower bound (engine/bound) on named scenarios: ours (the wasm
// solver with its improvement phase), Karpenter's algorithm (the reference solver, exact; priced as its launches
// would pay, as ours is), and the best bound no plan can beat (the resource LP or the integer-aware pattern bound:
// lowerBoundKind says which). The bound is of the pods the plan places, so a scenario whose limits leave pods out
// compares what is placed; where ours places more pods than Karpenter's (room its wide NodeClaims used up of the
// limits, docs/solver.md), Karpenter's ratio is against the bound of the pods it places (karpenterLowerBound).
// ratio = costPerHour / lowerBound.
import {
  asLaunched,
  createEngine,
  snapshotOf,
  type Engine,
  type LowerBound,
  type ProvisionInput,
  type ProvisionPlan,
} from '../../engine/index.ts';
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
      const refBound = await boundOfKarpenters(engine, input, karpenter, left.size);
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
        ratio: ratioOf(plan.costPerHour, bound.perHour),
        ...(refBound ? { karpenterLowerBound: refBound.perHour } : {}),
        karpenterRatio: ratioOf(karpenter.costPerHour, (refBound ?? bound).perHour),
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

const ratioOf = (cost: number, bound: number): number | undefined => (bound > 0 ? cost / bound : undefined);

/** The bound of the pods Karpenter's plan places, when it leaves more out than ours (else undefined). */
async function boundOfKarpenters(
  engine: Engine,
  input: ProvisionInput,
  karpenter: ProvisionPlan,
  oursLeft: number,
): Promise<LowerBound | undefined> {
  if (karpenter.unschedulable.length === oursLeft) return undefined;
  const left = new Set(karpenter.unschedulable.map((e) => e.uid));
  return engine.lowerBound(
    snapshotOf(input),
    input.pods.filter((p) => !left.has(p.uid)),
  );
}
