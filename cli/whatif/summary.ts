// Batch summaries: one row per job, totals, and their three renderings (table, CSV, JSON). Shards of one
// batch write the same JSON shape with `shard` set; merge() puts them back together in job order.
import { safeStrings } from '../../engine/index.ts';
import type { Io } from '../io.ts';
import { InputError } from './errors.ts';
import { count, plural, usd } from './numbers.ts';

export interface SummaryRow {
  /** Index of the job in the whole (unsharded) batch. */
  readonly job: number;
  readonly input: string;
  readonly variant: Readonly<Record<string, string>>;
  readonly status: 'ok' | 'error';
  readonly error?: string;
  readonly nodesBefore?: number;
  readonly nodesAfter?: number;
  readonly costPerHourBefore?: number;
  readonly costPerHourAfter?: number;
  readonly savingsPerHour?: number;
  readonly lowerBoundPerHour?: number;
  readonly efficiencyAfter?: number | null;
  readonly unschedulable?: number;
  readonly moves?: number;
  /** Where the job's prices came from and how old they are ("REGION: on-demand ...; spot ..."). */
  readonly prices?: string;
}

/** One cluster of the batch (one input), with each grid variant's result side by side. */
interface ClusterRow {
  readonly input: string;
  readonly nodesBefore?: number;
  /** The cluster's cost today, counted once however many variants ran (the first variant that ran). */
  readonly costPerHourBefore?: number;
  /** Per variant, in grid order: after, savings and status. */
  readonly variants: readonly {
    readonly variant: string;
    readonly status: 'ok' | 'error' | 'missing';
    readonly nodesAfter?: number;
    readonly costPerHourAfter?: number;
    readonly savingsPerHour?: number;
    readonly error?: string;
  }[];
}

interface BatchSummary {
  readonly schema: 'karpenter-ts/whatif-batch@2';
  /** Jobs in the whole batch (all shards). */
  readonly total: number;
  readonly shard?: { readonly index: number; readonly count: number };
  readonly rows: readonly SummaryRow[];
  /** The grid variants in order ("-" when there is no grid). */
  readonly variants: readonly string[];
  readonly clusters: readonly ClusterRow[];
  readonly totals: {
    readonly clusters: number;
    readonly ok: number;
    readonly failed: number;
    /** Σ of today's cost over the clusters that ran, each counted once. */
    readonly costPerHourBefore: number;
    /** Per variant: Σ cost after and Σ savings over the clusters where that variant ran. */
    readonly variants: readonly {
      readonly variant: string;
      readonly costPerHourAfter: number;
      readonly savingsPerHour: number;
    }[];
  };
  /** Jobs no shard reported (merge only). */
  readonly missing?: readonly number[];
}

const r6 = (v: number): number => Math.round(v * 1e6) / 1e6 + 0;

export const variantText = (v: Readonly<Record<string, string>>): string =>
  Object.entries(v)
    .map(([k, x]) => `${k}=${x}`)
    .join(' ') || '-';

function clustersOf(rows: readonly SummaryRow[], variants: readonly string[]): ClusterRow[] {
  const inputs = [...new Set(rows.map((r) => r.input))];
  return inputs.map((input) => {
    const mine = rows.filter((r) => r.input === input);
    const first = mine.find((r) => r.status === 'ok');
    return {
      input,
      ...(first ? { nodesBefore: first.nodesBefore, costPerHourBefore: first.costPerHourBefore } : {}),
      variants: variants.map((variant) => {
        const r = mine.find((x) => variantText(x.variant) === variant);
        if (!r) return { variant, status: 'missing' as const };
        return r.status === 'ok'
          ? {
              variant,
              status: 'ok' as const,
              nodesAfter: r.nodesAfter!,
              costPerHourAfter: r.costPerHourAfter!,
              savingsPerHour: r.savingsPerHour!,
            }
          : { variant, status: 'error' as const, error: r.error ?? '' };
      }),
    };
  });
}

export function summarize(
  rows: readonly SummaryRow[],
  total: number,
  shard?: BatchSummary['shard'],
  missing?: readonly number[],
): BatchSummary {
  const ok = rows.filter((r) => r.status === 'ok');
  const variants = [...new Set(rows.map((r) => variantText(r.variant)))];
  const clusters = clustersOf(rows, variants);
  const perVariant = variants.map((variant) => {
    const vs = clusters.flatMap((c) => c.variants.filter((v) => v.variant === variant && v.status === 'ok'));
    return {
      variant,
      costPerHourAfter: r6(vs.reduce((a, v) => a + (v.costPerHourAfter ?? 0), 0)),
      savingsPerHour: r6(vs.reduce((a, v) => a + (v.savingsPerHour ?? 0), 0)),
    };
  });
  return {
    schema: 'karpenter-ts/whatif-batch@2',
    total,
    ...(shard ? { shard } : {}),
    rows,
    variants,
    clusters,
    totals: {
      clusters: clusters.length,
      ok: ok.length,
      failed: rows.length - ok.length,
      costPerHourBefore: r6(clusters.reduce((a, c) => a + (c.costPerHourBefore ?? 0), 0)),
      variants: perVariant,
    },
    ...(missing && missing.length > 0 ? { missing } : {}),
  };
}

