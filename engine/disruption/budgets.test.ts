import { describe, expect, it } from 'vitest';
import type { Budget } from '../domain/types.ts';
import { nodePool, snapshot, stateNode } from '../../test/fixtures/builders.ts';
import {
  budgetExplanation,
  budgetMapping,
  budgetNodes,
  checkBudget,
  MAX_INT32,
  poolBudget,
  windowEnd,
} from './budgets.ts';

const t = (iso: string): number => Date.parse(iso);
const nodes = (n: number, o: Parameters<typeof stateNode>[0] = {}) => Array.from({ length: n }, () => stateNode(o));

function allowed(
  budgets: Budget[],
  numNodes: number,
  now = t('2026-01-05T12:00:00Z'),
  reason: 'Underutilized' | 'Empty' | 'Drifted' = 'Underutilized',
) {
  return poolBudget(nodePool({ budgets }), reason, numNodes, 0, now).allowed;
}

describe('budget values', () => {
  it('rounds percentages up, like PDB maxUnavailable (§3.1 examples)', () => {
    expect(budgetNodes({ nodes: '5%' }, 10)).toBe(1);
    expect(budgetNodes({ nodes: '50%' }, 3)).toBe(2);
    expect(budgetNodes({ nodes: '30%' }, 10)).toBe(3);
    expect(budgetNodes({ nodes: '10%' }, 10)).toBe(1);
    expect(budgetNodes({ nodes: '10%' }, 11)).toBe(2);
    expect(budgetNodes({ nodes: '0%' }, 10)).toBe(0);
    expect(budgetNodes({ nodes: '100%' }, 7)).toBe(7);
  });

  it('takes counts as written', () => {
    expect(budgetNodes({ nodes: '3' }, 10)).toBe(3);
    expect(budgetNodes({ nodes: '0' }, 10)).toBe(0);
    expect(budgetNodes({ nodes: '25' }, 10)).toBe(25);
  });

  it('rejects malformed values and schedule without duration', () => {
    expect(checkBudget({ nodes: '101%' }).ok).toBe(false);
    expect(checkBudget({ nodes: '-1' }).ok).toBe(false);
    expect(checkBudget({ nodes: 'ten' }).ok).toBe(false);
    expect(checkBudget({ nodes: '1', schedule: '0 9 * * *' }).ok).toBe(false);
    expect(checkBudget({ nodes: '1', schedule: '0 9 * * 5-1', duration: 3600_000 }).ok).toBe(false);
    expect(checkBudget({ nodes: '1', schedule: '@daily', duration: 3600_000 }).ok).toBe(true);
  });
});

describe('allowed disruptions per pool', () => {
  it('is the minimum over the budgets that apply to the reason', () => {
    const bs: Budget[] = [
      { nodes: '50%' },
      { nodes: '2', reasons: ['Drifted'] },
      { nodes: '4', reasons: ['Underutilized', 'Empty'] },
    ];
    expect(allowed(bs, 10, undefined, 'Drifted')).toBe(2);
    expect(allowed(bs, 10, undefined, 'Underutilized')).toBe(4);
    expect(allowed(bs, 10, undefined, 'Empty')).toBe(4);
  });

  it('is unlimited without budgets and 10% by the default budget', () => {
    expect(allowed([], 10)).toBe(MAX_INT32);
    expect(allowed([{ nodes: '10%' }], 10)).toBe(1);
    expect(allowed([{ nodes: '10%' }], 25)).toBe(3);
  });

  it('counts a scheduled budget only inside its window (UTC)', () => {
    // Weekdays 09:00-17:00 UTC: no disruption.
    const bs: Budget[] = [{ nodes: '100%' }, { nodes: '0', schedule: '0 9 * * MON-FRI', duration: 8 * 3600_000 }];
    expect(allowed(bs, 10, t('2026-01-05T12:00:00Z'))).toBe(0); // Monday noon
    expect(allowed(bs, 10, t('2026-01-05T16:59:59Z'))).toBe(0);
    // robfig's Next is strictly after now - duration, so the window is [09:00, 17:00)
    expect(allowed(bs, 10, t('2026-01-05T17:00:00Z'))).toBe(10);
    expect(allowed(bs, 10, t('2026-01-05T08:59:00Z'))).toBe(10);
    expect(allowed(bs, 10, t('2026-01-03T12:00:00Z'))).toBe(10); // Saturday
  });

  it('keeps overlapping windows active (duration longer than the period)', () => {
    const bs: Budget[] = [{ nodes: '0', schedule: '@hourly', duration: 2 * 3600_000 }];
    for (const iso of ['2026-01-05T00:00:00Z', '2026-01-05T00:30:00Z', '2026-01-05T13:59:59Z'])
      expect(allowed(bs, 10, t(iso))).toBe(0);
  });

  it('fails closed on any invalid budget, even one for another reason', () => {
    const pb = poolBudget(
      nodePool({
        budgets: [
          { nodes: '100%' },
          { nodes: '1', reasons: ['Drifted'], schedule: '0 0 31 2-1 *', duration: 3600_000 },
        ],
      }),
      'Underutilized',
      10,
      0,
      t('2026-01-05T12:00:00Z'),
    );
    expect(pb.allowed).toBe(0);
    expect(pb.available).toBe(0);
    expect(pb.invalid).toMatch(/budget 1: schedule/);
  });

  it('subtracts disrupting nodes and never goes negative', () => {
    const pool = nodePool({ budgets: [{ nodes: '30%' }] });
    expect(poolBudget(pool, 'Empty', 10, 2, 0).available).toBe(1);
    expect(poolBudget(pool, 'Empty', 10, 10, 0).available).toBe(0);
  });
});

