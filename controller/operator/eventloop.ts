// How late the controller's event loop runs: every watch event, lease renewal, health probe and metrics scrape
// waits behind whatever holds the loop. Decisions run on the engine's workers, so this stays small; the gauge
// shows it. A 10 ms wall-clock timer notes how late each of its ticks comes (perf_hooks' monitorEventLoopDelay
// does the same in native code, but on Node 20 it drops the first delay after a reset, so a block right after a
// scrape would go unseen); the delays since the last reading give its percentiles.

const RESOLUTION_MS = 10;
/** A reading holds at most the last this many delays (ten minutes of ticks): a ring, older ones overwritten. */
const MAX_SAMPLES = 60_000;

interface LagReading {
  /** Seconds, over the time since the last reading. */
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

export class EventLoopLag {
  private timer: ReturnType<typeof setInterval> | undefined;
  private last = 0;
  private readonly ring = new Float64Array(MAX_SAMPLES);
  /** Delays noted since the last reading (the ring holds the last MAX_SAMPLES of them). */
  private noted = 0;

  start(): void {
    if (this.timer) return;
    this.last = performance.now();
    this.timer = setInterval(() => {
      const now = performance.now();
      this.ring[this.noted++ % MAX_SAMPLES] = Math.max(0, now - this.last - RESOLUTION_MS);
      this.last = now;
    }, RESOLUTION_MS);
    // The gauge never keeps a process alive.
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The delay percentiles since the last reading (zeros when no tick came), in seconds; the next reading starts afresh. */
  read(): LagReading {
    const s = this.ring.slice(0, Math.min(this.noted, MAX_SAMPLES)).sort();
    this.noted = 0;
    const at = (q: number): number => (s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]! / 1000 : 0);
    return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: s.length ? s[s.length - 1]! / 1000 : 0 };
  }
}
