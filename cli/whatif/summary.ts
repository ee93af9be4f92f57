// Batch summaries: one row per job, totals, and their three renderings (table, CSV, JSON). Shards of one
// batch write the same JSON shape with `shard` set; merge() puts them back together in job order.
import type { Io } from '../io.ts';
import { InputError } from './errors.ts';
import { usd } from './numbers.ts';

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
}

export interface BatchSummary {
  readonly schema: 'karpenter-ts/whatif-batch@1';
  /** Jobs in the whole batch (all shards). */
  readonly total: number;
  readonly shard?: { readonly index: number; readonly count: number };
  readonly rows: readonly SummaryRow[];
  readonly totals: {
    readonly ok: number;
    readonly failed: number;
    readonly costPerHourBefore: number;
    readonly costPerHourAfter: number;
    readonly savingsPerHour: number;
  };
  /** Jobs no shard reported (merge only). */
  readonly missing?: readonly number[];
}

const r6 = (v: number): number => Math.round(v * 1e6) / 1e6;

export function summarize(rows: readonly SummaryRow[], total: number, shard?: BatchSummary['shard'], missing?: readonly number[]): BatchSummary {
  const ok = rows.filter((r) => r.status === 'ok');
  const sum = (k: 'costPerHourBefore' | 'costPerHourAfter' | 'savingsPerHour'): number => r6(ok.reduce((a, r) => a + (r[k] ?? 0), 0));
  return {
    schema: 'karpenter-ts/whatif-batch@1',
    total,
    ...(shard ? { shard } : {}),
    rows,
    totals: { ok: ok.length, failed: rows.length - ok.length, costPerHourBefore: sum('costPerHourBefore'), costPerHourAfter: sum('costPerHourAfter'), savingsPerHour: sum('savingsPerHour') },
    ...(missing && missing.length > 0 ? { missing } : {}),
  };
}

const variantText = (v: Readonly<Record<string, string>>): string => Object.entries(v).map(([k, x]) => `${k}=${x}`).join(' ') || '-';

export function summaryTable(s: BatchSummary): string {
  const head = ['JOB', 'INPUT', 'VARIANT', 'NODES', '$/H BEFORE', '$/H AFTER', 'SAVES $/H', 'BOUND $/H', 'EFFICIENCY', 'UNSCHED', 'STATUS'];
  const rows = s.rows.map((r) => r.status === 'ok'
    ? [String(r.job), r.input, variantText(r.variant), `${r.nodesBefore}->${r.nodesAfter}`, usd(r.costPerHourBefore ?? 0), usd(r.costPerHourAfter ?? 0), usd(r.savingsPerHour ?? 0),
      usd(r.lowerBoundPerHour ?? 0), r.efficiencyAfter == null ? 'n/a' : `${(r.efficiencyAfter * 100).toFixed(1)}%`, String(r.unschedulable ?? 0), 'ok']
    : [String(r.job), r.input, variantText(r.variant), '', '', '', '', '', '', '', `error: ${(r.error ?? '').split('\n')[0]}`]);
  const all = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  const lines = all.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd());
  const t = s.totals;
  lines.push('', `${t.ok} ok, ${t.failed} failed${s.shard ? ` (shard ${s.shard.index}/${s.shard.count} of ${s.total} jobs)` : ` of ${s.total} jobs`}; `
    + `total ${usd(t.costPerHourBefore)}/h -> ${usd(t.costPerHourAfter)}/h, saves ${usd(t.savingsPerHour)}/h`);
  if (s.missing?.length) lines.push(`missing jobs (no shard reported them): ${s.missing.join(', ')}`);
  return lines.join('\n') + '\n';
}

const csvField = (v: unknown): string => {
  const s = v === undefined || v === null ? '' : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

export function summaryCsv(s: BatchSummary): string {
  const cols = ['job', 'input', 'variant', 'status', 'nodesBefore', 'nodesAfter', 'costPerHourBefore', 'costPerHourAfter', 'savingsPerHour', 'lowerBoundPerHour', 'efficiencyAfter', 'unschedulable', 'moves', 'error'] as const;
  const lines = [cols.join(',')];
  for (const r of s.rows) lines.push(cols.map((c) => csvField(c === 'variant' ? variantText(r.variant) : r[c])).join(','));
  return lines.join('\n') + '\n';
}

/** Combines shard summaries of one batch: rows in job order, totals recomputed, gaps and overlaps found. */
export function merge(parts: readonly { file: string; text: string }[]): BatchSummary {
  const rows = new Map<number, SummaryRow>();
  let total: number | undefined;
  for (const { file, text } of parts) {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      throw new InputError(`${file}: not JSON (${(e as Error).message})`);
    }
    const s = v as Partial<BatchSummary>;
    if (typeof v !== 'object' || v === null || s.schema !== 'karpenter-ts/whatif-batch@1') throw new InputError(`${file}: not a what-if batch summary (schema "karpenter-ts/whatif-batch@1" expected; run shards with --json)`);
    if (typeof s.total !== 'number' || !Array.isArray(s.rows)) throw new InputError(`${file}: total or rows is missing`);
    if (total !== undefined && s.total !== total) throw new InputError(`${file}: comes from a batch of ${s.total} jobs, the other files from one of ${total}`);
    total = s.total;
    for (const [i, r] of s.rows.entries()) {
      if (typeof r?.job !== 'number') throw new InputError(`${file}: rows[${i}].job is missing`);
      if (rows.has(r.job)) throw new InputError(`${file}: job ${r.job} is also in another file (overlapping shards)`);
      rows.set(r.job, r);
    }
  }
  const t = total ?? 0;
  const missing = Array.from({ length: t }, (_, i) => i).filter((i) => !rows.has(i));
  return summarize([...rows.values()].sort((a, b) => a.job - b.job), t, undefined, missing);
}

export function writeSummary(io: Io, s: BatchSummary, json: boolean): void {
  io.out(json ? JSON.stringify(s, null, 2) + '\n' : summaryTable(s));
}
