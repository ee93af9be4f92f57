// `npm run bench -- pool`: what-if jobs on the engine's workers, 64 seeded scenarios (bench/scenarios/whatif.ts:
// a fragmented cluster plus pending pods, consolidate mode, Karpenter's exact algorithm) on 1 worker and on 2.
// Each row is the wall time of the whole batch after a warm-up that starts every worker; `speedup` is
// 1-worker time over this row's time.
import { createEngine, type Engine } from '../../engine/index.ts';
import type { BenchRow } from '../report.ts';
import { runScenario, type ScenarioInput, type ScenarioResult } from '../scenarios/whatif.ts';
import type { SuiteOptions } from './solver.ts';

const REPEATS = 3;

async function batch(engine: Engine, inputs: readonly ScenarioInput[]): Promise<ScenarioResult[]> {
  return Promise.all(inputs.map((i) => runScenario(engine, i)));
}

export async function run(opts: SuiteOptions): Promise<BenchRow[]> {
  const count = opts.quick ? 16 : 64;
  const inputs: ScenarioInput[] = Array.from({ length: count }, (_, i) => ({ seed: i + 1, nodes: 6, pending: 6 }));
  const rows: BenchRow[] = [];
  let base: number | undefined;
  let reference: string | undefined;
  for (const threads of [1, 2]) {
    const pool = createEngine({ threads });
    try {
      opts.progress(`pool: ${threads} worker(s), warm-up`);
      await batch(pool, inputs.slice(0, threads * 2));
      const times: number[] = [];
      let results: ScenarioResult[] = [];
      for (let r = 0; r < REPEATS; r++) {
        opts.progress(`pool: ${threads} worker(s), run ${r + 1}/${REPEATS}`);
        const t0 = performance.now();
        results = await batch(pool, inputs);
        times.push(performance.now() - t0);
      }
      // Same answers whatever the worker count: the speed-up is for the same work.
      const digest = JSON.stringify(results);
      if (reference !== undefined && digest !== reference) throw new Error('pool bench: results differ between worker counts');
      reference = digest;
      const ms = times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
      base ??= ms;
      rows.push({
        suite: 'pool', scenario: `whatif-${count}`, engine: `pool-${threads}`, threads, ms, samples: REPEATS,
        scenariosPerSec: Math.round((count / ms) * 1000 * 10) / 10,
        speedup: Math.round((base / ms) * 100) / 100,
        costPerHour: Math.round(results.reduce((a, x) => a + x.costPerHourAfter, 0) * 1e4) / 1e4,
      });
    } finally {
      await pool.close();
    }
  }
  return rows;
}
