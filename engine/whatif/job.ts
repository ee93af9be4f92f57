// One what-if job as the engine runs it in a pool worker: the cluster's objects (parsed by the caller, who
// reads the files) joined into a snapshot, the mode chosen when not given, and the report. A job runs whole,
// or in its two independent parts on two workers at once: the plan (provisioning and consolidation) and the
// lower bound, which depends on the snapshot alone; the caller joins them (bounded.ts, withBound).
import { buildSnapshot, type BuildOptions, type Built } from './build.ts';
import type { ReportBound, UnboundReport } from './bounded.ts';
import { reportBound, whatIf, whatIfPlan, type WhatIfEngine } from './run.ts';
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

/** Which part of a job a task runs: all of it, the report but its bound, or the bound. */
export type WhatIfPart = 'all' | 'plan' | 'bound';

/** What a task of each part answers. */
export type WhatIfPartResult = WhatIfReport | UnboundReport | ReportBound;

export async function runWhatIfJob(
  job: WhatIfJob,
  engine: WhatIfEngine,
  onProgress?: (fraction: number, stage: string) => void,
  part: WhatIfPart = 'all',
): Promise<WhatIfPartResult> {
  const plain = job.built ?? buildSnapshot(job.objects ?? emptyObjects(), job.build ?? { now: 0 });
  if (part === 'bound') return reportBound(engine, plain);
  const built = job.notes?.length ? { ...plain, warnings: [...job.notes, ...plain.warnings] } : plain;
  const mode = job.mode ?? (built.snapshot.pendingPods.length > 0 ? 'provision' : 'consolidate');
  const input = {
    built,
    sources: job.sources,
    options: { mode, exact: job.exact, modeDefaulted: job.mode === undefined },
    ...(onProgress ? { onProgress } : {}),
  };
  return part === 'plan' ? whatIfPlan(input, engine) : whatIf(input, engine);
}

function emptyObjects(): ClusterObjects {
  return { nodes: [], nodeClaims: [], pods: [], nodePools: [], nodeClasses: [], daemonSets: [], pdbs: [] };
}
