// Benchmark rows, the machine line and the human table. Suites return rows; run.ts prints them.
import { cpus, totalmem } from 'node:os';

export interface BenchRow {
  readonly suite: string;
  readonly scenario: string;
  readonly engine: string;
  readonly pods?: number;
  readonly nodes?: number;
  readonly costPerHour?: number;
  /** Median time of one call, ms. */
  readonly ms: number;
  /** Median absolute deviation of the samples, ms. */
  readonly madMs?: number;
  readonly samples?: number;
  readonly podsPerSec?: number;
  readonly [extra: string]: unknown;
}

interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly abiVersion: number;
  readonly date: string;
}

export function machine(abiVersion: number): Machine {
  const c = cpus();
  return {
    cpu: c[0]?.model.trim() ?? 'unknown',
    cores: c.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    abiVersion,
    date: new Date().toISOString(),
  };
}

export function machineLine(m: Machine): string {
  return `machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB; Node ${m.node}; solver ABI ${m.abiVersion}; ${m.date}`;
}

function fmt(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'number') {
    if (Number.isInteger(v)) return v.toLocaleString('en-US');
    return Math.abs(v) >= 100 ? v.toFixed(1) : v.toFixed(v < 1 ? 4 : 3);
  }
  return String(v);
}

/** A plain-text table of the rows; columns are the union of keys in a sensible order. */
export function table(rows: readonly BenchRow[], columns?: readonly string[]): string {
  // `warmMs` (the consolidation suite's plan again on a warm worker and model) sits next to the first run's `ms`.
  const preferred = [
    'scenario',
    'engine',
    'pods',
    'nodes',
    'costPerHour',
    'ms',
    'warmMs',
    'madMs',
    'samples',
    'podsPerSec',
  ];
  const keys = columns ?? [
    ...preferred.filter((k) => rows.some((r) => r[k] !== undefined)),
    ...[...new Set(rows.flatMap((r) => Object.keys(r)))].filter(
      // Nested breakdowns (a row's `memory`) are for --json, not for a column.
      (k) => !preferred.includes(k) && k !== 'suite' && !rows.some((r) => typeof r[k] === 'object' && r[k] !== null),
    ),
  ];
  const cells = [keys, ...rows.map((r) => keys.map((k) => fmt(r[k])))];
  const width = keys.map((_, i) => Math.max(...cells.map((c) => c[i]!.length)));
  return cells
    .map((c, row) => c.map((v, i) => (row === 0 || i < 2 ? v.padEnd(width[i]!) : v.padStart(width[i]!))).join('  '))
    .join('\n');
}
