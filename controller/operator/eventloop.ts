// How late the controller's event loop runs: every watch event, lease renewal, health probe and metrics scrape
// waits behind whatever holds the loop. Decisions run on the engine's workers, so this stays small; the
// gauge shows it (perf_hooks' event-loop delay histogram, 10 ms resolution, reset at each scrape).
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export interface LagReading {
  /** Seconds, over the time since the last reading. */
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

export class EventLoopLag {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  private running = false;

  start(): void {
    if (this.running) return;
    this.histogram.enable();
    this.running = true;
  }

  stop(): void {
    if (!this.running) return;
    this.histogram.disable();
    this.running = false;
  }

  /** The delay percentiles since the last reading (zeros before any sample), then starts over. */
  read(): LagReading {
    const h = this.histogram;
    const s = (ns: number): number => (Number.isFinite(ns) && h.count > 0 ? ns / 1e9 : 0);
    const out = { p50: s(h.percentile(50)), p90: s(h.percentile(90)), p99: s(h.percentile(99)), max: s(h.max) };
    h.reset();
    return out;
  }
}
