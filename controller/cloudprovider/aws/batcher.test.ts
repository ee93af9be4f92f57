import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Batcher } from './batcher.ts';

describe('Batcher', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const make = (exec: (inputs: readonly string[]) => Promise<Array<string | Error>>, maxItems = 1000) =>
    new Batcher<string, string>({ idleMs: 35, maxMs: 1000, maxItems, key: (s) => s.split(':')[0]!, exec });

  it('merges requests with the same key that arrive within the idle window into one call', async () => {
    const calls: string[][] = [];
    const b = make(async (inputs) => {
      calls.push([...inputs]);
      return inputs.map((i) => `ok ${i}`);
    });
    const p1 = b.add('a:1');
    await vi.advanceTimersByTimeAsync(20);
    const p2 = b.add('a:2');
    await vi.advanceTimersByTimeAsync(20);
    const p3 = b.add('a:3');
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(35);
    expect(await Promise.all([p1, p2, p3])).toEqual(['ok a:1', 'ok a:2', 'ok a:3']);
    expect(calls).toEqual([['a:1', 'a:2', 'a:3']]);
  });

  it('keeps different keys in different calls', async () => {
    const calls: string[][] = [];
    const b = make(async (inputs) => {
      calls.push([...inputs]);
      return inputs.map(() => 'ok');
    });
    const ps = [b.add('a:1'), b.add('b:1'), b.add('a:2')];
    await vi.advanceTimersByTimeAsync(35);
    await Promise.all(ps);
    expect(calls.sort((x, y) => x[0]!.localeCompare(y[0]!))).toEqual([['a:1', 'a:2'], ['b:1']]);
  });

  it('flushes at the max window even while requests keep arriving', async () => {
    const calls: number[] = [];
    const b = make(async (inputs) => {
      calls.push(inputs.length);
      return inputs.map(() => 'ok');
    });
    const ps: Promise<string>[] = [];
    for (let t = 0; t < 1000; t += 20) {
      ps.push(b.add('a:x'));
      await vi.advanceTimersByTimeAsync(20);
    }
    await vi.advanceTimersByTimeAsync(35);
    await Promise.all(ps);
    expect(calls[0]).toBe(50); // everything added before the 1 s mark
    expect(calls.reduce((s, n) => s + n, 0)).toBe(ps.length);
  });

  it('flushes at maxItems without waiting', async () => {
    const calls: number[] = [];
    const b = make(async (inputs) => {
      calls.push(inputs.length);
      return inputs.map(() => 'ok');
    }, 2);
    await Promise.all([b.add('a:1'), b.add('a:2')]);
    expect(calls).toEqual([2]);
  });

  it('fans results and per-request errors back, and a failed call fails every request', async () => {
    const b = make(async (inputs) => inputs.map((i) => (i.endsWith('bad') ? new Error(`no ${i}`) : `ok ${i}`)));
    const good = b.add('a:good');
    const bad = b.add('a:bad').catch((e: Error) => e);
    await vi.advanceTimersByTimeAsync(35);
    await expect(good).resolves.toBe('ok a:good');
    expect(await bad).toMatchObject({ message: 'no a:bad' });
    const failing = make(async () => {
      throw new Error('throttled');
    });
    const ps = [failing.add('a:1'), failing.add('a:2')].map((p) => p.catch((e: Error) => e.message));
    await vi.advanceTimersByTimeAsync(35);
    expect(await Promise.all(ps)).toEqual(['throttled', 'throttled']);
  });
});
