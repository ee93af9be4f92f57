// Time as the controller sees it. Everything that waits or reads the time takes a Clock, so the same code
// runs on the wall clock in a cluster and on the simulated clock (sped up, or stepped by tests) in the
// simulator. Times are milliseconds since the epoch; durations are milliseconds.
import { AsyncResource } from 'node:async_hooks';

/** A pending callback; cancel() is idempotent and safe after the callback ran. */
export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Resolves after `ms` of this clock's time. Rejects with the signal's reason (an AbortError
   * DOMException unless the caller gave another) when the signal aborts first; never leaves a timer behind.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls `fn` once after `ms`. */
  setTimer(ms: number, fn: () => void): Timer;
  /** Calls `fn` every `ms` until cancelled (the first call after `ms`). */
  setInterval(ms: number, fn: () => void): Timer;
}

/** The reason a sleep rejects with: the signal's own reason, or a standard AbortError. */
function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** sleep() written once over setTimer(), for every Clock implementation. */
export function sleepOn(clock: Pick<Clock, 'setTimer'>, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      timer.cancel();
      reject(abortReason(signal!));
    };
    const timer = clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Converts an epoch-ms time to the RFC 3339 form Kubernetes uses for metav1.Time (whole seconds). */
export function toKubeTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Converts an epoch-ms time to metav1.MicroTime (six fractional digits), as Leases and Events use. */
export function toKubeMicroTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.replace(/\.(\d{3})Z$/, '.$1000Z');
}

type NodeTimeout = ReturnType<typeof setTimeout>;

/** The longest delay setTimeout takes (a longer one it sets to 1 ms, with a warning). */
const TIMEOUT_MAX = 2 ** 31 - 1;

/**
 * A one-shot wall-clock timer: an entry of the timer heap (its place in it, -1 once fired or cancelled). A Node
 * timeout per timer cost about 300 B with its callback; a work queue keeps a requeue timer per NodeClaim and
 * controller.
 */
class HeapTimer implements Timer {
  at = -1;

  constructor(
    /** Due, in performance.now() milliseconds (monotonic, as Node's timers are). */
    readonly due: number,
    /** Order of setting: timers due at the same instant fire in the order they were set. */
    readonly seq: number,
    readonly fn: () => void,
  ) {}

  cancel(): void {
    if (this.at >= 0) wallTimers.remove(this);
  }
}

/**
 * The wall clock's one-shot timers: a binary heap by (due, seq) with one Node timeout armed for the earliest, as
 * client-go's delaying queue keeps one timer for all its waiting items. Callbacks run outside any async context
 * (AsyncLocalStorage): the one timeout is armed by whichever call set the earliest timer, and a callback must not
 * run in the scope of another timer's setter (a reconcile's log fields, reconcilecontext.ts).
 *
 * Timers due together fire in one macrotask, one after the other, so the promise continuations their callbacks
 * start run after all of them (Node runs microtasks between two timeouts' callbacks). Left so on purpose: no caller
 * needs a continuation to run before the next due callback. Every setTimer callback in controller/ is synchronous
 * bookkeeping whose follow-up waits for a later turn or for I/O: WorkQueue.addAfter adds a key that a setImmediate
 * pump starts; the provisioning Batcher's close is idempotent and enqueues a key; the preloader's step and an
 * informer's restart start work that goes to the worker or the API server before it changes shared state; leader
 * election's deadline resolves a race with a request; sleep() resolves its promise. And the simulator's clock
 * (sim/clock.ts, fireDue), on which the e2e and scenario tests run the controller, has always fired its due timers
 * in one synchronous batch the same way. One callback a turn (a setImmediate between them) would let I/O in between
 * as well, and make the two clocks differ.
 */
class TimerHeap {
  private readonly heap: HeapTimer[] = [];
  /** fire(), bound to the context the heap was made in (the module's: no store). */
  private readonly onTimeout = AsyncResource.bind(() => this.fire());
  private seq = 0;
  private armed: NodeTimeout | undefined;
  /** When the armed timeout fires (performance.now() ms). */
  private armedFor = Number.POSITIVE_INFINITY;

  add(ms: number, fn: () => void): Timer {
    // At least 1 ms, as setTimeout makes a shorter delay: a timer set by a callback never fires in the same pass.
    const t = new HeapTimer(performance.now() + Math.max(1, ms), this.seq++, fn);
    this.heap.push(t);
    this.up(this.heap.length - 1);
    this.arm();
    return t;
  }

  remove(t: HeapTimer): void {
    this.detach(t);
    this.arm();
  }

  /** Takes `t` out of the heap. */
  private detach(t: HeapTimer): void {
    const i = t.at;
    const last = this.heap.pop()!;
    t.at = -1;
    if (last !== t) {
      this.put(last, i);
      this.down(i);
      this.up(i);
    }
  }

  /** Fires every timer due by now, in order; a callback that throws does so as an uncaught error of its own. */
  private fire(): void {
    this.armed = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = performance.now();
    for (let head = this.heap[0]; head !== undefined && head.due <= now; head = this.heap[0]) {
      this.detach(head);
      try {
        head.fn();
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
    this.arm();
  }

  /** One Node timeout for the earliest timer (none when there is none); within TIMEOUT_MAX, re-armed past it. */
  private arm(): void {
    const head = this.heap[0];
    if (head === undefined) {
      if (this.armed !== undefined) clearTimeout(this.armed);
      this.armed = undefined;
      this.armedFor = Number.POSITIVE_INFINITY;
      return;
    }
    if (this.armed !== undefined && this.armedFor <= head.due) return;
    if (this.armed !== undefined) clearTimeout(this.armed);
    const ms = Math.min(TIMEOUT_MAX, Math.max(1, Math.ceil(head.due - performance.now())));
    this.armedFor = Math.min(head.due, performance.now() + ms);
    this.armed = setTimeout(this.onTimeout, ms);
  }

  private before(a: HeapTimer, b: HeapTimer): boolean {
    return a.due < b.due || (a.due === b.due && a.seq < b.seq);
  }

  private put(t: HeapTimer, i: number): void {
    this.heap[i] = t;
    t.at = i;
  }

  private up(i: number): void {
    const t = this.heap[i]!;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = this.heap[p]!;
      if (!this.before(t, parent)) break;
      this.put(parent, i);
      i = p;
    }
    this.put(t, i);
  }

  private down(i: number): void {
    const n = this.heap.length;
    const t = this.heap[i]!;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && this.before(this.heap[c + 1]!, this.heap[c]!)) c++;
      const child = this.heap[c]!;
      if (!this.before(child, t)) break;
      this.put(child, i);
      i = c;
    }
    this.put(t, i);
  }
}

const wallTimers = new TimerHeap();

/** A wall-clock interval: its Node timeout, cleared on cancel. */
class WallInterval implements Timer {
  constructor(private readonly t: NodeTimeout) {}

  cancel(): void {
    clearInterval(this.t);
  }
}

/** The wall clock. Timers hold the process open like plain setTimeout; cancel them on shutdown. */
export const realClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return sleepOn(realClock, ms, signal);
  },
  setTimer(ms, fn) {
    return wallTimers.add(ms, fn);
  },
  setInterval(ms, fn) {
    return new WallInterval(setInterval(fn, Math.max(1, ms)));
  },
};
