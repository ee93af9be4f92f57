// `karpenter-ts whatif` options: parsed and checked once, every mistake a usage error naming the option.
import { parseArgs as parseCommandLine, type ParseArgsConfig } from 'node:util';
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
  --map-nodepool OLD=NEW         plan the nodes of NodePool OLD as nodes of NEW (repeatable)
  --from cluster-autoscaler      plan a migration to Karpenter: NodePools proposed from the nodes and
                                 pods (or --nodepools), each node group mapped to one, its nodes replaced
                                 (the default when no node of the snapshot is managed by Karpenter)
  --write-proposal FILE          write the proposed NodePools and EC2NodeClass as YAML (one snapshot)
  --cluster-name NAME            the cluster's name, for the proposed EC2NodeClass's role and tags
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

type GridKey = 'exact' | 'mode' | 'region' | 'nodepools';
const GRID_KEYS: readonly GridKey[] = ['exact', 'mode', 'region', 'nodepools'];

export interface WhatIfArgs {
  readonly help: boolean;
  readonly inputs: readonly string[];
  readonly pods?: string;
  readonly nodePools?: string;
  /** --map-nodepool OLD=NEW, each. */
  readonly mapNodePools?: Readonly<Record<string, string>>;
  /** --from: plan a migration from this autoscaler. */
  readonly from?: 'cluster-autoscaler';
  /** --write-proposal: where to write the proposed NodePools (one snapshot). */
  readonly writeProposal?: string;
  readonly clusterName?: string;
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
  if (v !== 'provision' && v !== 'consolidate')
    throw new UsageError(`${where}: "${v}" is not provision or consolidate`);
  return v;
}

function checkGridValue(key: GridKey, v: string): string {
  if (key === 'exact' && v !== 'true' && v !== 'false')
    throw new UsageError(`--grid exact: "${v}" is not true or false`);
  if (key === 'mode') checkMode(v, '--grid mode');
  return v;
}

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function nodePoolPair(v: string, seen: Record<string, string>): Record<string, string> {
  const m = /^([^=]+)=([^=]+)$/.exec(v);
  if (!m || !NAME.test(m[1]!) || !NAME.test(m[2]!))
    throw new UsageError(`--map-nodepool: "${v}" is not OLD=NEW with two NodePool names`);
  if (seen[m[1]!] !== undefined) throw new UsageError(`--map-nodepool: ${m[1]} is mapped twice`);
  return { ...seen, [m[1]!]: m[2]! };
}

/** Options that contradict each other or the input. */
function checkCombination(a: WhatIfArgs): void {
  if (a.pods !== undefined && a.inputs.length > 0) throw new UsageError('give either --pods or snapshots, not both');
  if (a.pods === undefined && a.inputs.length === 0) throw new UsageError('no snapshot given');
  if (a.html !== undefined && (a.inputs.length > 1 || a.grid.length > 0 || a.shard))
    throw new UsageError(
      '--html renders one report: for a batch use --out DIR (a text, JSON and HTML report per cluster)',
    );
  if (a.from && a.mode === 'provision')
    throw new UsageError(
      '--from cluster-autoscaler replaces the nodes, which the disruption engine does: drop --mode provision',
    );
  if (a.from && a.pods !== undefined)
    throw new UsageError('--from cluster-autoscaler needs a snapshot with the nodes: a --pods trace has none');
  if (a.writeProposal !== undefined && (a.inputs.length > 1 || a.grid.length > 0 || a.shard))
    throw new UsageError(
      "--write-proposal writes one snapshot's proposal: for a batch, --out DIR holds each cluster's",
    );
}

type Mutable = { -readonly [K in keyof WhatIfArgs]: WhatIfArgs[K] } & { grid: [GridKey, string[]][] };

function gridAxis(a: Mutable, v: string): void {
  const eq = v.indexOf('=');
  const key = v.slice(0, eq) as GridKey;
  if (eq <= 0 || !GRID_KEYS.includes(key))
    throw new UsageError(`--grid: "${v}" is not KEY=V1,V2 with KEY one of ${GRID_KEYS.join(', ')}`);
  const values = v
    .slice(eq + 1)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (values.length === 0) throw new UsageError(`--grid ${key}: no values`);
  if (a.grid.some(([k]) => k === key)) throw new UsageError(`--grid ${key} is given twice`);
  a.grid.push([key, values.map((x) => checkGridValue(key, x))]);
}

