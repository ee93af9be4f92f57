// The simulator's clock. One implementation, two modes:
//
//   scaled  (speed > 0): sim time = start + (wall time since start) x speed, so at 20x a 60 s node
//                        launch takes 3 s of wall time. One real timeout is armed for the earliest timer.
//   manual  (speed = 0): time stands still until a test calls advance(ms), which fires due timers in
//                        order, letting the simulation settle between them (see addSettler), so tests
//                        never wait on the wall clock.
//
// Either mode can jump forward with advance(). Timers live in one list sorted by (due, seq), so timers
// due at the same instant fire in the order they were set.
import { performance } from 'node:perf_hooks';
import { sleepOn, type Clock, type Timer } from '../controller/operator/clock.ts';

interface Entry {
  due: number;
  seq: number;
  fn: () => void;
  every: number; // 0 for one-shot timers
  live: boolean;
}

interface SimClockOptions {
  /** 0 (the default) for manual mode; otherwise the speed-up over wall time. */
  readonly speed?: number;
  /** Start time in ms since the epoch (default 2025-01-01T00:00:00Z, so runs are reproducible). */
  readonly start?: number;
  /** Where a failing timer callback goes in scaled mode (manual mode throws it from advance()). */
  readonly onError?: (err: unknown) => void;
}

export const DEFAULT_SIM_START = Date.UTC(2025, 0, 1);

const nextMacrotask = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class SimClock implements Clock {
  readonly speed: number;
  private simAnchor: number;
  private realAnchor = performance.now();
  private readonly timers: Entry[] = [];
  private seq = 0;
  private armed: NodeJS.Timeout | undefined;
  private readonly settlers = new Set<() => Promise<void>>();
  private firing = false;
  private readonly onError: (err: unknown) => void;

  constructor(opts: SimClockOptions = {}) {
    const speed = opts.speed ?? 0;
    if (!Number.isFinite(speed) || speed < 0)
      throw new Error(`sim clock: speed must be a finite number >= 0, got ${speed}`);
    this.speed = speed;
    this.simAnchor = opts.start ?? DEFAULT_SIM_START;
    this.onError = opts.onError ?? ((err) => console.error('sim clock: timer callback failed', err));
  }

  get mode(): 'manual' | 'scaled' {
    return this.speed === 0 ? 'manual' : 'scaled';
  }

  now(): number {
    if (this.speed === 0) return this.simAnchor;
    return Math.floor(this.simAnchor + (performance.now() - this.realAnchor) * this.speed);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  setTimer(ms: number, fn: () => void): Timer {
    return this.add(ms, fn, 0);
  }

  setInterval(ms: number, fn: () => void): Timer {
    return this.add(ms, fn, Math.max(1, ms));
  }

  /** Number of timers waiting to fire. */
  pendingTimers(): number {
    return this.timers.length;
  }

  /** Sim time of the earliest pending timer, if any. */
  nextTimerAt(): number | undefined {
    return this.timers[0]?.due;
  }

  /**
   * Registers work to await between timers and after advance(): the sim cluster registers its
   * "wait until every reactor is idle". Returns a function that removes it.
   */
  addSettler(fn: () => Promise<void>): () => void {
    this.settlers.add(fn);
    return () => this.settlers.delete(fn);
  }

  /** Lets pending simulation work run (one macrotask turn, then every settler). */
  async settle(): Promise<void> {
    await nextMacrotask();
    for (const s of [...this.settlers]) await s();
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way, in order. */
  async advance(ms: number): Promise<void> {
    if (!(ms >= 0)) throw new Error(`sim clock: advance(ms) needs ms >= 0, got ${ms}`);
    const target = this.now() + ms;
    await this.settle();
    for (;;) {
      const head = this.timers[0];
      if (!head || head.due > target) break;
      this.jumpTo(head.due);
      this.fireDue();
      await this.settle();
    }
    this.jumpTo(target);
    this.rearm();
    await this.settle();
  }

  /**
   * Advances timer by timer until `done()` holds, at most `maxMs` of sim time. Returns the sim time that
   * passed; throws naming `what` if the condition did not come true in time.
   */
  async advanceUntil(done: () => boolean, maxMs: number, what = 'condition'): Promise<number> {
    const start = this.now();
    const deadline = start + maxMs;
    await this.settle();
    while (!done()) {
      const next = this.nextTimerAt();
      if (next === undefined || next > deadline) {
        await this.advance(Math.max(0, deadline - this.now()));
        if (done()) break;
        throw new Error(`sim clock: ${what} did not happen within ${maxMs} ms of sim time`);
      }
      await this.advance(Math.max(0, next - this.now()));
    }
    return this.now() - start;
  }

  /** Cancels every timer (for shutdown). */
  dispose(): void {
    for (const t of this.timers) t.live = false;
    this.timers.length = 0;
    this.rearm();
  }

  private add(ms: number, fn: () => void, every: number): Timer {
    const entry: Entry = { due: this.now() + Math.max(0, ms), seq: this.seq++, fn, every, live: true };
    this.insert(entry);
    this.rearm();
    return {
      cancel: () => {
        if (!entry.live) return;
        entry.live = false;
        const i = this.timers.indexOf(entry);
        if (i >= 0) this.timers.splice(i, 1);
        this.rearm();
      },
    };
  }

  private insert(e: Entry): void {
    // Binary search for the first entry that sorts after e.
    let lo = 0;
    let hi = this.timers.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const m = this.timers[mid]!;
      if (m.due < e.due || (m.due === e.due && m.seq < e.seq)) lo = mid + 1;
      else hi = mid;
    }
    this.timers.splice(lo, 0, e);
  }

  private jumpTo(t: number): void {
    if (t <= this.now()) return;
    this.simAnchor = t;
    this.realAnchor = performance.now();
  }

  /** Fires every timer due at or before now, in order; errors propagate after the rest have fired. */
  private fireDue(): void {
    if (this.firing) return;
    this.firing = true;
    const errors: unknown[] = [];
    try {
      const now = this.now();
      while (this.timers[0] && this.timers[0].due <= now) {
        const e = this.timers.shift()!;
        if (e.every > 0) {
          e.due += e.every;
          e.seq = this.seq++;
          this.insert(e);
        } else {
          e.live = false;
        }
        try {
          e.fn();
        } catch (err) {
          errors.push(err);
        }
      }
    } finally {
      this.firing = false;
    }
    this.rearm();
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, 'sim clock: timer callbacks failed');
  }

  /** Scaled mode: keep exactly one real timeout armed for the earliest timer. */
  private rearm(): void {
    if (this.armed) {
      clearTimeout(this.armed);
      this.armed = undefined;
    }
    const head = this.timers[0];
    if (this.speed === 0 || !head) return;
    const wait = Math.max(0, (head.due - this.now()) / this.speed);
    this.armed = setTimeout(() => {
      this.armed = undefined;
      try {
        this.fireDue();
      } catch (err) {
        this.onError(err);
      }
    }, Math.ceil(wait));
  }
}

/** A manual clock for tests: time moves only through advance()/advanceUntil(). */
export function manualClock(start?: number): SimClock {
  return new SimClock({ speed: 0, ...(start !== undefined ? { start } : {}) });
}

/** A clock running `speed` times faster than the wall clock. */
export function scaledClock(speed: number, start?: number): SimClock {
  if (!(speed > 0)) throw new Error(`sim clock: a scaled clock needs speed > 0, got ${speed}`);
  return new SimClock({ speed, ...(start !== undefined ? { start } : {}) });
}
