// Time as the controller sees it. Everything that waits or reads the time takes a Clock, so the same code
// runs on the wall clock in a cluster and on the simulated clock (sped up, or stepped by tests) in the
// simulator. Times are milliseconds since the epoch; durations are milliseconds.

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

/**
 * A wall-clock timer: its timeout and the function that clears it, both held as fields (a `cancel` closure per timer
 * held a context beside it, and a work queue keeps a requeue timer per NodeClaim and controller).
 */
class WallTimer implements Timer {
  constructor(
    private readonly t: NodeTimeout,
    private readonly clear: (t: NodeTimeout) => void,
  ) {}

  cancel(): void {
    this.clear(this.t);
  }
}

/** The wall clock. Timers hold the process open like plain setTimeout; cancel them on shutdown. */
export const realClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return sleepOn(realClock, ms, signal);
  },
  setTimer(ms, fn) {
    return new WallTimer(setTimeout(fn, Math.max(0, ms)), clearTimeout);
  },
  setInterval(ms, fn) {
    return new WallTimer(setInterval(fn, Math.max(1, ms)), clearInterval);
  },
};