/** Options that take no value. */
const FLAGS: Readonly<Record<string, (a: Mutable) => void>> = {
  help: (a) => {
    a.help = true;
  },
  exact: (a) => {
    a.exact = true;
  },
  'live-prices': (a) => {
    a.livePrices = true;
  },
  json: (a) => {
    a.json = true;
  },
  merge: (a) => {
    a.merge = true;
  },
};

/** Options that take a value, each checked where it is read. */
const VALUED: Readonly<Record<string, (a: Mutable, v: string) => void>> = {
  mode: (a, v) => {
    a.mode = checkMode(v, '--mode');
  },
  nodepools: (a, v) => {
    a.nodePools = v;
  },
  'map-nodepool': (a, v) => {
    a.mapNodePools = nodePoolPair(v, { ...(a.mapNodePools ?? {}) });
  },
  from: (a, v) => {
    if (v !== 'cluster-autoscaler')
      throw new UsageError(`--from: "${v}" is not cluster-autoscaler (the one autoscaler a migration is planned from)`);
    a.from = v;
  },
  'write-proposal': (a, v) => {
    a.writeProposal = v;
  },
  'cluster-name': (a, v) => {
    if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/.test(v))
      throw new UsageError(`--cluster-name: "${v}" is not an EKS cluster name (letters, digits, - and _, up to 100)`);
    a.clusterName = v;
  },
  pods: (a, v) => {
    a.pods = v;
  },
  region: (a, v) => {
    a.region = v;
  },
  now: (a, v) => {
    const t = Date.parse(v);
    if (Number.isNaN(t)) throw new UsageError(`--now: "${v}" is not an ISO time such as 2026-11-30T09:00:00Z`);
    a.now = t;
  },
  html: (a, v) => {
    a.html = v;
  },
  csv: (a, v) => {
    a.csv = v;
  },
  out: (a, v) => {
    a.out = v;
  },
  grid: gridAxis,
  shard: (a, v) => {
    const m = /^(\d+)\/(\d+)$/.exec(v);
    if (!m || Number(m[2]) < 1 || Number(m[1]) >= Number(m[2]))
      throw new UsageError(`--shard: "${v}" is not I/N with 0 <= I < N`);
    a.shard = { index: Number(m[1]), count: Number(m[2]) };
  },
  jobs: (a, v) => {
    if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 64)
      throw new UsageError(`--jobs: "${v}" is not a number from 1 to 64`);
    a.jobs = Number(v);
  },
};

/** What node:util's parseArgs is told: every option above, -h for --help. */
const OPTIONS: ParseArgsConfig['options'] = {
  ...Object.fromEntries(Object.keys(FLAGS).map((k) => [k, { type: 'boolean' as const }])),
  ...Object.fromEntries(Object.keys(VALUED).map((k) => [k, { type: 'string' as const, multiple: true }])),
  help: { type: 'boolean', short: 'h' },
};

/**
 * Parses the command line with node:util's parseArgs (its tokens, in order, so that repeated options and the
 * option checks apply left to right) and checks it; every mistake is a UsageError naming the option.
 */
export function parseWhatIfArgs(argv: readonly string[]): WhatIfArgs {
  const a: Mutable = { help: false, inputs: [], exact: false, livePrices: false, json: false, grid: [], merge: false };
  const { tokens } = parseCommandLine({
    args: [...argv],
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const inputs: string[] = [];
  for (const t of tokens) {
    if (t.kind === 'positional') inputs.push(t.value);
    else if (t.kind === 'option') applyOption(a, t);
  }
  a.inputs = inputs;
  if (a.help) return a;
  if (a.merge) {
    if (inputs.length === 0) throw new UsageError('--merge needs the shard JSON files');
    return a;
  }
  checkCombination(a);
  return a;
}

type OptionToken = Extract<NonNullable<ReturnType<typeof parseCommandLine>['tokens']>[number], { kind: 'option' }>;

/**
 * One option as typed. Unknown ones (and a value given to a flag) are refused; a value that is the next
 * argument must not look like an option (`--mode --json` lacks the mode; `--mode=--json` is a bad mode).
 */
function applyOption(a: Mutable, t: OptionToken): void {
  const set = VALUED[t.name];
  if (set) {
    if (t.value === undefined || (!t.inlineValue && t.value.startsWith('--')))
      throw new UsageError(`${t.rawName} needs a value`);
    set(a, t.value);
  } else if (FLAGS[t.name] && t.value === undefined) {
    FLAGS[t.name]!(a);
  } else {
    throw new UsageError(`unknown option "${t.rawName}${t.inlineValue ? `=${t.value}` : ''}"`);
  }
}
