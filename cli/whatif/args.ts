// `karpenter-ts whatif` options: parsed and checked once, every mistake a usage error naming the option.
import type { WhatIfMode } from '../../engine/index.ts';
import { UsageError } from './errors.ts';

export const USAGE = `usage: karpenter-ts whatif [options] SNAPSHOT...
       karpenter-ts whatif [options] --pods PODS.csv [--nodepools FILE]
       karpenter-ts whatif --merge SHARD.json...

Runs the engine offline over a cluster snapshot and reports the plan and the money: $/h and $/month
before and after, efficiency against the LP lower bound, the moves in the order budgets allow, why each
pending pod cannot be placed and why each node is kept, and a per-node table.

SNAPSHOT is a \`kubectl get ... -o yaml\` dump (a List or multi-document YAML/JSON of Nodes, Pods,
NodePools, NodeClaims, EC2NodeClasses, DaemonSets, PDBs), or a msgpack file written by
\`karpenter-ts snapshot\`. Several snapshots, a folder of them (each file or sub-folder in it is one
cluster), or --grid make a batch: the jobs run in parallel worker threads, each cluster gets its report,
and a summary table puts the grid variants side by side.

options:
  --mode provision|consolidate   pending pods only, or consolidation after them (default: consolidate
                                 when the snapshot has no pending pods, else provision)
  --exact                        Karpenter's exact algorithm (default: the optimised solver)
  --nodepools FILE               NodePools (and EC2NodeClasses) to try instead of the snapshot's
  --pods FILE.csv                a trace of pods instead of a snapshot (docs/whatif.md)
  --region REGION                catalog region (default: from node labels, else ap-northeast-2)
  --live-prices                  read on-demand prices (AWS Price List API) and spot prices (EC2
                                 DescribeSpotPriceHistory) for the region now, with the AWS SDK's
                                 credentials; needed for regions without built-in prices
  --now TIME                     evaluate at this ISO time (default: the snapshot's time, else now)
  --json                         print JSON (docs/whatif.md documents the schema)
  --html FILE                    also write a self-contained HTML report (one snapshot)
  --grid KEY=V1,V2               batch over option values; KEY: exact, mode, region, nodepools (repeatable)
  --csv FILE                     write the batch summary as CSV
  --out DIR                      batch: write each cluster's report there (text, JSON and HTML)
  --shard I/N                    run only jobs I, I+N, I+2N, ... of the batch (0 <= I < N)
  --jobs N                       worker threads for batches (default: cores, at most 4)
  --merge                        combine shard JSON files into one summary
  -h, --help                     show this help

exit status: 0 done; 1 some jobs of a batch failed; 2 usage error or unreadable input
`;

export type GridKey = 'exact' | 'mode' | 'region' | 'nodepools';
const GRID_KEYS: readonly GridKey[] = ['exact', 'mode', 'region', 'nodepools'];

export interface WhatIfArgs {
  readonly help: boolean;
  readonly inputs: readonly string[];
  readonly pods?: string;
  readonly nodePools?: string;
  /** Absent: consolidate when the snapshot has no pending pods, else provision. */
  readonly mode?: WhatIfMode;
  readonly exact: boolean;
  readonly region?: string;
  /** Read the region's prices from the AWS APIs (live-prices.ts) instead of the built-in tables. */
  readonly livePrices: boolean;
  readonly now?: number;
  readonly json: boolean;
  readonly html?: string;
  readonly csv?: string;
  /** Batch: write each job's report (text, JSON, HTML) into this folder. */
  readonly out?: string;
  readonly grid: readonly (readonly [GridKey, readonly string[]])[];
  readonly shard?: { readonly index: number; readonly count: number };
  readonly jobs?: number;
  readonly merge: boolean;
}

function checkMode(v: string, where: string): WhatIfMode {
  if (v !== 'provision' && v !== 'consolidate') throw new UsageError(`${where}: "${v}" is not provision or consolidate`);
  return v;
}

export function checkGridValue(key: GridKey, v: string): string {
  if (key === 'exact' && v !== 'true' && v !== 'false') throw new UsageError(`--grid exact: "${v}" is not true or false`);
  if (key === 'mode') checkMode(v, '--grid mode');
  return v;
}

export function parseArgs(argv: readonly string[]): WhatIfArgs {
  const a: { -readonly [K in keyof WhatIfArgs]: WhatIfArgs[K] } = { help: false, inputs: [], exact: false, livePrices: false, json: false, grid: [], merge: false };
  const inputs: string[] = [];
  const grid: [GridKey, string[]][] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || (inline === undefined && v.startsWith('--'))) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '-h': case '--help': a.help = true; break;
      case '--mode': a.mode = checkMode(value(), '--mode'); break;
      case '--exact': a.exact = true; break;
      case '--nodepools': a.nodePools = value(); break;
      case '--pods': a.pods = value(); break;
      case '--region': a.region = value(); break;
      case '--live-prices': a.livePrices = true; break;
      case '--now': {
        const v = value();
        const t = Date.parse(v);
        if (Number.isNaN(t)) throw new UsageError(`--now: "${v}" is not an ISO time such as 2026-11-30T09:00:00Z`);
        a.now = t;
        break;
      }
      case '--json': a.json = true; break;
      case '--html': a.html = value(); break;
      case '--csv': a.csv = value(); break;
      case '--out': a.out = value(); break;
      case '--merge': a.merge = true; break;
      case '--grid': {
        const v = value();
        const eq = v.indexOf('=');
        const key = v.slice(0, eq) as GridKey;
        if (eq <= 0 || !GRID_KEYS.includes(key)) throw new UsageError(`--grid: "${v}" is not KEY=V1,V2 with KEY one of ${GRID_KEYS.join(', ')}`);
        const values = v.slice(eq + 1).split(',').map((s) => s.trim()).filter(Boolean);
        if (values.length === 0) throw new UsageError(`--grid ${key}: no values`);
        if (grid.some(([k]) => k === key)) throw new UsageError(`--grid ${key} is given twice`);
        grid.push([key, values.map((x) => checkGridValue(key, x))]);
        break;
      }
      case '--shard': {
        const v = value();
        const m = /^(\d+)\/(\d+)$/.exec(v);
        if (!m || Number(m[2]) < 1 || Number(m[1]) >= Number(m[2])) throw new UsageError(`--shard: "${v}" is not I/N with 0 <= I < N`);
        a.shard = { index: Number(m[1]), count: Number(m[2]) };
        break;
      }
      case '--jobs': {
        const v = value();
        if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 64) throw new UsageError(`--jobs: "${v}" is not a number from 1 to 64`);
        a.jobs = Number(v);
        break;
      }
      default:
        if (arg.startsWith('-') && arg !== '-') throw new UsageError(`unknown option "${arg}"`);
        inputs.push(arg);
    }
  }
  a.inputs = inputs;
  a.grid = grid;
  if (a.help) return a;
  if (a.merge) {
    if (inputs.length === 0) throw new UsageError('--merge needs the shard JSON files');
    return a;
  }
  if (a.pods !== undefined && inputs.length > 0) throw new UsageError('give either --pods or snapshots, not both');
  if (a.pods === undefined && inputs.length === 0) throw new UsageError('no snapshot given');
  if (a.html !== undefined && (inputs.length > 1 || grid.length > 0 || a.shard)) throw new UsageError('--html renders one report: for a batch use --out DIR (a text, JSON and HTML report per cluster)');
  return a;
}
