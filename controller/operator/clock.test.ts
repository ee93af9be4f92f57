import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../sim/clock.ts';
import { type Clock, realClock, toKubeMicroTime, toKubeTime } from './clock.ts';

describe('realClock', () => {
  it('sleeps and can be aborted without leaving a timer', async () => {
    await realClock.sleep(0);
    const ac = new AbortController();
    const p = realClock.sleep(60_000, ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
  });

  it('fires and cancels timers', async () => {
    let n = 0;
    const t = realClock.setTimer(0, () => n++);
    const cancelled = realClock.setTimer(0, () => (n += 10));
    cancelled.cancel();
    // Timers with equal delays fire in the order they were set, so this one runs after both.
    await new Promise<void>((resolve) => realClock.setTimer(0, resolve));
    t.cancel();
    expect(n).toBe(1);
  });

  it('fires timers by due time, equal delays in the order set, cancelled ones never', async () => {
    const fired: number[] = [];
    const timers = [5, 1, 3, 1, 8, 3, 2, 13, 1, 5].map((ms, i) => realClock.setTimer(ms, () => fired.push(i)));
    timers[2]!.cancel();
    timers[7]!.cancel();
    timers[7]!.cancel();
    await new Promise<void>((resolve) => realClock.setTimer(30, resolve));
    expect(fired).toEqual([1, 3, 8, 6, 5, 0, 9, 4]);
  });

  it('waits out a delay longer than setTimeout takes (which it would cut to 1 ms)', async () => {
    let fired = false;
    const far = realClock.setTimer(30 * 24 * 3600_000, () => (fired = true));
    await new Promise<void>((resolve) => realClock.setTimer(20, resolve));
    far.cancel();
    expect(fired).toBe(false);
  });

  it('runs a callback outside the async context of whoever set the timers (one timeout fires them all)', async () => {
    const scope = new AsyncLocalStorage<string>();
    const seen: Array<string | undefined> = [];
    scope.run('first', () => realClock.setTimer(2, () => seen.push(scope.getStore())));
    scope.run('second', () => realClock.setTimer(1, () => seen.push(scope.getStore())));
    await new Promise<void>((resolve) => realClock.setTimer(20, resolve));
    expect(seen).toEqual([undefined, undefined]);
  });

  it("runs callbacks due together before the continuations they start, as the simulator's clock does", async () => {
    const seen: string[] = [];
    const run = async (clock: Clock, turn: () => Promise<void>): Promise<string[]> => {
      seen.length = 0;
      const slept = clock.sleep(1).then(() => seen.push('after sleep'));
      clock.setTimer(1, () => seen.push('timer'));
      await turn();
      await slept;
      return [...seen];
    };
    const wall = await run(realClock, async () => {
      // Both due before the event loop comes back to the timers, so one turn fires them.
      for (const until = performance.now() + 5; performance.now() < until; );
      await new Promise<void>((resolve) => realClock.setTimer(1, resolve));
    });
    const sim = manualClock();
    expect(wall).toEqual(['timer', 'after sleep']);
    expect(await run(sim, () => sim.advance(1))).toEqual(wall);
  });

  it('repeats an interval until it is cancelled, and a second cancel does nothing', async () => {
    let n = 0;
    const every = realClock.setInterval(1, () => n++);
    while (n < 3) await new Promise<void>((resolve) => realClock.setTimer(1, resolve));
    every.cancel();
    every.cancel();
    const at = n;
    await new Promise<void>((resolve) => realClock.setTimer(20, resolve));
    expect(n).toBe(at);
  });
});

describe('Kubernetes time formats', () => {
  it('formats metav1.Time in whole seconds and MicroTime with six digits', () => {
    const t = Date.UTC(2025, 0, 2, 3, 4, 5, 678);
    expect(toKubeTime(t)).toBe('2025-01-02T03:04:05Z');
    expect(toKubeMicroTime(t)).toBe('2025-01-02T03:04:05.678000Z');
  });
});
