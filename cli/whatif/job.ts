// One what-if job: load the inputs, have the engine build the snapshot and the report, return it. The files
// are read here; the engine's work runs on its workers (Engine.whatIf).
import { fileURLToPath } from 'node:url';
import { WhatIfError, type ClusterObjects, type Engine, type WhatIfMode, type WhatIfReport } from '../../engine/index.ts';
import { podsFromCsv } from './csv.ts';
import { InputError } from './errors.ts';
import { loadSnapshot, readTextInput } from './load.ts';

export const GUIDE_NODEPOOL = fileURLToPath(new URL('../../examples/guide/guide-01.yaml', import.meta.url));

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
}

export type JobResult =
  | { readonly index: number; readonly ok: true; readonly report: WhatIfReport }
  | { readonly index: number; readonly ok: false; readonly error: string; readonly input: string };

const EMPTY: ClusterObjects = { nodes: [], nodeClaims: [], pods: [], nodePools: [], nodeClasses: [], daemonSets: [], pdbs: [] };

async function nodePoolsFrom(file: string, cwd: string) {
  const loaded = await loadSnapshot(file, cwd);
  if (loaded.objects.nodePools.length === 0) throw new InputError(`${file}: no NodePool in the file`);
  return { nodePools: loaded.objects.nodePools, nodeClasses: loaded.objects.nodeClasses };
}

/** The inputs as ClusterObjects plus the file names and snapshot time. */
async function inputs(spec: JobSpec): Promise<{ objects: ClusterObjects; sources: string[]; notes?: readonly string[]; createdAt?: number; override?: Awaited<ReturnType<typeof nodePoolsFrom>> }> {
  const override = spec.nodePools ? await nodePoolsFrom(spec.nodePools, spec.cwd) : undefined;
  if (spec.pods !== undefined) {
    const text = await readTextInput(spec.pods, spec.cwd);
    const pools = override ?? (await nodePoolsFrom(GUIDE_NODEPOOL, spec.cwd).catch((e: unknown) => {
      throw new InputError(`no --nodepools given, and the default NodePool (${GUIDE_NODEPOOL}) cannot be read: ${(e as Error).message}`);
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

/**
 * Runs one job: its inputs are read and parsed here, the report is made on one of the engine's workers
 * (Engine.whatIf), with its progress relayed to `onProgress`.
 */
export async function runJob(spec: JobSpec, engine: Engine, onProgress?: (fraction: number, stage: string) => void): Promise<JobResult> {
  try {
    const { objects, sources, notes, createdAt, override } = await inputs(spec);
    const started = performance.now();
    const report = await engine.whatIf({
      objects,
      build: {
        now: spec.now ?? createdAt ?? spec.defaultNow,
        ...(spec.region ? { region: spec.region } : {}),
        ...(override ? { nodePools: override.nodePools, nodeClasses: override.nodeClasses } : {}),
      },
      ...(notes?.length ? { notes } : {}),
      sources,
      ...(spec.mode ? { mode: spec.mode } : {}),
      exact: spec.exact,
    }, onProgress ? { onProgress } : {});
    return { index: spec.index, ok: true, report: { ...report, timing: { totalMs: Math.round(performance.now() - started) } } };
  } catch (e) {
    const input = spec.snapshot ?? spec.pods ?? '';
    if (e instanceof InputError) return { index: spec.index, ok: false, error: e.message, input };
    if (e instanceof WhatIfError) return { index: spec.index, ok: false, error: `${input}: ${e.message}`, input };
    throw e;
  }
}
