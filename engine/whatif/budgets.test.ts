import { describe, expect, it } from 'vitest';
import { nodePool } from '../../test/fixtures/builders.ts';
import { allowedDisruptions } from './budgets.ts';

// 2026-11-30 is a Monday.
const MON_0930 = Date.parse('2026-11-30T09:30:00Z');
const MON_1130 = Date.parse('2026-11-30T11:30:00Z');

describe('allowedDisruptions (docs/spec/disruption.md §3)', () => {
  it('rounds percentages up, as the spec examples say', () => {
    expect(allowedDisruptions(nodePool({ budgets: [{ nodes: '5%' }] }), 'Underutilized', 10, 0)).toBe(1);
    expect(allowedDisruptions(nodePool({ budgets: [{ nodes: '50%' }] }), 'Underutilized', 3, 0)).toBe(2);
    expect(allowedDisruptions(nodePool({ budgets: [{ nodes: '30%' }] }), 'Underutilized', 10, 0)).toBe(3);
  });

  it('takes the smallest active budget and ignores budgets for other reasons', () => {
    const pool = nodePool({ budgets: [{ nodes: '5' }, { nodes: '2', reasons: ['Empty'] }] });
    expect(allowedDisruptions(pool, 'Empty', 10, 0)).toBe(2);
    expect(allowedDisruptions(pool, 'Underutilized', 10, 0)).toBe(5);
  });

  it('applies a scheduled budget only inside its window (the guide weekday 09:00 UTC hour)', () => {
    const pool = nodePool({ budgets: [{ nodes: '10%' }, { nodes: '0', schedule: '0 9 * * MON-FRI', duration: 3_600_000 }] });
    expect(allowedDisruptions(pool, 'Underutilized', 4, MON_0930)).toBe(0);
    expect(allowedDisruptions(pool, 'Underutilized', 4, MON_1130)).toBe(1);
  });

  it('is unlimited without budgets and fails closed on an invalid one', () => {
    expect(allowedDisruptions(nodePool({ budgets: [] }), 'Drifted', 3, 0)).toBe(Infinity);
    expect(allowedDisruptions(nodePool({ budgets: [{ nodes: '10%' }, { nodes: '1', schedule: '0 9 * * FRI-MON', duration: 60_000, reasons: ['Drifted'] }] }), 'Empty', 10, 0)).toBe(0);
    expect(allowedDisruptions(nodePool({ budgets: [{ nodes: '120%' }] }), 'Empty', 10, 0)).toBe(0);
  });
});
