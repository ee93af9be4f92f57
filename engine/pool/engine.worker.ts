// An engine worker: the engine's decisions run here, off the caller's event loop. It holds the warm cluster
// models of the clusters routed to it (the balancer keeps a model on one worker), one wasm solver instance
// made from the module its pool compiled, and HiGHS for the lower bound. A task is a model's delta plus one
// operation, a model to drop, a memory reading, or a what-if job (whole, or one of its two parts:
// whatif/job.ts). A crash loses the models; their callers rebuild them.
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import type { MessagePort } from 'node:worker_threads';
import { threadId, workerData } from 'node:worker_threads';
import { ClusterModel, StaleModelError } from '../cluster/model.ts';
import { calledOff } from '../cluster/speculation.ts';
import { runOp, type EngineOp, type OpContext } from '../cluster/ops.ts';
import type { SnapshotDelta } from '../cluster/delta.ts';
import { WasmSolver, type WasmSolverOptions } from '../solver/wasm.ts';
import { adoptSolverModule } from '../solver/module.ts';
import { provision } from '../solver/provision.ts';
import { provisionInput } from '../model/input.ts';
import { lowerBound } from '../bound/index.ts';
import { disruptionPlanner } from '../whatif/disruption-planner.ts';
import { WhatIfError } from '../whatif/build.ts';
import { runWhatIfJob, type WhatIfJob, type WhatIfPart } from '../whatif/job.ts';
import type { WhatIfEngine } from '../whatif/run.ts';
import { TypeStore, type TypeChunk, type WireBuilt } from './catalogs.ts';
import { nativeStringDecoding, unpack } from './codec.ts';
import { IdleTrim, type IdleTrimOptions } from './idle-trim.ts';
import { JobCatalog } from './job-catalog.ts';
import { speculationClock } from './speculation-clock.ts';
import { adoptLpModule, inThreadLp } from './lp.ts';
import { MissingPackageError } from './missing-package.ts';

/** What a task sends back: the operation's result, or why not (plain data: it crosses the thread). */
export type TaskReply =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly stale: true; readonly message: string }
  | {
      readonly ok: false;
      readonly error: {
        readonly name: string;
        readonly message: string;
        readonly stack?: string;
        /** The package a MissingPackageError names. */
        readonly package?: string;
      };
    };

export type EngineTask =
  | {
      readonly kind: 'op';
      readonly model: string;
      readonly keep: boolean;
      readonly delta: ArrayBuffer;
      /** Absent: the delta only (pods shipped ahead of a decision). */
      readonly op?: ArrayBuffer;
      /** A speculative solve's call-off flag (cluster/speculation.ts). */
      readonly callOff?: SharedArrayBuffer;
    }
  | { readonly kind: 'drop'; readonly model: string }
  /** What this worker's memory holds (routed to one worker by its thread id). */
  | { readonly kind: 'memory' }
  | {
      readonly kind: 'whatIf';
      readonly job: ArrayBuffer;
      /** Present when the job's built snapshot names its instance types (pool/catalogs.ts). */
      readonly types?: readonly TypeChunk[];
      readonly port?: MessagePort;
      /** Default 'all'. */
      readonly part?: WhatIfPart;
      /** HiGHS compiled by the pool (lp-module.ts), for this worker's lower bounds. */
      readonly lp?: WebAssembly.Module;
    };

export interface EngineWorkerData {
  readonly module: WebAssembly.Module;
  readonly solver: Omit<WasmSolverOptions, 'module' | 'clock' | 'catalogCaches'>;
  /** The LP time limit of a what-if report's bound, s. */
  readonly whatIfLpSeconds: number;
  /** When the worker gives back its solver's wasm memory (idle-trim.ts). */
  readonly idleTrim: IdleTrimOptions;
}

/** One worker's memory: its V8 isolate's heap and the solver's wasm linear memory (bytes). */
export interface WorkerMemory {
  readonly threadId: number;
  readonly heapUsed: number;
  /** The isolate's heap as reserved (used plus what V8 keeps for the next allocations). */
  readonly heapTotal: number;
  /** Of heapTotal, the pages actually resident. */
  readonly heapPhysical: number;
  /** How large V8 lets this isolate's heap become (its old generation's limit plus the young generation). */
  readonly heapLimit: number;
  /** The young generation's capacity (V8's new space; young-generation.ts keeps a floor under it). */
  readonly newSpace: number;
  /** Memory outside the heap that V8 accounts to it (ArrayBuffers, wasm memory included). */
  readonly external: number;
  /** The wasm solver's linear memory (grows to the largest solve, never shrinks while the instance lives). */
  readonly wasm: number;
  /** Times the worker let an idle solver's instance go (idle-trim.ts). */
  readonly trims: number;
  /** The cluster models this worker holds, by name. */
  readonly models: readonly string[];
  /** Whether msgpackr decodes strings natively here, as slices that keep their message's strings alive (codec.ts). */
  readonly nativeStrings: boolean;
  /** What the what-if jobs' calls found in this worker's catalog-scope caches, by cache (job-catalog.ts). */
  readonly jobCatalog: Readonly<Record<string, { readonly hits: number; readonly misses: number }>>;
  /** The heap in use after a full collection: only when the process runs with --expose-gc (benchmarks). */
  readonly live?: number;
}

