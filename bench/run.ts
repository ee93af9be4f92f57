// `npm run bench -- <suite> [--json] [--quick] [--sizes=N,N]`: runs one benchmark suite and prints a table with the
// machine line (or, with --json, one JSON array of rows and nothing else on stdout). Progress goes to stderr
// when it is a terminal.
import { parseArgs } from 'node:util';
import { ABI_VERSION } from '../engine/index.ts';
import { machine, machineLine, table, type BenchRow } from './report.ts';

const SUITES = ['solver', 'karpenter', 'quality', 'packing', 'consolidation', 'pool', 'controller'] as const;

function summary(rows: readonly BenchRow[]): string[] {
  const lines: string[] = [];
  const by = (engine: string, scenario: string) => rows.find((r) => r.engine === engine && r.scenario === scenario);
  for (const scenario of [...new Set(rows.map((r) => r.scenario))]) {
    const fast = by('wasm-release-exact', scenario) ?? by('wasm-release', scenario);
    const ref = by('reference', scenario);
    if (fast && ref)
      lines.push(
        `${scenario}: ${fast.engine} ${(ref.ms / fast.ms).toFixed(1)}x faster than reference (same algorithm, medians of this run)`,
      );
  }
  return lines;
}

const USAGE = `usage: npm run bench -- <${SUITES.join('|')}> [--json] [--quick] [--sizes=N,N] (consolidation: cluster sizes; controller: its big cluster's nodes)\n`;

interface BenchArgs {
  readonly name: (typeof SUITES)[number];
  readonly json: boolean;
  readonly quick: boolean;
  readonly sizes?: number[];
}

/** The command line (node:util parseArgs), or what is wrong with it. */
function readArgs(argv: string[]): BenchArgs | string {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { json: { type: 'boolean' }, quick: { type: 'boolean' }, sizes: { type: 'string' } },
    });
  } catch (e) {
    return `bench: ${(e as Error).message}\n${USAGE}`;
  }
  const { values, positionals } = parsed;
  const sizes = values.sizes?.split(',').map(Number);
  if (sizes && (sizes.length === 0 || sizes.some((n) => !Number.isInteger(n) || n <= 0)))
    return `bench: --sizes takes positive integers separated by commas, got --sizes=${values.sizes}\n`;
  const name = SUITES.find((s) => s === positionals[0]);
  if (!name || positionals.length > 1) return USAGE;
  return { name, json: values.json === true, quick: values.quick === true, ...(sizes ? { sizes } : {}) };
}

export async function main(argv: string[]): Promise<number> {
  const args = readArgs(argv);
  if (typeof args === 'string') {
    process.stderr.write(args);
    return 2;
  }
  const { name, json, quick, sizes } = args;
  const progress = (msg: string) => {
    if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${msg}`);
  };
  let mod: {
    run(o: {
      json: boolean;
      quick: boolean;
      progress: (m: string) => void;
      sizes?: readonly number[];
    }): Promise<BenchRow[]>;
  };
  try {
    mod = await import(`./suites/${name}.ts`);
  } catch (e) {
    process.stderr.write(`bench: suite ${name} is not available (${(e as Error).message})\n`);
    return 2;
  }
  const rows = await mod.run({ json, quick, progress, ...(sizes ? { sizes } : {}) });
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
  const m = machine(ABI_VERSION);
  if (json) {
    process.stdout.write(JSON.stringify(rows.map((r) => ({ ...r, machine: m }))) + '\n');
    return 0;
  }
  process.stdout.write(`${machineLine(m)}\n\n${table(rows)}\n`);
  for (const l of summary(rows)) process.stdout.write(`${l}\n`);
  return 0;
}
