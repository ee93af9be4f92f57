import { describe, expect, it } from 'vitest';
import { manualClock } from '../../../sim/clock.ts';
import { Batcher } from './batcher.ts';

describe('Batcher', () => {
  it('closes 1 s after the last trigger', async () => {
    const clock = manualClock();
    const closed: number[] = [];
    const start = clock.now();
    const b = new Batcher(clock, 1_000, 10_000, () => closed.push(clock.now() - start));
    b.trigger();
    await clock.advance(900);
    b.trigger();
    await clock.advance(900);
    expect(closed).toEqual([]);
    await clock.advance(100);
    expect(closed).toEqual([1_900]);
    expect(b.isOpen()).toBe(false);
  });

  it('closes 10 s after it opened however busy the triggers are', async () => {
    const clock = manualClock();
    const closed: number[] = [];
    const start = clock.now();
    const b = new Batcher(clock, 1_000, 10_000, () => closed.push(clock.now() - start));
    for (let t = 0; t < 12_000; t += 500) {
      b.trigger();
      await clock.advance(500);
    }
    expect(closed[0]).toBe(10_000);
    b.stop();
  });
});
