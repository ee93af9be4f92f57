// When a pool worker gives back wasm memory: a wasm memory only grows while its instance lives, so a worker
// whose solver grew past what it keeps lets the instance go (WasmSolver.trim) once it has been idle a while. A
// burst of large solves (a repack's simulations, a 10,000-pod decision) keeps its memory while it lasts; the
// next solve after a trim instantiates the module afresh and makes the same plans (test/solver/determinism.test.ts).

/** The solver's side of a trim. */
interface Trimmable {
  /** Lets the instance go when its memory is above `limit` bytes; true when it did. */
  trim(limit: number): boolean;
}

export interface IdleTrimOptions {
  /** How long the worker must have been idle, ms. */
  readonly idleMs: number;
  /** Wasm linear memory the worker keeps, bytes. */
  readonly retainBytes: number;
}

/** A worker's idle trim: `busy` when a task starts, `idle` when it ends; the trim runs after `idleMs` of idleness. */
export class IdleTrim {
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Trims done (tests and memory readings). */
  trims = 0;

  constructor(
    private readonly solver: Trimmable,
    private readonly opts: IdleTrimOptions,
  ) {}

  /** A task starts: no trim while it runs. */
  busy(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** A task ended: trim once `idleMs` pass without another. The timer does not keep the thread alive. */
  idle(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.solver.trim(this.opts.retainBytes)) this.trims++;
    }, this.opts.idleMs);
    this.timer.unref();
  }
}
