// Every number of docs/karpenter/test-cases.md §9.1-§9.3.
import { describe, expect, it } from 'vitest';
import type { InstanceType } from '../domain/types.ts';
import { nodePool, pod, snapshot, stateNode } from '../../test/fixtures/builders.ts';
import { fakeInstanceType, fakeOffering } from '../../test/fixtures/instancetypes.ts';
import {
  approvalMessage,
  approves,
  couldApprove,
  evaluateBalancedMove,
  nodePoolTotals,
  scoreMove,
} from './balanced.ts';
import { bySavingsRatio, candidateSet } from './candidates.ts';
import { nodeOfferingPrice } from './pricing.ts';
import type { Candidate } from './types.ts';

const DEFAULT = { totalCost: 58.08, totalDisruptionCost: 90 };

describe('scoreMove (balanced_test.go)', () => {
  it('approves the oversized node consolidation (7.26, 4) at about 2.81', () => {
    const s = scoreMove(7.26, 4, DEFAULT);
    expect(s).toBeCloseTo(2.8125, 4);
    expect(approves(s, 2)).toBe(true);
  });

  it('approves spare capacity delete (4.84, 5) at about 1.50 and rejects the marginal move (2.42, 9) at about 0.42', () => {
    expect(scoreMove(4.84, 5, DEFAULT)).toBeCloseTo(1.5, 2);
    expect(approves(scoreMove(4.84, 5, DEFAULT), 2)).toBe(true);
    expect(scoreMove(2.42, 9, DEFAULT)).toBeCloseTo(0.4167, 3);
    expect(approves(scoreMove(2.42, 9, DEFAULT), 2)).toBe(false);
  });

  it('rejects a well-packed node with zero savings (score 0)', () => {
    expect(scoreMove(0, 5, DEFAULT)).toBe(0);
    expect(approves(0, 2)).toBe(false);
  });

  it('approves a replace in a uniform pool at exactly 0.5', () => {
    const s = scoreMove(2.42, 9, { totalCost: 48.4, totalDisruptionCost: 90 });
    expect(s).toBeCloseTo(0.5, 12);
    expect(approves(s, 2)).toBe(true);
  });

  it('approves low-disruption and rejects high-disruption nodes (totals 58.08 / 117)', () => {
    const t = { totalCost: 58.08, totalDisruptionCost: 117 };
    expect(approves(scoreMove(4.84, 5, t), 2)).toBe(true);
    expect(approves(scoreMove(4.84, 32, t), 2)).toBe(false);
  });

  it('is scale invariant', () => {
    expect(scoreMove(4.84, 5, { totalCost: 580.8, totalDisruptionCost: 900 })).toBeCloseTo(
      scoreMove(4.84, 5, DEFAULT),
      12,
    );
  });

  it('handles zero and negative figures', () => {
    expect(scoreMove(1, 0, DEFAULT)).toBe(Infinity);
    expect(approves(Infinity, 2)).toBe(true);
    expect(scoreMove(0, 0, DEFAULT)).toBe(0);
    expect(scoreMove(4.84, 5, { totalCost: 0, totalDisruptionCost: 90 })).toBe(0);
  });

  it('moves the threshold with k: 2 rejects the marginal move, 3 approves it, 1 rejects it', () => {
    const s = scoreMove(2.42, 9, DEFAULT);
    expect(approves(s, 2)).toBe(false);
    expect(approves(s, 3)).toBe(true);
    expect(approves(s, 1)).toBe(false);
  });

  it('scores cross-pool proportional moves equally', () => {
    const od = scoreMove(4.84, 4, { totalCost: 48.4, totalDisruptionCost: 90 });
    const spot = scoreMove(1.45, 4, { totalCost: 14.5, totalDisruptionCost: 90 });
    expect(od).toBeCloseTo(spot, 12);
    expect(approves(od, 2) && approves(spot, 2)).toBe(true);
  });

  it('follows the ScoreMove table', () => {
    // totals chosen so savings fraction and disruption fraction give the listed scores
    const t = { totalCost: 100, totalDisruptionCost: 100 };
    const table: Array<[number, number, number, boolean]> = [
      [20, 5, 4.0, true],
      [10, 10, 1.0, true],
      [5, 50, 0.1, false],
      [10, 0, Infinity, true],
      [0, 10, 0, false],
      [-5, 10, 0, false],
    ];
    for (const [sav, dis, score, ok] of table) {
      expect(scoreMove(sav, dis, t)).toBeCloseTo(score, 9);
      expect(approves(scoreMove(sav, dis, t), 2)).toBe(ok);
    }
  });
});

