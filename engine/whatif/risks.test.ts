// risksOf on hand-made report rows: the spot-share and single-family risks a migration to spot-first
// NodePools raises (a cluster moving from mostly on-demand to all spot over many pools, mostly one family).
import { describe, expect, it } from 'vitest';
import { risksOf, type RiskInput } from './risks.ts';
import type { NodeRow } from './types.ts';

const usage = { requested: 0, allocatable: 1 } as unknown as NodeRow['cpu'];
function row(name: string, fate: NodeRow['fate'], instanceType: string, zone: string, capacityType: string): NodeRow {
  return {
    name,
    fate,
    nodePool: 'default',
    instanceType,
    zone,
    capacityType,
    pricePerHour: 0.1,
    priceKnown: true,
    managed: true,
    cpu: usage,
    memory: usage,
    pods: 1,
  };
}

function input(rows: NodeRow[]): RiskInput {
  return { rows, moves: [], kept: [], placement: new Map(), catalog: new Map(), nodePools: 1 };
}

const ZONES = ['a', 'b', 'c'].map((z) => `us-east-1${z}`);
// Before: six on-demand nodes and two spot nodes (25 % spot), all replaced.
const old = Array.from({ length: 8 }, (_, i) =>
  row(`old-${i}`, 'removed', 'm5.xlarge', ZONES[i % 3]!, i < 6 ? 'on-demand' : 'spot'),
);

describe('risksOf: spot share and one family', () => {
  it('flags a plan that moves most of the cluster to spot, over many pools, naming the new spot nodes and how to pin on-demand', () => {
    const types = ['c7i.large', 'm7i.large', 'r7i.large'];
    const fresh = Array.from({ length: 9 }, (_, i) =>
      row(`new-${i}`, 'new', types[Math.floor(i / 3)]!, ZONES[i % 3]!, 'spot'),
    );
    const risks = risksOf(input([...old, ...fresh]));
    const r = risks.find((x) => x.kind === 'spot-share');
    expect(r).toMatchObject({ severity: 'medium', nodes: fresh.map((f) => f.name) });
    expect(r!.summary).toBe(
      "100% of the nodes after the plan are spot (25% before), in 9 spot pools: the pods on 9 new spot nodes can be interrupted with two minutes' notice",
    );
    expect(r!.fix).toContain('karpenter.sh/capacity-type: on-demand');
    // Nine pools, none holding half: no concentration risk, and three families: no family risk.
    expect(risks.map((x) => x.kind)).not.toContain('spot-concentration');
    expect(risks.map((x) => x.kind)).not.toContain('single-instance-type');
  });

  it('does not flag the spot share when the cluster was as much on spot before', () => {
    const allSpot = old.map((r) => ({ ...r, capacityType: 'spot' }));
    const fresh = Array.from({ length: 9 }, (_, i) =>
      row(`new-${i}`, 'new', ['c7i.large', 'm7i.large', 'r7i.large'][i % 3]!, ZONES[Math.floor(i / 3)]!, 'spot'),
    );
    expect(risksOf(input([...allSpot, ...fresh])).map((x) => x.kind)).not.toContain('spot-share');
  });

  it('flags one family holding most nodes after the plan even when no single type does', () => {
    const sizes = ['c7i-flex.large', 'c7i-flex.xlarge'];
    const fresh = Array.from({ length: 8 }, (_, i) =>
      row(`new-${i}`, 'new', sizes[i % 2]!, ZONES[i % 3]!, 'on-demand'),
    );
    const rows = [
      ...old.map((r) => ({ ...r, capacityType: 'on-demand' })),
      ...fresh,
      row('other', 'new', 'm7i.large', ZONES[0]!, 'on-demand'),
    ];
    const r = risksOf(input(rows)).find((x) => x.kind === 'single-instance-type');
    expect(r?.summary).toBe(
      '8 of 9 nodes after the plan are of the c7i-flex family (c7i-flex.large, c7i-flex.xlarge): a shortage of that family blocks replacements and scale-ups alike',
    );
    expect(r?.fix).toContain('karpenter.k8s.aws/instance-family');
    expect(r?.nodes).toEqual(fresh.map((f) => f.name));
  });
});
