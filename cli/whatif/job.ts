// One what-if job: load the inputs, have the engine build the snapshot and the report, return it. The files
// are read here; the engine's work runs on its workers (Engine.whatIf).
import { fileURLToPath } from 'node:url';
import {
  DEFAULT_REGION,
  emptyClusterObjects,
  MissingPackageError,
  regionOf,
  WhatIfError,
  type ClusterObjects,
  type Engine,
  type LivePrices,
  type WhatIfMode,
  type WhatIfReport,
} from '../../engine/index.ts';
import { podsFromCsv } from './csv.ts';
import { InputError } from './errors.ts';
import { loadSnapshot, readTextInput } from './load.ts';
import { finish, prepare } from './migrate.ts';

const GUIDE_NODEPOOL = fileURLToPath(new URL('../../examples/guide/guide-01.yaml', import.meta.url));

export interface JobSpec {
  /** Position in the whole (unsharded) batch. */
  readonly index: number;
  /** A snapshot path, or a trace (CSV of pods). */
  readonly snapshot?: string;
  readonly pods?: string;
  readonly nodePools?: string;
  /** Absent: consolidate when the snapshot has no pending pods, else provision (docs/whatif.md "Modes"). */
  readonly mode?: WhatIfMode;
  readonly exact: boolean;
  readonly region?: string;
  /** --now, ms; else the snapshot's time, else `defaultNow`. */
  readonly now?: number;
  readonly defaultNow: number;
  readonly cwd: string;
  /** Grid values of this variant, for the summary (e.g. { exact: 'true', mode: 'consolidate' }). */
  readonly variant: Readonly<Record<string, string>>;
  /** --live-prices: the region's prices as read before the run (live-prices.ts). */
  readonly livePrices?: LivePrices;
  /** --from: plan a migration from this autoscaler (migrate.ts). */
  readonly from?: 'cluster-autoscaler';
  /** --map-nodepool old=new. */
  readonly mapNodePools?: Readonly<Record<string, string>>;
  /** --cluster-name, for a proposed EC2NodeClass. */
  readonly clusterName?: string;
}

export type JobResult =
  | { readonly index: number; readonly ok: true; readonly report: WhatIfReport }
  | { readonly index: number; readonly ok: false; readonly error: string; readonly input: string };

const EMPTY: ClusterObjects = emptyClusterObjects();

async function nodePoolsFrom(file: string, cwd: string) {
  const loaded = await loadSnapshot(file, cwd);
  if (loaded.objects.nodePools.length === 0) throw new InputError(`${file}: no NodePool in the file`);
  return { nodePools: loaded.objects.nodePools, nodeClasses: loaded.objects.nodeClasses };
}

/** The inputs as ClusterObjects plus the file names and snapshot time. */
async function inputs(spec: JobSpec): Promise<{
  objects: ClusterObjects;
  sources: string[];
  notes?: readonly string[];
  createdAt?: number;
  override?: Awaited<ReturnType<typeof nodePoolsFrom>>;
}> {
  const override = spec.nodePools ? await nodePoolsFrom(spec.nodePools, spec.cwd) : undefined;
  if (spec.pods !== undefined) {
    const text = await readTextInput(spec.pods, spec.cwd);
    const pools =
      override ??
      (await nodePoolsFrom(GUIDE_NODEPOOL, spec.cwd).catch((e: unknown) => {
        throw new InputError(
          `no --nodepools given, and the default NodePool (${GUIDE_NODEPOOL}) cannot be read: ${(e as Error).message}`,
        );
      }));
    const sources = [spec.pods, spec.nodePools ?? 'examples/guide/guide-01.yaml (default NodePool)'];
    return { objects: { ...EMPTY, pods: podsFromCsv(text, spec.pods), ...pools }, sources };
  }
  const loaded = await loadSnapshot(spec.snapshot ?? '', spec.cwd);
  return {
    objects: loaded.objects,
    notes: loaded.notes,
    sources: [...loaded.files, ...(spec.nodePools ? [spec.nodePools] : [])],
    ...(loaded.createdAt !== undefined ? { createdAt: loaded.createdAt } : {}),
    ...(override ? { override } : {}),
  };
}

/** The region the job runs in: --region, else the snapshot's nodes' region, else the default (a trace has no nodes). */
export async function jobRegion(spec: JobSpec): Promise<string> {
  if (spec.region) return spec.region;
  if (spec.pods !== undefined) return DEFAULT_REGION;
  return regionOf((await loadSnapshot(spec.snapshot ?? '', spec.cwd)).objects);
}

/**
 * A package the report needs is not installed where karpenter-ts runs (the user's environment, not a bug): the
 * job, the package, what of the report needs it and how to install it.
 */
function missingPackage(input: string, e: MissingPackageError): string {
  return `${input}: ${e.message}; every what-if report has a lower bound (lowerBoundPerHour), so install the package \`${e.packageName}\` where karpenter-ts runs (npm install ${e.packageName})`;
}

/**
 * Runs one job: its inputs are read and parsed here (and a migration, a NodePool mapping or given NodePools
 * applied: migrate.ts), the report is made on one of the engine's workers (Engine.whatIf), with its progress
 * relayed to `onProgress`.
 */
export async function runJob(
  spec: JobSpec,
  engine: Engine,
  onProgress?: (fraction: number, stage: string) => void,
): Promise<JobResult> {
  try {
    const { objects, sources, notes, createdAt, override } = await inputs(spec);
    const prepared = prepare(
      spec.nodePools !== undefined ? { ...spec, nodePoolsFile: spec.nodePools } : spec,
      objects,
      {
        now: spec.now ?? createdAt ?? spec.defaultNow,
        ...(spec.region ? { region: spec.region } : {}),
        ...(spec.livePrices ? { livePrices: spec.livePrices } : {}),
      },
      override,
      notes ?? [],
    );
    const started = performance.now();
    const report = finish(
      await engine.whatIf({ ...prepared.job, sources, exact: spec.exact }, onProgress ? { onProgress } : {}),
      prepared,
    );
    return {
      index: spec.index,
      ok: true,
      report: { ...report, timing: { totalMs: Math.round(performance.now() - started) } },
    };
  } catch (e) {
    const input = spec.snapshot ?? spec.pods ?? '';
    if (e instanceof InputError) return { index: spec.index, ok: false, error: e.message, input };
    if (e instanceof WhatIfError) return { index: spec.index, ok: false, error: `${input}: ${e.message}`, input };
    if (e instanceof MissingPackageError)
      return { index: spec.index, ok: false, error: missingPackage(input, e), input };
    throw e;
  }
}
