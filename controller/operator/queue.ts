// A keyed work queue in the style of client-go's: a key is queued at most once, a key being processed
// that is added again runs once more afterwards, requeues are timers on the controller's clock (the
// earliest one per key wins), and failures back off per key (100 ms doubling to 30 s, reset on success).
// Reconcilers never sleep: they return requeueAfter, so the simulated clock can drive everything.
import type { Clock, Timer } from './clock.ts';
import type { ReconcileResult } from './result.ts';

interface QueueOptions {
  readonly name: string;
  readonly clock: Clock;
  readonly reconcile: (key: string) => Promise<ReconcileResult>;
  readonly onError: (key: string, err: unknown, retryInMs: number) => void;
  /** Parallel reconciles (default 10; 1 for singletons). */
  readonly concurrency?: number;
  readonly baseBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** Told about adds, waits, reconciles and retries (controller-runtime's workqueue and reconcile metrics). */
  readonly observer?: QueueObserver;
}

type ReconcileOutcome = 'success' | 'error' | 'requeue_after';

/**
 * Told of each event of a queue. How many keys wait and how many run is read from the queue when wanted (depth,
 * active): a gauge set at every add, start and finish hashed its labels each time, for a value only a scrape reads.
 */
export interface QueueObserver {
  /** A key was queued (not a no-op add of a key already waiting). */
  added(): void;
  /** A key was added back with a delay: a failure backing off, or a requeueAfter. */
  retried(): void;
  /** A reconcile took a key that waited `waitedMs` (wall time). */
  started(waitedMs: number): void;
  /** A reconcile finished after `tookMs` of wall time. */
  finished(tookMs: number, outcome: ReconcileOutcome, err: unknown): void;
}

/**
 * Keys in arrival order. Array.shift moves every remaining key, and a queue of a key per pod holds 100,000 of
 * them while a big cluster comes up (each reconcile started cost a pass over the rest); this takes from a head
 * index and drops the taken part once it is most of the array.
 */
class Fifo {
  private items: string[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(key: string): void {
    this.items.push(key);
  }

  shift(): string | undefined {
    if (this.head >= this.items.length) return undefined;
    const key = this.items[this.head++];
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return key;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}

/** Reconciles a queue starts in one turn of the event loop (pump). */
const STARTS_PER_TURN = 10;

export class WorkQueue {
  private readonly ready = new Fifo();
  private readonly queued = new Set<string>();
  private readonly running = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, { at: number; timer: Timer }>();
  private readonly failures = new Map<string, number>();
  /** Wall time (performance.now) each waiting key was queued and each running key started. */
  private readonly queuedAt = new Map<string, number>();
  private readonly startedAt = new Map<string, number>();
  private scheduled: NodeJS.Immediate | undefined;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];
  /** Reconciles run so far (diagnostics). */
  runs = 0;

  constructor(private readonly opts: QueueOptions) {}

  add(key: string): void {
    if (this.stopped) return;
    if (this.running.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.ready.push(key);
    this.queuedAt.set(key, performance.now());
    this.opts.observer?.added();
    this.schedule();
  }

  /** Adds the key after `ms` of clock time, unless an earlier timer for it is already set. */
  addAfter(key: string, ms: number): void {
    if (this.stopped) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = this.opts.clock.now() + ms;
    const prior = this.timers.get(key);
    if (prior && prior.at <= at) return;
    prior?.timer.cancel();
    const timer = this.opts.clock.setTimer(ms, () => {
      this.timers.delete(key);
      this.add(key);
    });
    this.timers.set(key, { at, timer });
  }

  /** Work that can run now (timers waiting on the clock do not count). */
  busy(): boolean {
    return this.ready.length > 0 || this.running.size > 0 || this.scheduled !== undefined;
  }

  /** Keys waiting for a reconcile to take them (timers waiting on the clock do not count). */
  depth(): number {
    return this.ready.length;
  }

  /** Reconciles running now. */
  active(): number {
    return this.running.size;
  }

  /** Wall-clock milliseconds each running reconcile has taken so far. */
  inProgressMs(): number[] {
    const now = performance.now();
    return [...this.startedAt.values()].map((t) => now - t);
  }

  /** Keys waiting on a requeue timer, with their due times (diagnostics). */
  pending(): Array<{ key: string; at: number }> {
    return [...this.timers].map(([key, t]) => ({ key, at: t.at }));
  }

  /** Stops taking work, cancels timers, and waits for running reconciles. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers.values()) t.timer.cancel();
    this.timers.clear();
    this.ready.clear();
    this.queued.clear();
    this.queuedAt.clear();
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    if (this.running.size) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = setImmediate(() => {
      this.scheduled = undefined;
      this.pump();
    });
  }

  /**
   * Starts waiting keys up to the concurrency, at most STARTS_PER_TURN of them in this turn of the event loop; the
   * rest in the next. A reconcile that has nothing to write runs to its end in the turn it starts in (its awaits
   * resolve at once), so a controller allowed 1,000 at once (operator/reconciles.ts) that started 1,000 such keys
   * in one turn would hold the event loop for all of them: this keeps a turn to what 10 at once did, while
   * reconciles that wait on the API server or the cloud still pile up to the concurrency over a few turns.
   */
  private pump(): void {
    const limit = this.opts.concurrency ?? 10;
    for (let started = 0; !this.stopped && this.running.size < limit && this.ready.length; started++) {
      if (started === STARTS_PER_TURN) {
        this.schedule();
        return;
      }
      const key = this.ready.shift()!;
      this.queued.delete(key);
      this.running.add(key);
      const now = performance.now();
      this.opts.observer?.started(now - (this.queuedAt.get(key) ?? now));
      this.queuedAt.delete(key);
      this.startedAt.set(key, now);
      void this.run(key);
    }
  }

  private async run(key: string): Promise<void> {
    this.runs++;
    let next: { ms: number } | undefined;
    let outcome: ReconcileOutcome = 'success';
    let failure: unknown;
    try {
      const r = await this.opts.reconcile(key);
      this.failures.delete(key);
      if (r.kind === 'requeueAfter') {
        next = { ms: r.ms };
        outcome = 'requeue_after';
      }
    } catch (err) {
      const n = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, n);
      const ms = Math.min(this.opts.maxBackoffMs ?? 30_000, (this.opts.baseBackoffMs ?? 100) * 2 ** (n - 1));
      next = { ms };
      outcome = 'error';
      failure = err;
      this.opts.onError(key, err, ms);
    } finally {
      this.running.delete(key);
      this.opts.observer?.finished(
        performance.now() - (this.startedAt.get(key) ?? performance.now()),
        outcome,
        failure,
      );
      this.startedAt.delete(key);
    }
    if (this.dirty.delete(key)) this.add(key);
    else if (next) {
      this.opts.observer?.retried();
      this.addAfter(key, next.ms);
    }
    if (this.running.size === 0 && this.idleWaiters.length) {
      for (const w of this.idleWaiters.splice(0)) w();
    }
    this.schedule();
  }
}
