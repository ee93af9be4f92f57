import { describe, expect, it } from 'vitest';
import { sameConditions, withCondition, withoutCondition } from './conditions.ts';

describe('conditions', () => {
  it('keep their transition time while the status stays, and move it when it changes', () => {
    const t0 = Date.UTC(2025, 0, 1);
    const a = withCondition([], 'Ready', 'Unknown', t0);
    const b = withCondition(a, 'Ready', 'Unknown', t0 + 60_000, { reason: 'NodeNotFound' });
    expect(b[0]).toMatchObject({
      status: 'Unknown',
      reason: 'NodeNotFound',
      lastTransitionTime: '2025-01-01T00:00:00Z',
    });
    const c = withCondition(b, 'Ready', 'True', t0 + 120_000);
    expect(c[0]).toMatchObject({ status: 'True', reason: 'Ready', lastTransitionTime: '2025-01-01T00:02:00Z' });
    expect(sameConditions(b, a)).toBe(false);
    expect(
      sameConditions(withCondition(c, 'Other', 'True', t0), [...withCondition(c, 'Other', 'True', t0)].reverse()),
    ).toBe(true);
    expect(withoutCondition(c, 'Ready')).toEqual([]);
  });
});
