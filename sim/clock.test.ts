import { describe, expect, it } from 'vitest';
import { DEFAULT_SIM_START, manualClock, scaledClock } from './clock.ts';

describe('manual SimClock', () => {
  it('stands still until advanced', async () => {
    const clock = manualClock();
    expect(clock.now()).toBe(DEFAULT_SIM_START);
    await new Promise((r) => setImmediate(r));
    expect(clock.now()).toBe(DEFAULT_SIM_START);
    await clock.advance(1500);
    expect(clock.now()).toBe(DEFAULT_SIM_START + 1500);
  });

  it('fires due timers in time order, ties in the order they were set, each at its own time', async () => {
    const clock = manualClock(0);
    const seen: Array<[string, number]> = [];
    clock.setTimer(300, () => seen.push(['c', clock.now()]));
    clock.setTimer(100, () => seen.push(['a', clock.now()]));
    clock.setTimer(100, () => seen.push(['b', clock.now()]));
    clock.setTimer(1000, () => seen.push(['late', clock.now()]));
    await clock.advance(500);
    expect(seen).toEqual([
      ['a', 100],
      ['b', 100],
      ['c', 300],
    ]);
    expect(clock.pendingTimers()).toBe(1);
    expect(clock.nextTimerAt()).toBe(1000);
  });

  it('fires timers set by other timers when they fall due within the same advance', async () => {
    const clock = manualClock(0);
    const seen: number[] = [];
    clock.setTimer(10, () => clock.setTimer(10, () => seen.push(clock.now())));
    await clock.advance(25);
    expect(seen).toEqual([20]);
  });

  it('repeats intervals until cancelled, and cancelled timers never fire', async () => {
    const clock = manualClock(0);
    const ticks: number[] = [];
    const interval = clock.setInterval(100, () => ticks.push(clock.now()));
    const once = clock.setTimer(150, () => ticks.push(-1));
    once.cancel();
    await clock.advance(350);
    interval.cancel();
    await clock.advance(1000);
    expect(ticks).toEqual([100, 200, 300]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('resolves sleep on its sim time and rejects it when the signal aborts', async () => {
    const clock = manualClock(0);
    let woke = false;
    const sleeping = clock.sleep(60_000).then(() => (woke = true));
    await clock.advance(59_999);
    expect(woke).toBe(false);
    await clock.advance(1);
    await sleeping;
    expect(woke).toBe(true);

    const ac = new AbortController();
    const aborted = clock.sleep(1000, ac.signal);
    ac.abort();
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
    expect(clock.pendingTimers()).toBe(0);
    await expect(clock.sleep(10, ac.signal)).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('lets registered settlers run between timers', async () => {
    const clock = manualClock(0);
    const order: string[] = [];
    clock.addSettler(async () => {
      order.push(`settle@${clock.now()}`);
    });
    clock.setTimer(5, () => order.push('t5'));
    await clock.advance(10);
    expect(order).toEqual(['settle@0', 't5', 'settle@5', 'settle@10']);
  });

  it('advanceUntil stops as soon as the condition holds and fails with a clear message otherwise', async () => {
    const clock = manualClock(0);
    let done = false;
    clock.setTimer(4000, () => (done = true));
    clock.setTimer(9000, () => {});
    expect(await clock.advanceUntil(() => done, 60_000)).toBe(4000);
    await expect(clock.advanceUntil(() => false, 1000, 'node ready')).rejects.toThrow(
      /node ready did not happen within 1000 ms/,
    );
  });

  it('surfaces a failing timer callback from advance after the other due timers ran', async () => {
    const clock = manualClock(0);
    let other = false;
    clock.setTimer(1, () => {
      throw new Error('boom');
    });
    clock.setTimer(1, () => (other = true));
    await expect(clock.advance(5)).rejects.toThrow('boom');
    expect(other).toBe(true);
  });
});

describe('scaled SimClock', () => {
  it('runs sim time faster than wall time and fires timers on it', async () => {
    const clock = scaledClock(10_000, 0);
    const t0 = clock.now();
    // 20 s of sim time at 10,000x is 2 ms of wall time.
    await clock.sleep(20_000);
    expect(clock.now() - t0).toBeGreaterThanOrEqual(20_000);
    clock.dispose();
  });

  it('can jump ahead with advance, firing what falls due', async () => {
    const clock = scaledClock(1, 0);
    let fired = false;
    clock.setTimer(3_600_000, () => (fired = true));
    await clock.advance(3_600_000);
    expect(fired).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('rejects a non-positive speed', () => {
    expect(() => scaledClock(0)).toThrow(/speed > 0/);
  });
});
