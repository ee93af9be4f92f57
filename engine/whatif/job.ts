// One what-if job as the engine runs it in a pool worker: the cluster's objects (parsed by the caller, who
// reads the files) joined into a snapshot, the mode chosen when not given, and the report.
import { buildSnapshot, type BuildOptions, type Built } from './build.ts';
import { whatIf, type WhatIfEngine } from './run.ts';
import type { ClusterObjects, WhatIfMode, WhatIfReport } from './types.ts';

export interface WhatIfJob {
  /** The cluster's objects and how to join them (BuildOptions), or a snapshot built already (`built`). */
  readonly objects?: ClusterObjects;
  readonly build?: BuildOptions;
  readonly built?: Built;
  /** Warnings about the input the caller found while reading it, shown first. */
  readonly notes?: readonly string[];
  readonly sources: readonly string[];
  /** Default: provision when pods are pending, else consolidate. */
  readonly mode?: WhatIfMode;
  readonly exact: boolean;
}

export async function runWhatIfJob(
  job: WhatIfJob,
  engine: WhatIfEngine,
  onProgress?: (fraction: number, stage: string) => void,
): Promise<WhatIfReport> {
  const plain = job.built ?? buildSnapshot(job.objects ?? emptyObjects(), job.build ?? { now: 0 });
  const built = job.notes?.length ? { ...plain, warnings: [...job.notes, ...plain.warnings] } : plain;
  const mode = job.mode ?? (built.snapshot.pendingPods.length > 0 ? 'provision' : 'consolidate');
  return whatIf(
    {
      built,
      sources: job.sources,
      options: { mode, exact: job.exact, modeDefaulted: job.mode === undefined },
      ...(onProgress ? { onProgress } : {}),
    },
    engine,
  );
}

function emptyObjects(): ClusterObjects {
  return { nodes: [], nodeClaims: [], pods: [], nodePools: [], nodeClasses: [], daemonSets: [], pdbs: [] };
}