function workerMemory(): WorkerMemory {
  const h = getHeapStatistics();
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  return {
    threadId,
    heapUsed: h.used_heap_size,
    heapTotal: h.total_heap_size,
    heapPhysical: h.total_physical_size,
    heapLimit: h.heap_size_limit,
    newSpace: getHeapSpaceStatistics().find((x) => x.space_name === 'new_space')?.space_size ?? 0,
    external: h.external_memory,
    wasm: solver.memoryBytes(),
    trims: trimmer.trims,
    models: [...models.keys()],
    nativeStrings: nativeStringDecoding(),
    jobCatalog: jobCatalog.caches.stats(),
    ...(gc ? { live: getHeapStatistics().used_heap_size } : {}),
  };
}

const data = workerData as EngineWorkerData;
// Whatever in this thread asks for the solver module (the solver, the pattern bound) gets the pool's.
adoptSolverModule(data.solver.build ?? 'release', data.module);
/** The call-off flag of the speculative solve running now, if one is. */
let speculating: SharedArrayBuffer | undefined;
/** What this worker keeps across what-if jobs: their NodePools and daemonsets interned, the catalog-scope caches. */
const jobCatalog = new JobCatalog();
const solver = new WasmSolver({
  ...data.solver,
  module: data.module,
  clock: speculationClock(() => speculating),
  catalogCaches: jobCatalog.caches,
});
const trimmer = new IdleTrim(solver, data.idleTrim);
const ctx: OpContext = { solver: () => solver, lp: inThreadLp, clock: () => performance.now() };
const models = new Map<string, ClusterModel>();
const typeStore = new TypeStore();

const whatIfEngine: WhatIfEngine = {
  provision: (s, pods, o) => provision(s, pods, { exact: o.exact, solver }),
  lowerBound: (s, pods) =>
    lowerBound(provisionInput(s, pods, { caches: jobCatalog.callCaches() }), inThreadLp, {
      timeLimitSec: data.whatIfLpSeconds,
    }),
  planner: disruptionPlanner(solver, jobCatalog.caches),
};

async function onModel(task: Extract<EngineTask, { kind: 'op' }>): Promise<TaskReply> {
  const model = models.get(task.model) ?? new ClusterModel();
  try {
    model.apply(unpack<SnapshotDelta>(task.delta));
    if (task.keep) models.set(task.model, model);
    if (!task.op) return { ok: true, value: undefined };
    // A speculative solve called off before it began: the delta is applied (the caller's mirror counts on it), no plan.
    if (calledOff(task.callOff)) return { ok: true, value: undefined };
    speculating = task.callOff;
    return { ok: true, value: await runOp(model, unpack<EngineOp>(task.op), ctx) };
  } finally {
    speculating = undefined;
    if (!task.keep) models.delete(task.model);
  }
}

async function onWhatIf(task: Extract<EngineTask, { kind: 'whatIf' }>): Promise<TaskReply> {
  const port = task.port;
  if (task.lp) adoptLpModule(task.lp);
  try {
    const job = unpack<WhatIfJob>(task.job);
    const built = job.built && task.types ? typeStore.decode(job.built as unknown as WireBuilt, task.types) : job.built;
    const report = await runWhatIfJob(
      built ? { ...job, built: jobCatalog.intern(built) } : job,
      whatIfEngine,
      port ? (fraction, stage) => port.postMessage({ fraction, stage }) : undefined,
      task.part,
    );
    return { ok: true, value: report };
  } finally {
    port?.close();
  }
}

export default async function run(task: EngineTask): Promise<TaskReply> {
  trimmer.busy();
  try {
    return await runTask(task);
  } finally {
    trimmer.idle();
  }
}

async function runTask(task: EngineTask): Promise<TaskReply> {
  try {
    switch (task.kind) {
      case 'op':
        return await onModel(task);
      case 'drop':
        models.delete(task.model);
        return { ok: true, value: undefined };
      case 'memory':
        return { ok: true, value: workerMemory() };
      case 'whatIf':
        return await onWhatIf(task);
    }
  } catch (e) {
    if (e instanceof StaleModelError) return { ok: false, stale: true, message: e.message };
    const err = e instanceof Error ? e : new Error(String(e));
    return {
      ok: false,
      error: {
        name: e instanceof WhatIfError ? 'WhatIfError' : err.name,
        message: err.message,
        ...(err.stack ? { stack: err.stack } : {}),
        ...(e instanceof MissingPackageError ? { package: e.packageName } : {}),
      },
    };
  }
}
