// `npm run bench -- pool`: what-if jobs on the engine's workers, 64 seeded scenarios (bench/scenarios/whatif.ts:
// a fragmented cluster plus pending pods, consolidate mode, Karpenter's exact algorithm) on 1 worker and on 2.
// Each row is the median wall time of the whole batch (the two worker counts' batches alternate, after a warm-up
// in which every worker runs about a batch's jobs); `speedup` is 1-worker time over this row's time: the pool's
// scaling once its workers are warm. `coldMs` and `coldSpeedup` are the same for each engine's first batch, on
// workers that had just started: there each of two workers compiles its hot code in its own isolate while it runs,
// on the core the other needs (test/perf/pool-threads.ts splits that out: V8's helper threads' CPU a job falls from
// about 20 ms in a worker's first 64 jobs to about 9 after 200). The scenarios' snapshots are built
// before the timed batches: building them is the benchmark's, not the engine's, and the calling thread's work
// inside a batch runs on the core one worker leaves idle but takes a core from two. On a machine with as many cores
// as workers a speed-up means something only when nothing else runs: every row carries the one-minute load
// average when the timed batches started and when they ended (`loadStart`, `loadEnd`), and `cpuMsPerJob`: the
// process's CPU time (every thread: the calling one, the workers, V8's background threads) per job, the median over
// the timed batches. CPU time holds up under load better than wall time: if two workers take more of it per job
// than one, that is work the 2-worker row pays on cores the 1-worker row has spare (docs/benchmarks.md).
// `cpuWaitMsPerJob` (Linux) is the time the process's threads were ready to run but waited for a core, per job
// (median): on a quiet machine that is the process's own threads competing (two workers and V8's helpers on two
// cores); far more than the other row's means other processes took the cores, and that row's wall time, and so the
// speed-up, measure the machine rather than the engine. BENCH_POOL_MIN_SEMI_MB sets the pool's minSemiSpaceMb (0:
// V8's own young generation, for an A/B of the floor engine/pool/young-generation.ts keeps).
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createEngine, type Built, type Engine } from '../../engine/index.ts';
import type { BenchRow } from '../report.ts';
import { runScenario, scenario, type ScenarioInput, type ScenarioResult } from '../scenarios/whatif.ts';
import type { SuiteOptions } from './solver.ts';

const REPEATS = 3;

/** The process's threads' time on a core and waiting for one, ms (/proc/self/task/<tid>/schedstat); undefined off Linux. */
function schedMs(): { readonly run: number; readonly wait: number } | undefined {
  let tasks: string[];
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    return undefined;
  }
  let run = 0;
  let wait = 0;
  for (const t of tasks) {
    try {
      const [r, w] = readFileSync(`/proc/self/task/${t}/schedstat`, 'utf8').split(' ');
      run += Number(r) / 1e6;
      wait += Number(w) / 1e6;
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return { run, wait };
}

function poolOptions(threads: number): { threads: number; minSemiSpaceMb?: number } {
  const semi = process.env['BENCH_POOL_MIN_SEMI_MB'];
  return { threads, ...(semi ? { minSemiSpaceMb: Number(semi) } : {}) };
}

async function batch(
  engine: Engine,
  inputs: readonly ScenarioInput[],
  built: readonly Built[],
): Promise<ScenarioResult[]> {
  return Promise.all(inputs.map((input, i) => runScenario(engine, input, built[i])));
}

/**
 * Runs the batch on each engine until each of its workers has run about a batch's jobs (a worker's JIT compiles the
 * hot code in its own isolate, so two workers compile it twice: in one batch each of them has seen half the jobs the
 * single worker has). Returns the wall time of each engine's first batch, the cold one, ms.
 */
async function warmUp(
  engines: readonly Engine[],
  counts: readonly number[],
  inputs: readonly ScenarioInput[],
  built: readonly Built[],
  opts: SuiteOptions,
): Promise<number[]> {
  const cold: number[] = [];
  for (const [i, engine] of engines.entries()) {
    for (let b = 0; b < counts[i]!; b++) {
      opts.progress(`pool: ${counts[i]} worker(s), warm-up batch ${b + 1}/${counts[i]}`);
      const t0 = performance.now();
      await batch(engine, inputs, built);
      if (b === 0) cold.push(performance.now() - t0);
    }
  }
  return cold;
}

export async function run(opts: SuiteOptions): Promise<BenchRow[]> {
  const count = opts.quick ? 16 : 64;
  const inputs: ScenarioInput[] = Array.from({ length: count }, (_, i) => ({ seed: i + 1, nodes: 6, pending: 6 }));
  const built = inputs.map(scenario);
  const counts = [1, 2] as const;
  // Both engines live through the run and their batches alternate, so a change in the machine's load falls on
  // both alike: the speed-up is a ratio within one stretch of time.
  const engines = counts.map((threads) => createEngine(poolOptions(threads)));
  try {
    const cold = await warmUp(engines, counts, inputs, built, opts);
    const loadStart = loadavg()[0]!;
    const times: number[][] = counts.map(() => []);
    const cpu: number[][] = counts.map(() => []);
    const waits: number[][] = counts.map(() => []);
    const results: ScenarioResult[][] = counts.map(() => []);
    for (let r = 0; r < REPEATS; r++) {
      for (const [i, engine] of engines.entries()) {
        opts.progress(`pool: ${counts[i]} worker(s), run ${r + 1}/${REPEATS}`);
        const t0 = performance.now();
        const c0 = process.cpuUsage();
        const s0 = schedMs();
        results[i] = await batch(engine, inputs, built);
        times[i]!.push(performance.now() - t0);
        const c = process.cpuUsage(c0);
        cpu[i]!.push((c.user + c.system) / 1000 / count);
        const s1 = schedMs();
        if (s0 && s1) waits[i]!.push((s1.wait - s0.wait) / count);
      }
    }
    // Same answers whatever the worker count (every report compared whole, by digest): the speed-up is for the
    // same work.
    if (JSON.stringify(results[0]) !== JSON.stringify(results[1]))
      throw new Error('pool bench: results differ between worker counts');
    const loadEnd = loadavg()[0]!;
    const median = (t: readonly number[]) => [...t].sort((a, b) => a - b)[Math.floor(t.length / 2)]!;
    const medians = times.map(median);
    return counts.map((threads, i) => ({
      suite: 'pool',
      scenario: `whatif-${count}`,
      engine: `pool-${threads}`,
      threads,
      ms: medians[i]!,
      samples: REPEATS,
      scenariosPerSec: Math.round((count / medians[i]!) * 1000 * 10) / 10,
      speedup: Math.round((medians[0]! / medians[i]!) * 100) / 100,
      coldMs: Math.round(cold[i]!),
      coldSpeedup: Math.round((cold[0]! / cold[i]!) * 100) / 100,
      cpuMsPerJob: Math.round(median(cpu[i]!)),
      ...(waits[i]!.length ? { cpuWaitMsPerJob: Math.round(median(waits[i]!)) } : {}),
      costPerHour: Math.round(results[i]!.reduce((a, x) => a + x.costPerHourAfter, 0) * 1e4) / 1e4,
      loadStart: Math.round(loadStart * 100) / 100,
      loadEnd: Math.round(loadEnd * 100) / 100,
    }));
  } finally {
    await Promise.all(engines.map((e) => e.close()));
  }
}
