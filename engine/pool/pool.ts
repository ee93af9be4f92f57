// The engine's worker pool: piscina threads running engine.worker.ts, each with an instance of the solver
// module compiled once here and shared through workerData; tasks that solve LPs bring HiGHS' module, also compiled
// once here (lp-module.ts). Tasks carry packed buffers (transferred, not copied); cluster models stay on one worker
// (balancer.ts). Every call takes an AbortSignal and a timeout; a
// worker that fails to start, throws or dies surfaces as a rejected call (PoolError), never a hang.
import { availableParallelism } from 'node:os';
import type { ResourceLimits, Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { solverModule, type Build } from '../solver/module.ts';
import { affinityBalancer, type AffinityBalancer, type TaskRouting } from './balancer.ts';
import type { EngineTask, EngineWorkerData, TaskReply, WorkerMemory } from './engine.worker.ts';
import type { IdleTrimOptions } from './idle-trim.ts';
import { workerModule } from './module-url.ts';
import { lpModule } from './lp-module.ts';
import { LargestFirstQueue } from './queue.ts';
import { holdMinSemiSpace, started, WORKER_MIN_SEMI_SPACE_MB } from './young-generation.ts';

export interface PoolOptions {
  /** Worker threads (default: available parallelism, at most 4). */
  readonly threads?: number;
  readonly build?: Build;
  /**
   * Worker file URL (tests point it at a broken one, or at a TypeScript one that wraps the engine worker); default
   * engine.worker.ts beside this file.
   */
  readonly filename?: string;
  readonly idleTimeoutMs?: number;
  /** The improvement phase's wall-clock safety net, ms, and its work budget (engine/solver/wasm.ts). */
  readonly improveMs?: number;
  readonly improveWork?: number;
  /** LP time limit of a what-if report's lower bound, s (default 30: the bound is a yardstick). */
  readonly whatIfLpSeconds?: number;
  /** When a worker gives back its solver's wasm memory (default IDLE_TRIM; tests shorten it). */
  readonly idleTrim?: IdleTrimOptions;
  /** Each worker's V8 heap limits (node:worker_threads' resourceLimits); default Node's. */
  readonly resourceLimits?: ResourceLimits;
  /**
   * The floor under each worker's semi-spaces, MiB (V8's `--min-semi-space-size`, set only while the pool's workers
   * start: young-generation.ts); default WORKER_MIN_SEMI_SPACE_MB, 0 for V8's own.
   */
  readonly minSemiSpaceMb?: number;
}

/**
 * A worker keeps at most twice the wasm linear memory its solves of the last 30-60 s needed (at least 8 MiB), and
 * once it has been idle for 5 s at most 64 MiB: it gives back what one outsized decision grew, busy or not
 * (idle-trim.ts).
 */
const IDLE_TRIM: IdleTrimOptions = { idleMs: 5_000, retainBytes: 64 * 1024 * 1024 };

interface CallOptions {
  readonly signal?: AbortSignal;
  /** Rejects with a PoolError when the call has not finished by then (the worker is stopped). */
  readonly timeoutMs?: number;
}

interface RunOptions extends CallOptions {
  readonly transfer?: readonly Transferable[];
  /** The task solves LPs: it takes HiGHS' module as the pool compiled it (`lp` on the task; lp-module.ts). */
  readonly lp?: boolean;
}

export class PoolError extends Error {
  override name = 'PoolError';
}

function combine(signal: AbortSignal | undefined, timeoutMs: number | undefined): AbortSignal | undefined {
  const signals: AbortSignal[] = [];
  if (signal) signals.push(signal);
  if (timeoutMs !== undefined) signals.push(AbortSignal.timeout(timeoutMs));
  return signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
}

export class EnginePool {
  private readonly piscina: Piscina;
  private readonly errors: Error[] = [];
  private readonly balancer: AffinityBalancer = affinityBalancer();
  /** Tasks given to the pool and not yet settled (queued or running). */
  private pending = 0;
  /** Why the last workers failed to start, until a worker runs (strand). */
  private startFailure: Error | undefined;
  /** The worker threads it keeps (piscina's `threads` lists those started so far). */
  readonly size: number;
  /** Resolves once the pool's first workers run (their young generation's floor is set by then). */
  readonly ready: Promise<void>;

  constructor(opts: PoolOptions = {}) {
    const threads = opts.threads ?? Math.min(4, Math.max(1, availableParallelism()));
    this.size = threads;
    const worker = workerModule(opts.filename ?? './engine.worker.ts', import.meta.url);
    const workerData: EngineWorkerData = {
      module: solverModule(opts.build ?? 'release'),
      solver: {
        ...(opts.build ? { build: opts.build } : {}),
        ...(opts.improveMs !== undefined ? { improveMs: opts.improveMs } : {}),
        ...(opts.improveWork !== undefined ? { improveWork: opts.improveWork } : {}),
      },
      whatIfLpSeconds: opts.whatIfLpSeconds ?? 30,
      idleTrim: opts.idleTrim ?? IDLE_TRIM,
    };
    // piscina creates its first workers in its constructor; their isolates are made in their own threads, read the
    // flag then, and exist once a worker is online.
    const release = holdMinSemiSpace(opts.minSemiSpaceMb ?? WORKER_MIN_SEMI_SPACE_MB);
    try {
      this.piscina = new Piscina({
        filename: worker.filename,
        ...(worker.execArgv ? { execArgv: worker.execArgv } : {}),
        minThreads: threads,
        maxThreads: threads,
        idleTimeout: opts.idleTimeoutMs ?? 60_000,
        loadBalancer: (task, workers) => this.balancer.balance(task, workers),
        // Batch work (what-if jobs) largest first; everything else in the order it came (queue.ts).
        taskQueue: new LargestFirstQueue(),
        workerData,
        ...(opts.resourceLimits ? { resourceLimits: opts.resourceLimits } : {}),
        // piscina's default ('sync') has an idle worker block in Atomics.wait until its next task: nothing else runs
        // in that thread meanwhile, so the worker's idle trim (a timer) never fired. 'async' waits with
        // Atomics.waitAsync and keeps the worker's event loop running; a task's round trip costs the same
        // (docs/engine.md, "Workers, affinity and failure").
        atomics: 'async',
      });
    } catch (e) {
      release();
      throw e;
    }
    this.ready = started(this.piscina.threads).finally(release);
    this.floorReplacements(opts.minSemiSpaceMb ?? WORKER_MIN_SEMI_SPACE_MB);
    // A worker that dies outside a task must not become an unhandled 'error' event.
    this.piscina.on('error', (e: Error) => {
      this.errors.push(e);
      this.strand(e);
    });
    this.piscina.on('workerCreate', () => {
      this.startFailure = undefined;
    });
  }

  /**
   * piscina replaces a worker that dies, but not one that fails while it starts (its module does not load): once no
   * worker is left, the tasks it queued would wait for ever. Its destroy() fails them (there is no worker to stop),
   * and run() says why. A task given later starts a worker again (piscina's run does), and fails the same way if that
   * one cannot start either.
   */
  private strand(e: Error): void {
    if (this.piscina.threads.length > 0) return;
    this.startFailure = e;
    void this.piscina.destroy();
  }

  /**
   * A worker that dies (a crash, a call's timeout) is replaced by piscina in the same turn as it emits
   * 'workerDestroy': the floor is held from then until the replacement runs, so it starts as its predecessor did.
   */
  private floorReplacements(mib: number): void {
    this.piscina.on('workerDestroy', () => {
      const before = new Set(this.piscina.threads);
      const release = holdMinSemiSpace(mib);
      queueMicrotask(() => void started(this.piscina.threads.filter((t) => !before.has(t))).finally(release));
    });
  }

  get threads(): number {
    return this.piscina.threads.length;
  }

  /** The worker threads (crash drills stop one). */
  workerThreads(): readonly Worker[] {
    return this.piscina.threads;
  }

  /** Model -> the thread id of the worker that holds it. */
  get owners(): ReadonlyMap<string, number> {
    return this.balancer.owners;
  }

  /** Workers no task is waiting for: the pool's size less the tasks queued or running (0 when it is behind). */
  get free(): number {
    return Math.max(0, this.size - this.pending);
  }

  /** Errors workers raised outside of tasks (a broken worker file, a crash while idle). */
  get workerErrors(): readonly Error[] {
    return this.errors;
  }

  /** Runs a task on the worker `routing` says; resolves with the worker's reply, rejects if the worker fails. */
  async run(task: EngineTask, routing: TaskRouting, opts: RunOptions = {}): Promise<TaskReply> {
    const signal = combine(opts.signal, opts.timeoutMs);
    // Counted before anything is awaited: a caller reads `free` right after it calls.
    this.pending++;
    try {
      const compiled = opts.lp ? lpModule() : undefined;
      const lp = compiled instanceof Promise ? await compiled : compiled;
      const routed = Object.assign({ ...task }, lp ? { lp } : {}, { [Piscina.queueOptionsSymbol]: routing });
      return (await this.piscina.run(routed, {
        ...(opts.transfer?.length ? { transferList: [...opts.transfer] as never } : {}),
        ...(signal ? { signal } : {}),
      })) as TaskReply;
    } catch (e) {
      const failure = this.startFailure;
      if (failure) throw new PoolError(`engine worker failed to start: ${failure.message}`, { cause: failure });
      if (signal?.aborted)
        throw new PoolError(`engine task aborted: ${String((signal.reason as Error)?.message ?? signal.reason)}`, {
          cause: e,
        });
      throw new PoolError(`engine worker failed: ${(e as Error)?.message ?? String(e)}`, { cause: e });
    } finally {
      this.pending--;
    }
  }

  /** What each worker's memory holds (each reading waits until its worker is idle). */
  async memory(opts: CallOptions = {}): Promise<WorkerMemory[]> {
    const ids = this.piscina.threads.map((t) => t.threadId);
    const replies = await Promise.all(ids.map((worker) => this.run({ kind: 'memory' }, { worker }, opts)));
    return replies.map((r) => {
      if (!r.ok) throw new PoolError(`engine worker memory: ${'stale' in r ? r.message : r.error.message}`);
      return r.value as WorkerMemory;
    });
  }

  /** The model is gone: no worker owns it any more. */
  forget(model: string): void {
    this.balancer.forget(model);
  }

  async close(): Promise<void> {
    await this.piscina.destroy();
  }
}
