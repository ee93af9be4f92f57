// Batches: inputs x grid variants -> jobs (numbered in a fixed order, so shards of the same batch agree),
// run in the worker pool (each worker runs cli/whatif/job.ts with the engine in its own thread), one
// summary row per job. A job that fails (bad file, bad object) fails alone: its row says why.
import { availableParallelism } from 'node:os';
import { moduleUrl, SolverPool } from '../../engine/index.ts';
import type { WhatIfArgs } from './args.ts';
import type { Io } from '../io.ts';
import { runJob, type JobResult, type JobSpec } from './job.ts';
import type { SummaryRow } from './summary.ts';

// job.ts from source (tests), job.js from dist/.
const JOB_MODULE = moduleUrl('./job.ts', import.meta.url);

/** Every job of the batch, numbered; --shard keeps every n-th. */
export function expandJobs(a: WhatIfArgs, cwd: string, defaultNow: number): JobSpec[] {
  const inputs = a.pods !== undefined ? [{ pods: a.pods }] : a.inputs.map((snapshot) => ({ snapshot }));
  let variants: Record<string, string>[] = [{}];
  for (const [key, values] of a.grid) variants = variants.flatMap((v) => values.map((x) => ({ ...v, [key]: x })));
  const jobs: JobSpec[] = [];
  for (const input of inputs) {
    for (const variant of variants) {
      const nodePools = variant['nodepools'] ?? a.nodePools;
      const region = variant['region'] ?? a.region;
      jobs.push({
        index: jobs.length,
        ...input,
        ...(nodePools !== undefined ? { nodePools } : {}),
        ...(region !== undefined ? { region } : {}),
        ...(a.now !== undefined ? { now: a.now } : {}),
        mode: (variant['mode'] as JobSpec['mode'] | undefined) ?? a.mode,
        exact: variant['exact'] !== undefined ? variant['exact'] === 'true' : a.exact,
        defaultNow,
        cwd,
        variant,
      });
    }
  }
  return a.shard ? jobs.filter((j) => j.index % a.shard!.count === a.shard!.index) : jobs;
}

export function rowOf(spec: JobSpec, r: JobResult): SummaryRow {
  const input = spec.snapshot ?? spec.pods ?? '';
  if (!r.ok) return { job: spec.index, input, variant: spec.variant, status: 'error', error: r.error };
  const p = r.report;
  return {
    job: spec.index, input, variant: spec.variant, status: 'ok',
    nodesBefore: p.counts.nodesBefore, nodesAfter: p.counts.nodesAfter,
    costPerHourBefore: p.costPerHourBefore, costPerHourAfter: p.costPerHourAfter, savingsPerHour: p.savingsPerHour,
    lowerBoundPerHour: p.lowerBoundPerHour, efficiencyAfter: p.efficiencyAfter, unschedulable: p.counts.unschedulable, moves: p.moves.length,
  };
}

function progress(io: Io, done: number, total: number): void {
  if (!io.errIsTTY) return;
  const width = 30;
  const full = Math.round((done / total) * width);
  io.err(`\r[${'#'.repeat(full)}${'.'.repeat(width - full)}] ${done}/${total}${done === total ? '\n' : ''}`);
}

/** Runs the jobs (in the pool when there is more than one) and returns their rows in job order. */
export async function runBatch(jobs: readonly JobSpec[], io: Io, threads?: number): Promise<SummaryRow[]> {
  const rows: SummaryRow[] = [];
  let done = 0;
  const finish = (spec: JobSpec, r: JobResult): void => {
    rows.push(rowOf(spec, r));
    progress(io, ++done, jobs.length);
  };
  const failed = (spec: JobSpec, e: unknown): JobResult => ({ index: spec.index, ok: false, error: `internal error: ${(e as Error)?.message ?? String(e)}`, input: spec.snapshot ?? spec.pods ?? '' });
  progress(io, 0, jobs.length);
  if (jobs.length <= 1) {
    for (const spec of jobs) finish(spec, await runJob(spec).catch((e: unknown) => failed(spec, e)));
  } else {
    const pool = new SolverPool({ threads: Math.min(jobs.length, threads ?? Math.min(4, availableParallelism())) });
    try {
      await Promise.all(jobs.map(async (spec) => finish(spec, await pool.runTask<JobResult>(JOB_MODULE, 'runJob', spec).catch((e: unknown) => failed(spec, e)))));
    } finally {
      await pool.close();
    }
  }
  return rows.sort((a, b) => a.job - b.job);
}