// m7i.xlarge at 4.84 $/h in the balanced_scoring tests.
const m7i: InstanceType = fakeInstanceType({
  name: 'm7i.xlarge',
  resources: { cpu: 4000, memory: 16 * 2 ** 30, pods: 50 },
  offerings: [fakeOffering({ zone: 'test-zone-1', capacityType: 'on-demand', price: 4.84 })],
});

function clusterOf(
  n: number,
  podsEach: number,
  policy: 'Balanced' | 'WhenEmptyOrUnderutilized' = 'Balanced',
  poolName = 'default',
) {
  const pool = nodePool({ name: poolName, consolidationPolicy: policy });
  const nodes = Array.from({ length: n }, () =>
    stateNode({
      nodePool: poolName,
      instanceType: m7i,
      zone: 'test-zone-1',
      capacityType: 'on-demand',
      pods: Array.from({ length: podsEach }, () => pod()),
    }),
  );
  return { pool, nodes };
}

describe('pool totals and moves (balanced_scoring_test.go)', () => {
  it('totals 5 x m7i.xlarge with one pod each: cost 24.2, disruption 10', () => {
    const { pool, nodes } = clusterOf(5, 1);
    const s = snapshot({ nodePools: [pool], nodes, instanceTypes: [m7i] });
    const t = nodePoolTotals(s, candidateSet(s, 'graceful').all).get('default')!;
    expect(t.totalCost).toBeCloseTo(24.2, 9);
    expect(t.totalDisruptionCost).toBe(10);
  });

  it('zero-priced candidates (unknown instance type) still add disruption: 9.68 and 6', () => {
    const { pool, nodes } = clusterOf(2, 1);
    const unknown = [
      stateNode({ labels: { 'node.kubernetes.io/instance-type': 'gone' }, pods: [pod()] }),
      stateNode({ labels: { 'node.kubernetes.io/instance-type': 'gone' }, pods: [pod()] }),
    ];
    const s = snapshot({ nodePools: [pool], nodes: [...nodes, ...unknown], instanceTypes: [m7i] });
    const t = nodePoolTotals(s, candidateSet(s, 'graceful').all).get('default')!;
    expect(t.totalCost).toBeCloseTo(9.68, 9);
    expect(t.totalDisruptionCost).toBe(8);
    // the catalog's figure counts only the two zero-priced nodes and one priced node with 2 pods:
    const small = snapshot({
      nodePools: [pool],
      nodes: [
        stateNode({ instanceType: m7i, zone: 'test-zone-1', capacityType: 'on-demand', pods: [pod(), pod()] }),
        stateNode({ instanceType: m7i, zone: 'test-zone-1', capacityType: 'on-demand' }),
        unknown[0]!,
      ],
      instanceTypes: [m7i],
    });
    const t2 = nodePoolTotals(small, candidateSet(small, 'graceful').all).get('default')!;
    expect(t2.totalCost).toBeCloseTo(9.68, 9);
    expect(t2.totalDisruptionCost).toBe(6);
  });

  it('an empty move is rejected with no per-pool scores', () => {
    const ev = evaluateBalancedMove([], 1, new Map());
    expect(ev.approved).toBe(false);
    expect(ev.perPool.size).toBe(0);
  });

  it('non-Balanced pools are skipped (approved, absent from perPool)', () => {
    const { pool, nodes } = clusterOf(3, 1, 'WhenEmptyOrUnderutilized');
    const s = snapshot({ nodePools: [pool], nodes, instanceTypes: [m7i] });
    const all = candidateSet(s, 'graceful').all;
    const ev = evaluateBalancedMove([all[0]!], 4.84, nodePoolTotals(s, all));
    expect(ev.approved).toBe(true);
    expect(ev.perPool.has('default')).toBe(false);
  });

  it('a Balanced pool missing from the totals scores 0 and is rejected', () => {
    const { pool, nodes } = clusterOf(3, 1);
    const s = snapshot({ nodePools: [pool], nodes, instanceTypes: [m7i] });
    const ev = evaluateBalancedMove([candidateSet(s, 'graceful').all[0]!], 4.84, new Map());
    expect(ev.approved).toBe(false);
    expect(ev.perPool.get('default')!.score).toBe(0);
  });

  it('deleting 1 of 10 nodes in a Balanced pool scores about 1.0, also across pools', () => {
    const a = clusterOf(10, 1);
    const b = clusterOf(10, 1, 'WhenEmptyOrUnderutilized', 'other');
    const s = snapshot({
      nodePools: [a.pool, b.pool],
      nodes: [...a.nodes, ...b.nodes],
      instanceTypes: new Map([
        ['default', [m7i]],
        ['other', [m7i]],
      ]),
    });
    const all = candidateSet(s, 'graceful').all;
    const totals = nodePoolTotals(s, all);
    const one = all.find((c) => c.nodePool.name === 'default')!;
    const single = evaluateBalancedMove([one], 4.84, totals);
    expect(single.perPool.get('default')!.score).toBeCloseTo(1, 9);
    expect(single.approved).toBe(true);
    const other = all.find((c) => c.nodePool.name === 'other')!;
    const cross = evaluateBalancedMove([one, other], 9.68, totals);
    expect(cross.perPool.get('default')!.score).toBeCloseTo(1, 9);
    expect(cross.perPool.has('other')).toBe(false);
    expect(cross.approved).toBe(true);
  });

  it('a single-node pool delete scores 1.0 with savings fraction 1.0', () => {
    const { pool, nodes } = clusterOf(1, 3);
    const s = snapshot({ nodePools: [pool], nodes, instanceTypes: [m7i] });
    const all = candidateSet(s, 'graceful').all;
    const sc = evaluateBalancedMove(all, 4.84, nodePoolTotals(s, all)).perPool.get('default')!;
    expect(sc.score).toBeCloseTo(1, 9);
    expect(sc.savingsFraction).toBeCloseTo(1, 9);
    expect(approvalMessage(sc)).toBe('score 1.00 >= threshold 0.50 (k: 2, savings 100.0%, disruption 100.0%)');
  });

  it('savings ratio: no pods 4.84, three pods 1.21, unknown type 0; sorted highest first', () => {
    const ratio = (c: Candidate) => c.price / c.disruptionCost;
    const { pool } = clusterOf(0, 0);
    const none = stateNode({ name: 'a', instanceType: m7i, zone: 'test-zone-1', capacityType: 'on-demand' });
    const three = stateNode({
      name: 'b',
      instanceType: m7i,
      zone: 'test-zone-1',
      capacityType: 'on-demand',
      pods: [pod(), pod(), pod()],
    });
    const unknown = stateNode({ name: 'c', labels: { 'node.kubernetes.io/instance-type': 'gone' } });
    const s = snapshot({ nodePools: [pool], nodes: [unknown, three, none], instanceTypes: [m7i] });
    const all = candidateSet(s, 'graceful').all;
    expect(all.map(ratio)).toEqual([0, 1.21, 4.84].map((x) => expect.closeTo(x, 9)));
    expect(bySavingsRatio(all).map((c) => c.node.name)).toEqual(['a', 'b', 'c']);
  });

  it('the single-node pre-filter skips a candidate that even deleted alone cannot reach the threshold', () => {
    const { pool, nodes } = clusterOf(10, 1);
    const crowded = stateNode({
      instanceType: m7i,
      zone: 'test-zone-1',
      capacityType: 'on-demand',
      pods: Array.from({ length: 30 }, () => pod()),
    });
    const s = snapshot({ nodePools: [pool], nodes: [...nodes, crowded], instanceTypes: [m7i] });
    const all = candidateSet(s, 'graceful').all;
    const totals = nodePoolTotals(s, all);
    expect(couldApprove(all.find((c) => c.node === crowded)!, totals)).toBe(false);
    expect(couldApprove(all[0]!, totals)).toBe(true);
  });
});

