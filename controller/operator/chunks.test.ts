import { describe, expect, it } from 'vitest';
import { turnsDuring } from '../../test/support/turns.ts';
import { forEachInChunks } from './chunks.ts';

describe('forEachInChunks', () => {
  it('visits every item once, in order, with its index', async () => {
    const seen: Array<[string, number]> = [];
    const items = Array.from({ length: 1_003 }, (_, i) => `item-${i}`);
    await forEachInChunks(items, 100, (x, i) => seen.push([x, i]));
    expect(seen).toEqual(items.map((x, i) => [x, i]));
  });

  it('lets the event loop turn between chunks and never inside one', async () => {
    const turnAt: number[] = [];
    await turnsDuring(async (turns) => {
      await forEachInChunks(
        Array.from({ length: 10 }, (_, i) => i),
        3,
        () => turnAt.push(turns()),
      );
    });
    // Chunks [0..2], [3..5], [6..8], [9]: the turn count is the same within a chunk and moves between chunks.
    const chunks = [turnAt.slice(0, 3), turnAt.slice(3, 6), turnAt.slice(6, 9), turnAt.slice(9)];
    for (const c of chunks) expect(new Set(c).size).toBe(1);
    for (let k = 1; k < chunks.length; k++) expect(chunks[k]![0]!).toBeGreaterThan(chunks[k - 1]![0]!);
  });

  it('runs the first chunk in the caller’s turn', async () => {
    const seen: number[] = [];
    const done = forEachInChunks([1, 2, 3, 4], 2, (x) => seen.push(x));
    expect(seen).toEqual([1, 2]);
    await done;
    expect(seen).toEqual([1, 2, 3, 4]);
  });

  it('rejects with the error an item threw, and visits no item after it', async () => {
    const seen: number[] = [];
    const boom = new Error('item 5 is bad');
    const run = forEachInChunks([0, 1, 2, 3, 4, 5, 6, 7], 2, (x) => {
      if (x === 5) throw boom;
      seen.push(x);
    });
    await expect(run).rejects.toBe(boom);
    expect(seen).toEqual([0, 1, 2, 3, 4]);
  });

  it('takes any iterable, and nothing to do is done at once', async () => {
    const seen: string[] = [];
    await forEachInChunks(
      new Map([
        ['a', 1],
        ['b', 2],
        ['c', 3],
      ]).keys(),
      2,
      (k) => seen.push(k),
    );
    expect(seen).toEqual(['a', 'b', 'c']);
    await expect(forEachInChunks([], 5, () => {})).resolves.toBeUndefined();
  });

  it('refuses a chunk that is not a positive integer', async () => {
    await expect(forEachInChunks([1], 0, () => {})).rejects.toThrow(/chunk must be a positive integer, got 0/);
    await expect(forEachInChunks([1], 2.5, () => {})).rejects.toThrow(/got 2.5/);
  });
});
