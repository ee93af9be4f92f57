// Runs an async task now and then periodically: the next run is `intervalMs` after a success, or a backoff
// after a failure (Karpenter's providers.* controllers requeue the same way). Timers are injected so tests
// drive it with vitest's fake timers or by hand.

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

interface PeriodicOptions {
  readonly intervalMs: number;
  /** Delay after the n-th consecutive failure (1-based). Default: 1 s doubling to 5 min. */
  readonly backoffMs?: (failures: number) => number;
  readonly timers?: Timers;
  readonly onError?: (e: unknown) => void;
}

interface Periodic {
  stop(): void;
}

export function runPeriodically(task: () => Promise<void>, o: PeriodicOptions): Periodic {
  const timers = o.timers ?? realTimers;
  const backoff = o.backoffMs ?? ((n: number) => Math.min(300_000, 1000 * 2 ** (n - 1)));
  let failures = 0;
  let stopped = false;
  let handle: unknown;
  const run = async () => {
    if (stopped) return;
    try {
      await task();
      failures = 0;
    } catch (e) {
      failures++;
      o.onError?.(e);
    }
    if (!stopped) handle = timers.setTimeout(() => void run(), failures ? backoff(failures) : o.intervalMs);
  };
  void run();
  return {
    stop: () => {
      stopped = true;
      if (handle !== undefined) timers.clearTimeout(handle);
    },
  };
}
