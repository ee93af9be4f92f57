// When a pool worker gives back wasm memory. A wasm memory only grows while its instance lives, so the worker lets
// the instance go (WasmSolver.trim) and the next solve instantiates the compiled module afresh, with the same plans
// (test/solver/determinism.test.ts). It does so at two moments:
// - when a task ends and the memory is more than twice what the solves of the last window or two needed (and above
//   a floor): a fresh instance would grow to at most that, so the surplus is what an outsized solve (a set-up's
//   10,000-pod decision) left behind. Work that comes back within a window (a disruption pass every 10 s, whose
//   repack at 5,000 nodes needs 25 MiB, or a burst of a repack's simulations) keeps its memory. The fresh instance
//   is made right after the task's reply, not in the next decision;
// - when the worker has been idle a while and holds more than it keeps when idle (`retainBytes`), or more than the
//   rule above allows.
// The memory's size never changes a plan: the solver allocates from it and never reads how large it is.

/** The solver's side of a trim. */
interface Trimmable {
  /** Lets the instance go when its memory is above `limit` bytes; true when it did. */
  trim(limit: number): boolean;
  /** The instance's linear memory, bytes (0 without one). */
  memoryBytes(): number;
  /** The most linear memory one solve used since the last call, bytes (0: no solve); starts the count again. */
  takeNeed(): number;
  /** Makes the instance now, so that the next solve does not. */
  prepare(): void;
}

export interface IdleTrimOptions {
  /** How long the worker must have been idle, ms. */
  readonly idleMs: number;
  /** The window over which recent solves' needs are taken, ms (the last one or two count; default WINDOW_MS). */
  readonly windowMs?: number;
  /** Wasm linear memory an idle worker keeps at most, bytes. */
  readonly retainBytes: number;
  /** Memory at or below which the instance is kept whatever recent solves needed, bytes (default FLOOR_BYTES). */
  readonly floorBytes?: number;
}

/** Below this, a fresh instance is not worth making: 8 MiB (a provisioning decision at 5,000 nodes needs 2-4 MiB). */
const FLOOR_BYTES = 8 * 1024 * 1024;
/** 30 s: longer than the controller's disruption passes are apart, so their memory is kept between them. */
const WINDOW_MS = 30_000;

/** A worker's trim: `busy` when a task starts, `idle` when it ends; see the file's head for when it trims. */
export class IdleTrim {
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Trims done (tests and memory readings). */
  trims = 0;
  /** The most one solve needed in the window now running and in the one before it, bytes. */
  private needNow = 0;
  private needBefore = 0;
  private windowStart: number;

  constructor(
    private readonly solver: Trimmable,
    private readonly opts: IdleTrimOptions,
    /** Monotonic ms (the worker's performance.now). */
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.windowStart = clock();
  }

  /** A task starts: no trim while it runs. */
  busy(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * A task ended: lets an instance go that is larger than recent solves need (and makes the next one after the
   * task's reply), then trims again once `idleMs` pass without another task. The timer does not keep the thread alive.
   */
  idle(): void {
    clearTimeout(this.timer);
    this.noteNeeds();
    if (this.trimTo(this.needLimit())) setImmediate(() => this.solver.prepare());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.noteNeeds();
      this.trimTo(Math.min(this.opts.retainBytes, this.needLimit()));
    }, this.opts.idleMs);
    this.timer.unref();
  }

  /** Folds the solves since the last look into the window; a window older than `windowMs` becomes the one before. */
  private noteNeeds(): void {
    this.needNow = Math.max(this.needNow, this.solver.takeNeed());
    const now = this.clock();
    if (now - this.windowStart < (this.opts.windowMs ?? WINDOW_MS)) return;
    this.needBefore = this.needNow;
    this.needNow = 0;
    this.windowStart = now;
  }

  /** The memory recent solves justify: twice the most one of them needed (what a fresh instance grows to at most). */
  private needLimit(): number {
    return Math.max(this.opts.floorBytes ?? FLOOR_BYTES, 2 * Math.max(this.needNow, this.needBefore));
  }

  private trimTo(limit: number): boolean {
    if (!this.solver.trim(limit)) return false;
    this.trims++;
    return true;
  }
}
