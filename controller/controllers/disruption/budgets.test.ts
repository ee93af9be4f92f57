import { describe, expect, it } from 'vitest';
import { nodePool, stateNode } from '../../../test/fixtures/builders.ts';
import { allowedDisruptions, budgetMap, UNLIMITED } from './budgets.ts';

const at = (h: number, m = 0) => Date.UTC(2025, 0, 6, h, m); // a Monday
const withBudgets = (budgets: object[]) => ({ ...nodePool({ name: 'p' }), disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized' as const, consolidateAfter: 0, budgets: budgets as never } });

describe('disruption budgets', () => {
  it('round percentages up and take the smallest active budget', () => {
    expect(allowedDisruptions(withBudgets([{ nodes: '10%' }]), 'Empty', 10, at(12))).toBe(1);
    expect(allowedDisruptions(withBudgets([{ nodes: '10%' }]), 'Empty', 11, at(12))).toBe(2);
    expect(allowedDisruptions(withBudgets([{ nodes: '50%' }, { nodes: '3' }]), 'Empty', 10, at(12))).toBe(3);
    expect(allowedDisruptions(withBudgets([{ nodes: '10%' }]), 'Empty', 0, at(12))).toBe(0);
    expect(allowedDisruptions(withBudgets([]), 'Empty', 10, at(12))).toBe(UNLIMITED);
  });

  it('apply a scheduled budget only inside its window (guide-01: 0 nodes for 1h from 09:00 on weekdays)', () => {
    const pool = withBudgets([{ nodes: '10%' }, { nodes: '0', schedule: '0 9 * * MON-FRI', duration: 3_600_000 }]);
    expect(allowedDisruptions(pool, 'Empty', 10, at(8, 59))).toBe(1);
    expect(allowedDisruptions(pool, 'Empty', 10, at(9, 30))).toBe(0);
    expect(allowedDisruptions(pool, 'Empty', 10, at(10, 1))).toBe(1);
  });

  it('apply a budget only to the reasons it names', () => {
    const pool = withBudgets([{ nodes: '0', reasons: ['Drifted'] }, { nodes: '5' }]);
    expect(allowedDisruptions(pool, 'Empty', 10, at(12))).toBe(5);
    expect(allowedDisruptions(pool, 'Drifted', 10, at(12))).toBe(0);
  });

  it('allow nothing when any budget of the pool is invalid (fail closed)', () => {
    expect(allowedDisruptions(withBudgets([{ nodes: '10%' }, { nodes: '1', schedule: '0 9 * * FRI-MON', duration: 60_000, reasons: ['Drifted'] }]), 'Empty', 10, at(12))).toBe(0);
  });

  it('subtract the nodes already disrupting from what the pool allows', () => {
    const pool = withBudgets([{ nodes: '2' }]);
    const nodes = [stateNode({ nodePool: 'p' }), stateNode({ nodePool: 'p', markedForDeletion: true }), stateNode({ nodePool: 'p', ready: false }), stateNode({ nodePool: 'p' })];
    expect(budgetMap([pool], nodes, 'Empty', at(12)).get('p')).toBe(0);
    expect(budgetMap([pool], nodes.slice(0, 2), 'Empty', at(12)).get('p')).toBe(1);
  });
});