/** The batch as a table: one row per cluster, today's cost once, each variant's result side by side. */
function summaryTable(s: BatchSummary): string {
  const head = [
    'CLUSTER',
    'NODES',
    '$/H TODAY',
    ...s.variants.flatMap((v) =>
      s.variants.length === 1 ? ['NODES AFTER', '$/H AFTER', 'SAVES $/H', 'STATUS'] : [`${v}: $/H AFTER`, 'SAVES $/H'],
    ),
    ...(s.variants.length > 1 ? ['STATUS'] : []),
  ];
  const rows = s.clusters.map((c) => {
    const cells = [
      c.input,
      c.nodesBefore === undefined ? '' : count(c.nodesBefore),
      c.costPerHourBefore === undefined ? '' : usd(c.costPerHourBefore),
    ];
    const errors = c.variants
      .filter((v) => v.status !== 'ok')
      .map(
        (v) =>
          `${s.variants.length > 1 ? `${v.variant}: ` : ''}${v.status === 'missing' ? 'missing' : `error: ${(v.error ?? '').split('\n')[0]}`}`,
      );
    for (const v of c.variants) {
      if (s.variants.length === 1) cells.push(v.nodesAfter === undefined ? '' : count(v.nodesAfter));
      cells.push(
        v.costPerHourAfter === undefined ? '' : usd(v.costPerHourAfter),
        v.savingsPerHour === undefined ? '' : usd(v.savingsPerHour),
      );
    }
    cells.push(errors.length ? errors.join('; ') : 'ok');
    return cells;
  });
  const all = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const lines = all.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
  const t = s.totals;
  const scope = s.shard ? ` (shard ${s.shard.index}/${s.shard.count} of ${s.total} jobs)` : ` of ${s.total} jobs`;
  lines.push(
    '',
    `${plural(t.clusters, 'cluster')}; ${t.ok} ok, ${t.failed} failed${scope}; today ${usd(t.costPerHourBefore)}/h (each cluster counted once)`,
  );
  for (const v of t.variants)
    lines.push(
      `  ${s.variants.length > 1 ? `${v.variant}: ` : ''}after ${usd(v.costPerHourAfter)}/h, saves ${usd(v.savingsPerHour)}/h (${usd(v.savingsPerHour * 730)}/month)`,
    );
  if (s.missing?.length) lines.push(`missing jobs (no shard reported them): ${s.missing.join(', ')}`);
  for (const p of new Set(s.rows.flatMap((r) => (r.prices ? [r.prices] : [])))) lines.push(`prices: ${p}`);
  return lines.join('\n') + '\n';
}

const csvField = (v: unknown): string => {
  const s = v === undefined || v === null ? '' : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

export function summaryCsv(s: BatchSummary): string {
  const cols = [
    'job',
    'input',
    'variant',
    'status',
    'nodesBefore',
    'nodesAfter',
    'costPerHourBefore',
    'costPerHourAfter',
    'savingsPerHour',
    'lowerBoundPerHour',
    'efficiencyAfter',
    'unschedulable',
    'moves',
    'error',
  ] as const;
  const lines = [cols.join(',')];
  for (const r of s.rows)
    lines.push(cols.map((c) => csvField(c === 'variant' ? variantText(r.variant) : r[c])).join(','));
  return lines.join('\n') + '\n';
}

/** Combines shard summaries of one batch: rows in job order, totals recomputed, gaps and overlaps found. */
export function merge(
  parts: readonly { file: string; text: string }[],
): BatchSummary & { reports?: { job: number; report: unknown }[] } {
  const rows = new Map<number, SummaryRow>();
  const reports: { job: number; report: unknown }[] = [];
  let total: number | undefined;
  for (const { file, text } of parts) {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      throw new InputError(`${file}: not JSON (${(e as Error).message})`);
    }
    const s = v as Partial<BatchSummary>;
    if (typeof v !== 'object' || v === null || s.schema !== 'karpenter-ts/whatif-batch@2')
      throw new InputError(
        `${file}: not a what-if batch summary (schema "karpenter-ts/whatif-batch@2" expected; run shards with --json)`,
      );
    if (typeof s.total !== 'number' || !Array.isArray(s.rows))
      throw new InputError(`${file}: total or rows is missing`);
    if (total !== undefined && s.total !== total)
      throw new InputError(`${file}: comes from a batch of ${s.total} jobs, the other files from one of ${total}`);
    total = s.total;
    for (const x of Array.isArray((v as { reports?: unknown }).reports)
      ? (v as { reports: { job: number; report: unknown }[] }).reports
      : [])
      reports.push(x);
    for (const [i, r] of s.rows.entries()) {
      if (typeof r?.job !== 'number') throw new InputError(`${file}: rows[${i}].job is missing`);
      if (rows.has(r.job)) throw new InputError(`${file}: job ${r.job} is also in another file (overlapping shards)`);
      rows.set(r.job, r);
    }
  }
  const t = total ?? 0;
  const missing = Array.from({ length: t }, (_, i) => i).filter((i) => !rows.has(i));
  const merged = summarize(
    [...rows.values()].sort((a, b) => a.job - b.job),
    t,
    undefined,
    missing,
  );
  return reports.length ? { ...merged, reports: reports.sort((a, b) => a.job - b.job) } : merged;
}

export function writeSummary(
  io: Io,
  s: BatchSummary & { reports?: readonly { job: number; report: unknown }[] },
  json: boolean,
): void {
  io.out(json ? JSON.stringify(s, null, 2) + '\n' : summaryTable(safeStrings(s)));
}
