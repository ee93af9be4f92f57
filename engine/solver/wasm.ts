// The WebAssembly solver, in the calling thread: encode, copy into linear memory, solve, copy the result
// out, decode. engine/pool/ runs the same module in worker threads.
import { ABI_VERSION } from '../../solver-as/abi.ts';
import { decodeProvision, resultSize } from '../abi/decode.ts';
import { DEFAULT_IMPROVE_SAFETY_MS, encodeProvisionSections, type EncodeScratch } from '../abi/encode.ts';
import { type Block, F64s, Words } from '../abi/writer.ts';
import { ModelCaches } from '../model/caches.ts';
import { draRoute, withDraErrors } from '../model/dra.ts';
import type { ProvisionInput, ProvisionPlan, ProvisionSolver } from '../model/types.ts';
import { type Build, solverModule } from './module.ts';
import { solveReference } from './reference/scheduler.ts';

export interface SolverExports {
  readonly memory: WebAssembly.Memory;
  abiVersion(): number;
  reset(): void;
  alloc(size: number): number;
  solve(input: number): number;
}

class AbiMismatchError extends Error {
  override name = 'AbiMismatchError';
}

/**
 * Instantiates the module and checks its ABI version. `clock` (ms) is what the improvement phase's safety net
 * reads (docs/solver.md, "Budget"); tests slow it down to show that plans do not depend on it.
 */
export function instantiateSolver(
  module: WebAssembly.Module,
  clock: () => number = () => performance.now(),
): SolverExports {
  const inst = new WebAssembly.Instance(module, {
    env: {
      abort(msg: number, file: number, line: number, col: number) {
        throw new Error(`solver aborted at ${line}:${col} (msg@${msg}, file@${file})`);
      },
      now: clock,
    },
  });
  const x = inst.exports as unknown as SolverExports;
  const v = x.abiVersion();
  if (v !== ABI_VERSION)
    throw new AbiMismatchError(`solver module ABI ${v} does not match the engine's ${ABI_VERSION}`);
  return x;
}

/**
 * Runs one solve on an instance: copies `block` in (a Block's sections are written straight into linear memory),
 * solves, and returns a copy of the result block.
 * Typed-array views are made after every call that may grow memory (a grow detaches old views).
 */
export function runBlock(x: SolverExports, block: Uint8Array | Block, setBytes: number): ArrayBuffer {
  x.reset();
  const at = x.alloc(block.byteLength);
  const into = new Uint8Array(x.memory.buffer, at, block.byteLength);
  if (block instanceof Uint8Array) into.set(block);
  else block.writeInto(into);
  const r = x.solve(at);
  const size = resultSize(x.memory.buffer, r, setBytes);
  return x.memory.buffer.slice(r, r + size);
}

export interface WasmSolverOptions {
  readonly build?: Build;
  /** Run the improvement phase after Karpenter's algorithm (default true). */
  readonly improve?: boolean;
  /** The improvement phase's wall-clock safety net, ms (default 20 s); a plan it cuts short says `truncated`. */
  readonly improveMs?: number;
  /** The improvement phase's work budget (default DEFAULT_IMPROVE_WORK): what decides how far it searches. */
  readonly improveWork?: number;
  /** The clock the safety net reads, ms (default performance.now). */
  readonly clock?: () => number;
  /** The compiled module (a pool worker gets the one its pool compiled); default: `build`'s, compiled here. */
  readonly module?: WebAssembly.Module;
  /** Where the solver's own caches keep their catalog-scope slots (model/caches.ts; a pool worker's, across jobs). */
  readonly catalogCaches?: ModelCaches;
  /**
   * Linear memory an instance may keep after a solve, bytes (default: all of it). A wasm memory only grows, so
   * after a solve that needed more the instance is let go (the garbage collector frees its memory) and the next
   * solve instantiates the compiled module afresh: every solve starts from reset(). Letting go after every large
   * solve makes a burst of them (a repack's simulations) grow the memory again each time; a pool worker instead
   * calls `trim` once it has been idle a while.
   */
  readonly retainBytes?: number;
}

export class WasmSolver implements ProvisionSolver {
  readonly name: string;
  /** What solves without caches of their own remember between calls (`input.caches` wins when given). */
  readonly caches: ModelCaches;
  private x: SolverExports | undefined;
  /** The most linear memory one solve used since `takeNeed` last ran, bytes. */
  private need = 0;
  /**
   * The encoder's pool writers, reused by every solve of this instance (a block is written into linear memory before
   * the next encode): a solve allocates no new buffers for them once they have grown to its size.
   */
  private scratch: EncodeScratch | undefined;

  constructor(private readonly opts: WasmSolverOptions = {}) {
    this.name = `wasm-${opts.build ?? 'release'}`;
    this.caches = new ModelCaches(opts.catalogCaches);
  }

  private exports(): SolverExports {
    return (this.x ??= instantiateSolver(
      this.opts.module ?? solverModule(this.opts.build ?? 'release'),
      this.opts.clock,
    ));
  }

  /**
   * Lets the instance go when its linear memory is above `limit` bytes (the next solve instantiates the module
   * afresh, with the same plans); true when it did.
   */
  trim(limit: number): boolean {
    if (this.memoryBytes() <= limit) return false;
    this.x = undefined;
    this.scratch = undefined;
    return true;
  }

  /** Makes the instance now (after a trim), so that the next solve does not. */
  prepare(): void {
    this.exports();
  }

  /**
   * The most linear memory one solve used since the last call, bytes (0 when none ran); starts the count again. A
   * pool worker's trim (pool/idle-trim.ts) keeps the memory that recent solves needed.
   */
  takeNeed(): number {
    const n = this.need;
    this.need = 0;
    return n;
  }

  /** The instance's linear memory, bytes (0 before the first solve). */
  memoryBytes(): number {
    return this.x?.memory.buffer.byteLength ?? 0;
  }

  solve(given: ProvisionInput): ProvisionPlan {
    const full = given.caches ? given : { ...given, caches: this.caches };
    // DRA (engine/model/dra.ts): claims ignored -> solve without those pods; simulated -> the reference solver.
    const route = draRoute(full);
    if (route.kind === 'reference') return solveReference(full);
    const input = route.kind === 'stripped' ? route.input : full;
    const plan = this.solveEncoded(input);
    return route.kind === 'stripped' ? withDraErrors(plan, route.errors) : plan;
  }

  private solveEncoded(input: ProvisionInput): ProvisionPlan {
    const improve = !input.exact && (this.opts.improve ?? true);
    const { block, ctx } = encodeProvisionSections(input, {
      scratch: (this.scratch ??= { words: new Words(), f64: new F64s() }),
      improve,
      improveMs: this.opts.improveMs ?? DEFAULT_IMPROVE_SAFETY_MS,
      ...(this.opts.improveWork !== undefined ? { improveWork: this.opts.improveWork } : {}),
    });
    const x = this.exports();
    const result = runBlock(x, block, ctx.keys.setBytes);
    // Where the solve's allocations ended (the stub runtime only bumps an offset, from reset() on, so that is its
    // peak). alloc(0) takes 16 bytes past it; it grows the memory only if those fall past its end, and the next
    // solve's reset() frees them.
    this.need = Math.max(this.need, x.alloc(0));
    if (this.opts.retainBytes !== undefined) this.trim(this.opts.retainBytes);
    return decodeProvision(ctx, result);
  }
}
