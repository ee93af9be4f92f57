// Coalesces identical requests issued close together into one call (Karpenter pkg/batcher): requests with
// the same key wait until no new one arrived for `idleMs`, or `maxMs` after the first, or `maxItems` are
// queued; then one `exec` serves them all and fans one result (or error) back to each caller. CreateFleet
// uses 35 ms idle / 1 s max / 1000 items; TerminateInstances batches instance ids the same way.
import { realTimers, type Timers } from './periodic.ts';

interface BatcherOptions<I, O> {
  readonly idleMs: number;
  readonly maxMs: number;
  readonly maxItems: number;
  /** Requests with equal keys share a call. */
  readonly key: (input: I) => string;
  /** One result (or Error) per input, in order; a throw fails every input of the batch. */
  readonly exec: (inputs: readonly I[]) => Promise<ReadonlyArray<O | Error>>;
  readonly timers?: Timers;
  /** Observes each executed batch (size, wall time in ms) for metrics. */
  readonly onBatch?: (size: number, ms: number) => void;
}

interface Waiter<I, O> {
  readonly input: I;
  readonly resolve: (o: O) => void;
  readonly reject: (e: unknown) => void;
}

interface Bucket<I, O> {
  readonly waiters: Waiter<I, O>[];
  idle?: unknown;
  max?: unknown;
}

export class Batcher<I, O> {
  private readonly buckets = new Map<string, Bucket<I, O>>();
  private readonly timers: Timers;

  constructor(private readonly o: BatcherOptions<I, O>) {
    this.timers = o.timers ?? realTimers;
  }

  add(input: I): Promise<O> {
    const key = this.o.key(input);
    return new Promise<O>((resolve, reject) => {
      let b = this.buckets.get(key);
      if (!b) {
        b = { waiters: [] };
        this.buckets.set(key, b);
        const bucket = b;
        b.max = this.timers.setTimeout(() => void this.flush(key, bucket), this.o.maxMs);
      }
      b.waiters.push({ input, resolve, reject });
      if (b.idle !== undefined) this.timers.clearTimeout(b.idle);
      const bucket = b;
      if (b.waiters.length >= this.o.maxItems) void this.flush(key, bucket);
      else b.idle = this.timers.setTimeout(() => void this.flush(key, bucket), this.o.idleMs);
    });
  }

  private async flush(key: string, b: Bucket<I, O>): Promise<void> {
    if (this.buckets.get(key) !== b) return; // already flushed
    this.buckets.delete(key);
    if (b.idle !== undefined) this.timers.clearTimeout(b.idle);
    if (b.max !== undefined) this.timers.clearTimeout(b.max);
    const started = Date.now();
    try {
      const results = await this.o.exec(b.waiters.map((w) => w.input));
      b.waiters.forEach((w, i) => {
        const r = results[i];
        if (r instanceof Error) w.reject(r);
        else if (r === undefined) w.reject(new Error(`batch of ${b.waiters.length}: no result for request ${i + 1}`));
        else w.resolve(r);
      });
    } catch (e) {
      for (const w of b.waiters) w.reject(e);
    } finally {
      this.o.onBatch?.(b.waiters.length, Date.now() - started);
    }
  }
}
