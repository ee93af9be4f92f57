// `npm run bench -- solver`: generic pod mixes of 1,000, 10,000 and 100,000 pods on the real catalog under the
// guide's default NodePool; engines: the wasm solver (release, with and without its improvement phase), the
// debug build, and the TypeScript reference (Karpenter's algorithm). Each timing is one full call: encode,
// solve, decode, in the calling thread (one core). The reference runs where it finishes in reasonable time:
// sampled at 1,000 pods, run once at 10,000, and not run at 100,000 (it grows faster than linearly with the
// pods, so one call there would take longer than the rest of the suite); --quick runs it at 1,000 only.
import type { ProvisionInput, ProvisionPlan } from '../../engine/index.ts';
import { solveReference, WasmSolver } from '../../engine/local.ts';
import { measure } from '../measure.ts';
import type { BenchRow } from '../report.ts';
import { genericInput } from '../scenarios/generic.ts';

export interface SuiteOptions {
  readonly json: boolean;
  readonly quick: boolean;
  readonly progress: (msg: string) => void;
}

interface Engine {
  readonly name: string;
  solve(input: ProvisionInput): ProvisionPlan;
  /** Sampling budget for this engine (slow engines get fewer samples). */
  readonly timeMs: (pods: number) => number;
  readonly skip?: (pods: number, quick: boolean) => boolean;
}

/** The largest mix the reference is run on (once) in a full run. */
export const REFERENCE_MAX_PODS = 10_000;

export function engines(): Engine[] {
  // The improvement phase's budget is work (its plans do not depend on the machine); its wall-clock safety net stays
  // at the default, far above what that work takes, so a loaded machine does not cut the phase short.
  const release = new WasmSolver({ build: 'release' });
  const exact = new WasmSolver({ build: 'release', improve: false });
  const debug = new WasmSolver({ build: 'debug', improve: false });
  return [
    { name: 'wasm-release', solve: (i) => release.solve(i), timeMs: () => 3000 },
    { name: 'wasm-release-exact', solve: (i) => exact.solve(i), timeMs: () => 3000 },
    { name: 'wasm-debug', solve: (i) => debug.solve(i), timeMs: () => 2000, skip: (n, q) => q && n > 10_000 },
    {
      name: 'reference',
      solve: (i) => solveReference(i),
      timeMs: () => 0,
      skip: (n, q) => n > (q ? 1_000 : REFERENCE_MAX_PODS),
    },
  ];
}

export async function run(opts: SuiteOptions): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const sizes = opts.quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
  for (const n of sizes) {
    const input = genericInput(n);
    for (const e of engines()) {
      if (e.skip?.(n, opts.quick)) continue;
      opts.progress(`solver: ${n} pods, ${e.name}`);
      let plan: ProvisionPlan | undefined;
      const slow = e.name === 'reference' && n >= 10_000;
      const t = await measure(
        `${e.name}-${n}`,
        () => {
          plan = e.solve(input);
        },
        slow ? { iterations: 1, timeMs: 0, warmup: 0 } : { timeMs: e.timeMs(n) },
      );
      rows.push({
        suite: 'solver',
        scenario: `generic-${n}`,
        engine: e.name,
        pods: n,
        nodes: plan!.newNodeClaims.length,
        costPerHour: plan!.costPerHour,
        ms: t.ms,
        madMs: t.madMs,
        samples: t.samples,
        podsPerSec: Math.round((n / t.ms) * 1000),
        unschedulable: plan!.unschedulable.length,
      });
    }
  }
  return rows;
}
