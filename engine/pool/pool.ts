// The solver pool: piscina worker threads, each with its own instance of the solver module compiled once
// here and shared through workerData. Inputs are encoded in the calling thread and moved (transferred,
// not copied) to a worker; the result block is moved back and decoded here. Every call takes an
// AbortSignal and a timeout; a worker that fails to start or throws surfaces as a rejected call.
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import * as A from '../../solver-as/abi.ts';
import { decodeProvision } from '../abi/decode.ts';
import { DEFAULT_IMPROVE_SAFETY_MS, encodeProvision } from '../abi/encode.ts';
import type { BoundModel } from '../bound/model.ts';
import type { ProvisionInput, ProvisionPlan, ProvisionSolver } from '../model/types.ts';
import { draRoute, withDraErrors } from '../model/dra.ts';
import { solveReference } from '../solver/reference/scheduler.ts';
import { solverModule, type Build } from '../solver/wasm.ts';

export interface PoolOptions {
  /** Worker threads (default: available parallelism, at most 4). */
  readonly threads?: number;
  readonly build?: Build;
  /** Worker file; tests point it at a broken one. */
  readonly filename?: string;
  readonly idleTimeoutMs?: number;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
  /** Rejects with a TimeoutError when the call has not finished by then. */
  readonly timeoutMs?: number;
}

const LP_WORKER = new URL('./lp.worker.mjs', import.meta.url).href;
const TASKS_WORKER = new URL('./tasks.worker.mjs', import.meta.url).href;

export interface LpResult {
  readonly status: string;
  /** HiGHS model status (7 = optimal). */
  readonly statusCode: number;
  readonly objective: number;
  readonly seconds: number;
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

export class SolverPool {
  private readonly piscina: Piscina;
  private readonly errors: Error[] = [];

  constructor(opts: PoolOptions = {}) {
    const threads = opts.threads ?? Math.min(4, Math.max(1, availableParallelism()));
    this.piscina = new Piscina({
      filename: opts.filename ?? new URL('./solver.worker.mjs', import.meta.url).href,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: opts.idleTimeoutMs ?? 60_000,
      workerData: {
        module: solverModule(opts.build ?? 'release'),
        abiVersion: A.ABI_VERSION,
        abi: { R_WORDS: A.R_WORDS, R_STATUS: A.R_STATUS, S_OK: A.S_OK, R_SETS: A.R_SETS, R_NSETS: A.R_NSETS },
      },
    });
    // A worker that dies outside a task must not become an unhandled 'error' event.
    this.piscina.on('error', (e: Error) => this.errors.push(e));
  }

  get threads(): number {
    return this.piscina.threads.length;
  }

  /** Errors workers raised outside of tasks (a broken worker file, a crash while idle). */
  get workerErrors(): readonly Error[] {
    return this.errors;
  }

  /** Runs one encoded solve in a worker. The block's buffer is transferred (unusable afterwards). */
  async runBlock(block: Uint8Array, setBytes: number, opts: CallOptions = {}): Promise<ArrayBuffer> {
    const signal = combine(opts.signal, opts.timeoutMs);
    const buffer = block.byteOffset === 0 && block.byteLength === block.buffer.byteLength ? block.buffer : block.slice().buffer;
    try {
      return (await this.piscina.run({ block: buffer, setBytes }, { transferList: [buffer as ArrayBuffer], ...(signal ? { signal } : {}) })) as ArrayBuffer;
    } catch (e) {
      if (signal?.aborted) throw new PoolError(`solve aborted: ${String((signal.reason as Error)?.message ?? signal.reason)}`, { cause: e });
      throw new PoolError('solver worker failed', { cause: e });
    }
  }

