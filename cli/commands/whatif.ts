// `karpenter-ts whatif`: the engine run offline over cluster snapshots (or a trace of pods), with the plan
// and the money as a terminal report, JSON or an HTML page; many snapshots or option variants as a batch
// in worker threads; --shard / --merge to spread a batch over machines (deploy/whatif-job.yaml).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { safeLines, type WhatIfReport } from '../../engine/index.ts';
import type { Io } from '../io.ts';
import { parseWhatIfArgs, USAGE, type WhatIfArgs } from '../whatif/args.ts';
import { expandJobs, runBatch } from '../whatif/batch.ts';
import { withLivePrices } from '../whatif/live-prices.ts';
import { fsProblem, InputError, UsageError } from '../whatif/errors.ts';
import type { JobSpec } from '../whatif/job.ts';
import { renderHtml } from '../whatif/render-html.ts';
import { proposalYaml } from '../whatif/render-migration.ts';
import { renderTerminal } from '../whatif/render-terminal.ts';
import { merge, summarize, summaryCsv, variantText, writeSummary } from '../whatif/summary.ts';

export const summary = 'what would the engine do with this cluster, and what would it cost (offline, batch)';

async function write(io: Io, file: string, text: string): Promise<void> {
  await writeFile(resolve(io.cwd, file), text).catch((e: unknown) => {
    throw new InputError(`${file}: cannot write: ${(e as Error).message}`);
  });
}

/** The jobs with their regions' live prices when --live-prices is given. */
async function priced(a: WhatIfArgs, io: Io, jobs: readonly JobSpec[]): Promise<readonly JobSpec[]> {
  return a.livePrices ? withLivePrices(jobs, io) : jobs;
}

async function single(a: WhatIfArgs, io: Io, spec: JobSpec): Promise<number> {
  const { rows, reports } = await runBatch(await priced(a, io, [spec]), io);
  const report = reports.get(spec.index);
  if (!report) throw new InputError(rows[0]?.error ?? 'the run failed');
  if (a.html !== undefined) {
    await write(io, a.html, renderHtml(report));
    io.err(`wrote ${a.html}\n`);
  }
  io.out(
    a.json
      ? JSON.stringify(report, null, 2) + '\n'
      : renderTerminal(report, { color: io.isTTY && io.env['NO_COLOR'] === undefined }),
  );
  if (a.writeProposal !== undefined) await writeProposal(io, a.writeProposal, report);
  return 0;
}

/** --write-proposal: the proposed NodePools as YAML; a run that proposed none is told so (exit 2). */
async function writeProposal(io: Io, file: string, report: WhatIfReport): Promise<void> {
  const yaml = proposalYaml(report);
  if (yaml === undefined) {
    const why = report.migration
      ? "the NodePools were given (--nodepools, or the snapshot's own)"
      : 'it planned no migration (every node is managed by Karpenter; --from cluster-autoscaler plans one for the rest)';
    throw new InputError(`--write-proposal: nothing written: this run proposed no NodePools: ${why}`);
  }
  await write(io, file, yaml);
  io.err(`wrote ${file} (check it with: karpenter-ts validate ${file})\n`);
}

