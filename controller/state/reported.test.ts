import { describe, expect, it } from 'vitest';
import { ReportedOnce } from './reported.ts';

describe('ReportedOnce', () => {
  it('tells the first sight of a key, and past its bound forgets them all so each is told once more', () => {
    const r = new ReportedOnce(3);
    expect(['a', 'b', 'a', 'c', 'b'].map((k) => r.first(k))).toEqual([true, true, false, true, false]);
    // Full: a fourth key clears the set, so the earlier keys are told again, once.
    expect(r.first('d')).toBe(true);
    expect(['a', 'a', 'd'].map((k) => r.first(k))).toEqual([true, false, false]);
  });
});
