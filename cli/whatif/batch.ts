// Batches: clusters x grid variants -> jobs (numbered in a fixed order, so shards of the same batch agree),
// their reports made on the engine's workers (inputs are read here, a few jobs ahead), one summary
// row and one report per job. A folder given as input is a batch of clusters: each snapshot file in it, and
// each sub-folder (its files together), is one cluster. A job that fails (bad file, bad object) fails alone:
// its row says why. Progress (progress.ts) comes from the engine's workers.
import { readdir, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import type { WhatIfReport } from '../../engine/index.ts';
import { cliEngine } from '../engine.ts';
import type { WhatIfArgs } from './args.ts';
import { fsProblem } from './errors.ts';
import type { Io } from '../io.ts';
import { runJob, type JobResult, type JobSpec } from './job.ts';
import { progress } from './progress.ts';
import { priceLines } from './render-terminal.ts';
import type { SummaryRow } from './summary.ts';

const SNAPSHOT_FILE = /\.(ya?ml|json|msgpack)$/i;

/** The clusters an input names: a file is one; a folder is one per snapshot file or sub-folder in it (sorted). */
async function clustersIn(input: string, cwd: string): Promise<string[]> {
  const st = await stat(resolve(cwd, input)).catch((e: unknown) => {
    throw fsProblem(input, e);
  });
  if (!st.isDirectory()) return [input];
  const entries = (await readdir(resolve(cwd, input), { withFileTypes: true })).sort((a, b) =>
    a.name.localeCompare(b.name),
  );
  const out = entries
    .filter((e) => e.isDirectory() || (e.isFile() && SNAPSHOT_FILE.test(e.name)))
    .map((e) => join(input, e.name));
  return out.length ? out : [input];
}

/** Every job of the batch, numbered (clusters outer, grid variants inner); --shard keeps every n-th. */
export async function expandJobs(a: WhatIfArgs, cwd: string, defaultNow: number): Promise<JobSpec[]> {
  const clusters = a.pods !== undefined ? [] : (await Promise.all(a.inputs.map((i) => clustersIn(i, cwd)))).flat();
  const inputs = a.pods !== undefined ? [{ pods: a.pods }] : clusters.map((snapshot) => ({ snapshot }));
  let variants: Record<string, string>[] = [{}];
  for (const [key, values] of a.grid) variants = variants.flatMap((v) => values.map((x) => ({ ...v, [key]: x })));
  const jobs: JobSpec[] = [];
  for (const input of inputs) {
    for (const variant of variants) {
      const nodePools = variant['nodepools'] ?? a.nodePools;
      const region = variant['region'] ?? a.region;
      const mode = (variant['mode'] as JobSpec['mode'] | undefined) ?? a.mode;
      jobs.push({
        index: jobs.length,
        ...input,
        ...(nodePools !== undefined ? { nodePools } : {}),
        ...(region !== undefined ? { region } : {}),
        ...(a.now !== undefined ? { now: a.now } : {}),
        ...(mode !== undefined ? { mode } : {}),
        exact: variant['exact'] !== undefined ? variant['exact'] === 'true' : a.exact,
        ...(a.from ? { from: a.from } : {}),
        ...(a.mapNodePools ? { mapNodePools: a.mapNodePools } : {}),
        ...(a.clusterName ? { clusterName: a.clusterName } : {}),
        defaultNow,
        cwd,
        variant,
      });
    }
  }
  return a.shard ? jobs.filter((j) => j.index % a.shard!.count === a.shard!.index) : jobs;
}

function rowOf(spec: JobSpec, r: JobResult): SummaryRow {
  const input = spec.snapshot ?? spec.pods ?? '';
  if (!r.ok) return { job: spec.index, input, variant: spec.variant, status: 'error', error: r.error };
  const p = r.report;
  return {
    job: spec.index,
    input,
    variant: spec.variant,
    status: 'ok',
    nodesBefore: p.counts.nodesBefore,
    nodesAfter: p.counts.nodesAfter,
    costPerHourBefore: p.costPerHourBefore,
    costPerHourAfter: p.costPerHourAfter,
    savingsPerHour: p.savingsPerHour,
    lowerBoundPerHour: p.lowerBoundPerHour,
    efficiencyAfter: p.efficiencyAfter,
    unschedulable: p.counts.unschedulable,
    moves: p.moves.length,
    prices: `${p.input.region}: ${priceLines(p)[0]!.replace(/^prices: /, '')}`,
  };
}

interface BatchResult {
  readonly rows: SummaryRow[];
  /** The reports of the jobs that ran, by job index. */
  readonly reports: Map<number, WhatIfReport>;
}

const failed = (spec: JobSpec, e: unknown): JobResult => ({
  index: spec.index,
  ok: false,
  error: `internal error: ${(e as Error)?.message ?? String(e)}`,
  input: spec.snapshot ?? spec.pods ?? '',
});

/** Runs `work` over `items`, at most `limit` at a time. */
async function limited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/** Runs the jobs (in the pool when there is more than one) and returns their rows in job order and their reports. */
export async function runBatch(jobs: readonly JobSpec[], io: Io, threads?: number): Promise<BatchResult> {
  const rows: SummaryRow[] = [];
  const reports = new Map<number, WhatIfReport>();
  const bar = progress(io, { total: jobs.length, unit: jobs.length > 1 ? 'job' : '' });
  const finish = (spec: JobSpec, r: JobResult): void => {
    rows.push(rowOf(spec, r));
    if (r.ok) reports.set(spec.index, r.report);
    bar.done(spec.index);
  };
  const workers = Math.max(1, Math.min(jobs.length, threads ?? Math.min(4, availableParallelism())));
  const engine = await cliEngine(workers);
  try {
    // Two jobs per worker in flight: one computing, the next one's files read and parsed meanwhile.
    await limited(jobs, 2 * workers, async (spec) => {
      finish(
        spec,
        await runJob(spec, engine, (f, s) => bar.update(spec.index, f, s)).catch((e: unknown) => failed(spec, e)),
      );
    });
  } finally {
    bar.finish();
  }
  return { rows: rows.sort((a, b) => a.job - b.job), reports };
}