  /** Solves a covering LP (engine/bound) with HiGHS' interior-point method in a worker. */
  async solveLp(model: BoundModel, opts: CallOptions & { timeLimitSec?: number } = {}): Promise<LpResult> {
    const signal = combine(opts.signal, opts.timeoutMs);
    const arrays = [model.colCost, model.rowLower, model.starts, model.indices, model.values].map((a) => a.slice());
    const [colCost, rowLower, starts, indices, values] = arrays as [Float64Array, Float64Array, Int32Array, Int32Array, Float64Array];
    try {
      return (await this.piscina.run(
        { numCols: model.numCols, numRows: model.numRows, colCost, rowLower, starts, indices, values, timeLimitSec: opts.timeLimitSec ?? 60 },
        { filename: LP_WORKER, transferList: arrays.map((a) => a.buffer as ArrayBuffer), ...(signal ? { signal } : {}) },
      )) as LpResult;
    } catch (e) {
      if (signal?.aborted) throw new PoolError(`LP aborted: ${String((signal.reason as Error)?.message ?? signal.reason)}`, { cause: e });
      throw new PoolError('LP worker failed', { cause: e });
    }
  }

  /**
   * Runs `name(input)` exported by the module at `module` (a file URL; TypeScript is loaded through tsx in
   * the worker, see tasks.worker.mjs) in a worker; input and result are structured-cloned. For whole jobs
   * that run the engine in the worker's own thread (what-if batches).
   */
  /** `transfer`: objects in `input` moved to the worker (a MessagePort the task reports progress on). */
  async runTask<T>(module: string, name: string, input: unknown, opts: CallOptions & { readonly transfer?: readonly Transferable[] } = {}): Promise<T> {
    const signal = combine(opts.signal, opts.timeoutMs);
    try {
      const transferList = opts.transfer?.length ? { transferList: [...opts.transfer] as never } : {};
      return (await this.piscina.run({ module, name, input }, { filename: TASKS_WORKER, ...transferList, ...(signal ? { signal } : {}) })) as T;
    } catch (e) {
      if (signal?.aborted) throw new PoolError(`task aborted: ${String((signal.reason as Error)?.message ?? signal.reason)}`, { cause: e });
      throw e instanceof Error ? e : new PoolError(String(e));
    }
  }

  async close(): Promise<void> {
    await this.piscina.destroy();
  }
}

/** What the LP bound needs of a pool. */
export type LpSolver = Pick<SolverPool, 'solveLp'>;

/** HiGHS in the calling thread: for code that already runs inside a worker (what-if tasks). */
export function inThreadLp(): LpSolver {
  let mod: Promise<{ default: (task: Record<string, unknown>) => Promise<LpResult> }> | undefined;
  return {
    async solveLp(model, opts = {}) {
      mod ??= import(LP_WORKER);
      const { default: solve } = await mod;
      return solve({ ...model, timeLimitSec: opts.timeLimitSec ?? 60 });
    },
  };
}

/** The wasm solver in the pool: encode here, solve in a worker, decode here. */
export class PooledSolver implements ProvisionSolver {
  readonly name = 'wasm-pool';
  constructor(private readonly pool: SolverPool, private readonly opts: { improve?: boolean; improveMs?: number; improveWork?: number } & CallOptions = {}) {}

  async solve(full: ProvisionInput): Promise<ProvisionPlan> {
    // DRA (engine/model/dra.ts): claims ignored -> solve without those pods; simulated -> the reference solver.
    const route = draRoute(full);
    if (route.kind === 'reference') return solveReference(full);
    const input = route.kind === 'stripped' ? route.input : full;
    const improve = !input.exact && (this.opts.improve ?? true);
    const { block, ctx } = encodeProvision(input, {
      improve,
      improveMs: this.opts.improveMs ?? DEFAULT_IMPROVE_SAFETY_MS,
      ...(this.opts.improveWork !== undefined ? { improveWork: this.opts.improveWork } : {}),
    });
    const result = await this.pool.runBlock(block, ctx.keys.setBytes, this.opts);
    const plan = decodeProvision(ctx, result);
    return route.kind === 'stripped' ? withDraErrors(plan, route.errors) : plan;
  }
}