/** A file name for job `spec`'s report in --out: <job>-<cluster>[-<variant>]. */
function reportName(spec: JobSpec): string {
  const base = (spec.snapshot ?? spec.pods ?? 'job')
    .replace(/\/+$/, '')
    .split('/')
    .pop()!
    .replace(/\.(ya?ml|json|msgpack|csv)$/i, '');
  const variant = Object.entries(spec.variant)
    .map(([k, v]) => `${k}-${v}`)
    .join('-');
  return `${spec.index}-${base}${variant ? `-${variant}` : ''}`.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** Every job's report: to --out (text, JSON and HTML each), else printed before the summary. */
async function writeReports(
  a: WhatIfArgs,
  io: Io,
  jobs: readonly JobSpec[],
  reports: ReadonlyMap<number, WhatIfReport>,
): Promise<void> {
  if (a.out !== undefined) {
    await mkdir(resolve(io.cwd, a.out), { recursive: true }).catch((e: unknown) => {
      throw new InputError(`${a.out}: cannot create: ${(e as Error).message}`);
    });
    for (const spec of jobs) {
      const r = reports.get(spec.index);
      if (!r) continue;
      const name = join(a.out, reportName(spec));
      await write(io, `${name}.txt`, renderTerminal(r, { color: false }));
      await write(io, `${name}.json`, JSON.stringify(r, null, 2) + '\n');
      await write(io, `${name}.html`, renderHtml(r));
      const yaml = proposalYaml(r);
      if (yaml !== undefined) await write(io, `${name}-proposal.yaml`, yaml);
    }
    io.err(`wrote ${reports.size} report${reports.size === 1 ? '' : 's'} (text, JSON, HTML) to ${a.out}\n`);
    return;
  }
  if (a.json) return;
  const color = io.isTTY && io.env['NO_COLOR'] === undefined;
  for (const spec of jobs) {
    const r = reports.get(spec.index);
    if (r)
      io.out(
        `${'='.repeat(8)} job ${spec.index}: ${spec.snapshot ?? spec.pods}${Object.keys(spec.variant).length ? ` (${variantText(spec.variant)})` : ''} ${'='.repeat(8)}\n${renderTerminal(r, { color })}\n`,
      );
  }
}

async function batch(a: WhatIfArgs, io: Io, all: readonly JobSpec[]): Promise<number> {
  const jobs = await priced(a, io, a.shard ? all.filter((j) => j.index % a.shard!.count === a.shard!.index) : all);
  const { rows, reports } = await runBatch(jobs, io, a.jobs);
  const s = summarize(rows, all.length, a.shard);
  await writeReports(a, io, jobs, reports);
  if (a.csv !== undefined) await write(io, a.csv, summaryCsv(s));
  writeSummary(
    io,
    a.json && a.out === undefined
      ? {
          ...s,
          reports: jobs.flatMap((j) => (reports.has(j.index) ? [{ job: j.index, report: reports.get(j.index)! }] : [])),
        }
      : s,
    a.json,
  );
  return s.totals.failed > 0 ? 1 : 0;
}

async function mergeShards(a: WhatIfArgs, io: Io): Promise<number> {
  const parts = await Promise.all(
    a.inputs.map(async (file) => ({
      file,
      text: await readFile(resolve(io.cwd, file), 'utf8').catch((e: unknown) => {
        throw fsProblem(file, e);
      }),
    })),
  );
  const s = merge(parts);
  if (a.csv !== undefined) await write(io, a.csv, summaryCsv(s));
  writeSummary(io, s, a.json);
  return s.totals.failed > 0 || (s.missing?.length ?? 0) > 0 ? 1 : 0;
}

export async function run(args: string[], io: Io): Promise<number> {
  try {
    const a = parseWhatIfArgs(args);
    if (a.help) {
      io.out(USAGE);
      return 0;
    }
    if (a.merge) return await mergeShards(a, io);
    // The CLI may read the clock; the engine gets the time as data.
    const all = await expandJobs({ ...a, shard: undefined } as WhatIfArgs, io.cwd, Date.now());
    const isBatch = all.length > 1 || a.grid.length > 0 || a.shard !== undefined;
    if (!isBatch && a.out !== undefined)
      throw new UsageError('--out writes the reports of a batch: give several snapshots, a folder of them, or --grid');
    if (isBatch && a.html !== undefined)
      throw new UsageError(
        '--html renders one report: for a batch use --out DIR (a text, JSON and HTML report per cluster)',
      );
    return await (isBatch ? batch(a, io, all) : single(a, io, all[0]!));
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    io.err(`karpenter-ts whatif: ${safeLines(e.message)}\n`);
    if (e instanceof UsageError) io.err(`\n${USAGE}`);
    return 2;
  }
}
