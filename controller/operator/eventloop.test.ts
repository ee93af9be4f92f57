// karpenter_ts_event_loop_lag_seconds: a loop held busy shows up at the next scrape, and the reading starts over.
import { describe, expect, it } from 'vitest';
import { EventLoopLag } from './eventloop.ts';
import { Metrics } from './metrics.ts';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the event-loop lag gauge', () => {
  it('reports a loop held busy for 150 ms, by quantile, and zeros before any delay is seen', async () => {
    const metrics = new Metrics();
    const lag = new EventLoopLag();
    metrics.watchEventLoop(lag);
    lag.start();
    try {
      await tick(50);
      await metrics.text();
      const end = performance.now() + 150;
      while (performance.now() < end) {
        /* hold the loop */
      }
      await tick(50);
      const text = await metrics.text();
      const max = Number(/karpenter_ts_event_loop_lag_seconds\{quantile="1"\} (\S+)/.exec(text)?.[1]);
      expect(max).toBeGreaterThanOrEqual(0.1);
      expect(text).toMatch(/karpenter_ts_event_loop_lag_seconds\{quantile="0.99"\} /);
    } finally {
      lag.stop();
    }
  });
});
