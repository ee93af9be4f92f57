// Timing with tinybench: warm-up, then samples until a time budget or an iteration count; the median and
// the median absolute deviation are what rows report (the machines are shared and noisy).
import { Bench } from 'tinybench';

interface Timing {
  readonly ms: number;
  readonly madMs: number;
  readonly samples: number;
}

interface MeasureOptions {
  /** Time budget for sampling, ms (default 2000). */
  readonly timeMs?: number;
  /** Minimum number of samples (default 5). */
  readonly iterations?: number;
  /** Warm-up runs before sampling (default 1). */
  readonly warmup?: number;
}

export async function measure(
  name: string,
  fn: () => unknown | Promise<unknown>,
  o: MeasureOptions = {},
): Promise<Timing> {
  const bench = new Bench({
    time: o.timeMs ?? 2000,
    iterations: o.iterations ?? 5,
    warmup: (o.warmup ?? 1) > 0,
    warmupIterations: o.warmup ?? 1,
    warmupTime: 0,
    throws: true,
  });
  bench.add(name, fn);
  await bench.run();
  const r = bench.tasks[0]!.result;
  if (r.state !== 'completed') throw new Error(`benchmark ${name} did not complete (${r.state})`);
  return { ms: r.latency.p50, madMs: r.latency.mad, samples: r.latency.samplesCount };
}
