// `karpenter-ts whatif`: the engine run offline over cluster snapshots (or a trace of pods), with the plan
// and the money as a terminal report, JSON or an HTML page; many snapshots or option variants as a batch
// in worker threads; --shard / --merge to spread a batch over machines (deploy/whatif-job.yaml).
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Io } from '../io.ts';
import { parseArgs, USAGE, type WhatIfArgs } from '../whatif/args.ts';
import { expandJobs, runBatch } from '../whatif/batch.ts';
import { fsProblem, InputError, UsageError } from '../whatif/errors.ts';
import { runJob } from '../whatif/job.ts';
import { renderHtml } from '../whatif/render-html.ts';
import { renderTerminal } from '../whatif/render-terminal.ts';
import { merge, summarize, summaryCsv, writeSummary } from '../whatif/summary.ts';

export const summary = 'what would the engine do with this cluster, and what would it cost (offline, batch)';

async function write(io: Io, file: string, text: string): Promise<void> {
  await writeFile(resolve(io.cwd, file), text).catch((e: unknown) => { throw new InputError(`${file}: cannot write: ${(e as Error).message}`); });
}

async function single(a: WhatIfArgs, io: Io, now: number): Promise<number> {
  const [spec] = expandJobs(a, io.cwd, now);
  const r = await runJob(spec!);
  if (!r.ok) throw new InputError(r.error);
  if (a.html !== undefined) {
    await write(io, a.html, renderHtml(r.report));
    io.err(`wrote ${a.html}\n`);
  }
  io.out(a.json ? JSON.stringify(r.report, null, 2) + '\n' : renderTerminal(r.report, { color: io.isTTY && io.env['NO_COLOR'] === undefined }));
  return 0;
}

async function batch(a: WhatIfArgs, io: Io, now: number): Promise<number> {
  const all = expandJobs({ ...a, shard: undefined } as WhatIfArgs, io.cwd, now);
  const jobs = a.shard ? all.filter((j) => j.index % a.shard!.count === a.shard!.index) : all;
  const rows = await runBatch(jobs, io, a.jobs);
  const s = summarize(rows, all.length, a.shard);
  if (a.csv !== undefined) await write(io, a.csv, summaryCsv(s));
  writeSummary(io, s, a.json);
  return s.totals.failed > 0 ? 1 : 0;
}

async function mergeShards(a: WhatIfArgs, io: Io): Promise<number> {
  const parts = await Promise.all(a.inputs.map(async (file) => ({ file, text: await readFile(resolve(io.cwd, file), 'utf8').catch((e: unknown) => { throw fsProblem(file, e); }) })));
  const s = merge(parts);
  if (a.csv !== undefined) await write(io, a.csv, summaryCsv(s));
  writeSummary(io, s, a.json);
  return s.totals.failed > 0 || (s.missing?.length ?? 0) > 0 ? 1 : 0;
}

export async function run(args: string[], io: Io): Promise<number> {
  try {
    const a = parseArgs(args);
    if (a.help) {
      io.out(USAGE);
      return 0;
    }
    if (a.merge) return await mergeShards(a, io);
    // The CLI may read the clock; the engine gets the time as data.
    const now = Date.now();
    const isBatch = a.inputs.length > 1 || a.grid.length > 0 || a.shard !== undefined;
    return await (isBatch ? batch(a, io, now) : single(a, io, now));
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    io.err(`karpenter-ts whatif: ${e.message}\n`);
    if (e instanceof UsageError) io.err(`\n${USAGE}`);
    return 2;
  }
}