describe('balanced_adversarial_test.go', () => {
  it('a NaN offering price does not poison the totals or the score', () => {
    const nan = fakeInstanceType({
      name: 'nan',
      offerings: [fakeOffering({ zone: 'test-zone-1', capacityType: 'on-demand', price: NaN })],
    });
    const pool = nodePool({ consolidationPolicy: 'Balanced' });
    const s = snapshot({
      nodePools: [pool],
      nodes: [
        stateNode({ instanceType: nan, zone: 'test-zone-1', capacityType: 'on-demand', pods: [pod()] }),
        stateNode({ instanceType: m7i, zone: 'test-zone-1', capacityType: 'on-demand', pods: [pod()] }),
      ],
      instanceTypes: [nan, m7i],
    });
    const all = candidateSet(s, 'graceful').all;
    const t = nodePoolTotals(s, all).get('default')!;
    expect(Number.isNaN(t.totalCost)).toBe(false);
    expect(t.totalCost).toBeCloseTo(4.84, 9);
    const ev = evaluateBalancedMove(all, 4.84, nodePoolTotals(s, all));
    expect(Number.isNaN(ev.perPool.get('default')!.score)).toBe(false);
  });

  it('the source price ignores availability', () => {
    const it0 = fakeInstanceType({
      name: 'x',
      offerings: [fakeOffering({ zone: 'test-zone-1', capacityType: 'on-demand', price: 1.0, available: false })],
    });
    expect(
      nodeOfferingPrice(it0, {
        'topology.kubernetes.io/zone': 'test-zone-1',
        'karpenter.sh/capacity-type': 'on-demand',
      }),
    ).toBe(1.0);
  });
});