describe('budgetMapping over cluster state (docs/karpenter/test-cases.md §1.3)', () => {
  const pool = nodePool({ budgets: [{ nodes: '100%' }] });
  const ten = () => nodes(10);

  it('ignores unmanaged, uninitialized and instance-terminating nodes', () => {
    const s = snapshot({
      nodePools: [pool],
      nodes: [
        ...ten(),
        stateNode({ managed: false }),
        stateNode({ initialized: false }),
        stateNode({ instanceTerminating: true }),
      ],
    });
    for (const reason of ['Empty', 'Drifted', 'Underutilized'] as const) {
      const b = budgetMapping(s, reason).get('default')!;
      expect(b.numNodes).toBe(10);
      expect(b.available).toBe(10);
    }
  });

  it('clamps to zero when every node is deleting (10%)', () => {
    const s = snapshot({
      nodePools: [nodePool({ budgets: [{ nodes: '10%' }] })],
      nodes: nodes(10, { deleting: true }),
    });
    expect(budgetMapping(s, 'Empty').get('default')!.available).toBe(0);
  });

  it('counts deleting and marked-for-deletion nodes against the budget', () => {
    const s = snapshot({
      nodePools: [pool],
      nodes: [...nodes(8), stateNode({ deleting: true }), stateNode({ markedForDeletion: true })],
    });
    const b = budgetMapping(s, 'Underutilized').get('default')!;
    expect(b.allowed).toBe(10);
    expect(b.disrupting).toBe(2);
    expect(b.available).toBe(8);
  });

  it('counts not-ready nodes against the budget', () => {
    const s = snapshot({ nodePools: [pool], nodes: [...nodes(8), ...nodes(2, { ready: false })] });
    expect(budgetMapping(s, 'Drifted').get('default')!.available).toBe(8);
  });

  it('computes each pool separately (10 pools x 3 nodes at 50% -> 2 each)', () => {
    const pools = Array.from({ length: 10 }, (_, i) => nodePool({ name: `pool-${i}`, budgets: [{ nodes: '50%' }] }));
    const ns = pools.flatMap((p) => nodes(3, { nodePool: p.name }));
    const m = budgetMapping(snapshot({ nodePools: pools, nodes: ns }), 'Empty');
    expect([...m.values()].map((b) => b.available)).toEqual(Array(10).fill(2));
  });
});

describe('budget windows in explanations', () => {
  const noon = t('2026-01-05T08:15:00Z');
  const closed: Budget = { nodes: '0', schedule: '0 8 * * *', duration: 2 * 3600_000 };

  it('finds when the blocking window ends', () => {
    expect(windowEnd(closed, noon)).toBe(t('2026-01-05T10:00:00Z'));
    expect(windowEnd({ nodes: '0' }, noon)).toBeUndefined();
    // chained hourly hits 3h long: the window closes 3h after the last hit before it stops firing
    expect(windowEnd({ nodes: '0', schedule: '0 8-10 * * *', duration: 3 * 3600_000 }, noon)).toBe(
      t('2026-01-05T13:00:00Z'),
    );
  });

  it('says how many nodes the budget allows and until when', () => {
    const pb = poolBudget(nodePool({ budgets: [{ nodes: '100%' }, closed] }), 'Underutilized', 10, 0, noon);
    const e = budgetExplanation('node-a', pb, noon);
    expect(e.code).toBe('budget');
    expect(e.message).toBe('budget for Underutilized allows 0 of 10 nodes until 10:00 UTC');
    expect(e.data['until']).toBe(t('2026-01-05T10:00:00Z'));
  });

  it('mentions nodes already disrupting', () => {
    const pb = poolBudget(nodePool({ budgets: [{ nodes: '2' }] }), 'Empty', 10, 2, noon);
    expect(budgetExplanation('n', pb, noon).message).toBe(
      'budget for Empty allows 2 of 10 nodes, 2 already disrupting',
    );
  });
});
