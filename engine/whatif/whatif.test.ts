// whatIf() on hand-built snapshots with the real catalog (a few families, for speed) and the in-thread
// engine: what the report says about provisioning, consolidation (the disruption engine) and budgets.
import { describe, expect, it } from 'vitest';
import { daemonSet, nodePool, pdb, pod, snapshot, stateNode } from '../../test/fixtures/builders.ts';
import { ec2InstanceTypes } from '../catalog/catalog.ts';
import type { InstanceType, NodePool, Snapshot, StateNode } from '../domain/types.ts';
import type { Built } from './build.ts';
import { WasmSolver } from '../solver/wasm.ts';
import { disruptionPlanner } from './disruption-planner.ts';
import { inThreadEngine } from './engines.ts';
import { whatIf } from './run.ts';
import type { WhatIfMode, WhatIfReport } from './types.ts';

const REGION = 'ap-northeast-2';
const ALL = ec2InstanceTypes({ region: REGION });
const TYPES: readonly InstanceType[] = ALL.filter((t) => /^(m6i|c6i|r6i)\.(large|xlarge|2xlarge)$/.test(t.name));
const type = (name: string): InstanceType => TYPES.find((t) => t.name === name)!;
const engine = inThreadEngine({ improveMs: 20 });
const ZONE = `${REGION}a`;
const onDemand = (name: string) =>
  type(name).offerings.find((o) => o.zone === ZONE && o.capacityType === 'on-demand')!.price;

function node(
  name: string,
  it: string,
  pods: ReturnType<typeof pod>[] = [],
  o: Partial<Parameters<typeof stateNode>[0]> = {},
): StateNode {
  return stateNode({ name, instanceType: type(it), zone: ZONE, capacityType: 'on-demand', pods, ...o });
}

function built(s: Partial<Snapshot> & { pools?: NodePool[] }): Built {
  const pools = s.pools ?? [
    nodePool({ requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }] }),
  ];
  return {
    snapshot: snapshot({ ...s, nodePools: pools, instanceTypes: new Map(pools.map((p) => [p.name, TYPES])) }),
    region: REGION,
    catalog: new Map(ALL.map((t) => [t.name, t])),
    warnings: [],
  };
}

const run = (b: Built, mode: WhatIfMode = 'consolidate'): Promise<WhatIfReport> =>
  whatIf({ built: b, sources: ['test'], options: { mode, exact: true } }, engine);

describe('whatIf: provisioning', () => {
  it('launches capacity for pending pods and prices before and after from the catalog', async () => {
    const b = built({
      nodes: [node('busy', 'm6i.large', [pod({ cpu: '1500m', memory: '1Gi' })])],
      pendingPods: [pod({ name: 'p1', cpu: '3', memory: '4Gi' })],
    });
    const r = await run(b, 'provision');
    expect(r.schema).toBe('karpenter-ts/whatif-report@2');
    expect(r.costPerHourBefore).toBeCloseTo(onDemand('m6i.large'), 6);
    const added = r.nodes.filter((n) => n.fate === 'new');
    expect(added).toHaveLength(1);
    expect(r.costPerHourAfter).toBeCloseTo(r.costPerHourBefore + added[0]!.pricePerHour, 6);
    expect(r.costPerMonthAfter).toBeCloseTo(r.costPerHourAfter * 730, 4);
    expect(r.moves[0]).toMatchObject({
      kind: 'launch',
      add: [added[0]!.name],
      pods: [{ pod: 'default/p1', from: null, to: added[0]!.name }],
    });
    expect(added[0]!.cpu.requested).toBe(3000);
    expect(r.lowerBoundStatus).toBe('optimal');
    expect(r.lowerBoundPerHour).toBeGreaterThan(0);
    expect(r.lowerBoundPerHour).toBeLessThanOrEqual(r.costPerHourAfter + 1e-9);
    expect(['lp', 'patterns', 'patterns-rounded', 'whole-nodes', 'whole-node-patterns']).toContain(r.lowerBoundKind);
    expect(r.kept).toEqual([]);
  });

  it('explains a pending pod nothing can host', async () => {
    const r = await run(built({ pendingPods: [pod({ name: 'huge', cpu: '500', memory: '1Gi' })] }), 'provision');
    expect(r.unschedulable).toHaveLength(1);
    expect(r.unschedulable[0]!.pod).toBe('default/huge');
    expect(r.unschedulable[0]!.reason).not.toBe('');
    expect(r.counts.unschedulable).toBe(1);
  });
});

describe("whatIf: consolidation by the disruption engine (exact: Karpenter's methods)", () => {
  it('deletes an empty node first, then re-packs underutilized nodes into cheaper capacity', async () => {
    const nodes = [
      node('empty', 'm6i.xlarge', [], { pods: [pod({ cpu: '100m', owner: { kind: 'DaemonSet', name: 'ds' } })] }),
      node('a', 'm6i.2xlarge', [pod({ cpu: '500m', memory: '512Mi' })]),
      node('b', 'm6i.2xlarge', [pod({ cpu: '500m', memory: '512Mi' })]),
    ];
    const r = await run(
      built({
        nodes,
        pools: [
          nodePool({
            budgets: [],
            requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
          }),
        ],
      }),
    );
    expect(r.moves[0]).toMatchObject({ step: 1, kind: 'delete', remove: ['empty'], pods: [] });
    expect(r.moves[0]!.savingsPerHour).toBeCloseTo(onDemand('m6i.xlarge'), 6);
    expect(
      r.nodes
        .filter((n) => n.fate === 'removed')
        .map((n) => n.name)
        .sort(),
    ).toEqual(['a', 'b', 'empty']);
    expect(r.costPerHourAfter).toBeLessThan(r.costPerHourBefore);
    expect(r.savingsPerHour).toBeCloseTo(
      r.moves.reduce((a, m) => a + m.savingsPerHour, 0),
      6,
    );
    const moved = r.moves.flatMap((m) => m.pods);
    expect(moved.map((p) => p.from).sort()).toEqual(['a', 'b']);
    const target = r.nodes.find((n) => n.fate === 'new')!;
    expect(moved.every((p) => p.to === target.name)).toBe(true);
    expect(target.pods).toBe(2);
  });

  it('cuts the plan into the steps budgets allow and keeps what a zero budget blocks', async () => {
    const empties = ['e1', 'e2', 'e3'].map((n) => node(n, 'm6i.large'));
    const one = await run(built({ nodes: empties, pools: [nodePool({ budgets: [{ nodes: '1' }] })] }));
    expect(one.moves.map((m) => m.remove)).toEqual([['e1'], ['e2'], ['e3']]);
    const none = await run(built({ nodes: empties, pools: [nodePool({ budgets: [{ nodes: '0' }] })] }));
    expect(none.moves).toEqual([]);
    expect(none.kept.map((k) => k.node).sort()).toEqual(['e1', 'e2', 'e3']);
    expect(none.kept[0]!.reason).toMatch(/budget for Empty allows 0 of 3 nodes/);
    expect(none.costPerHourAfter).toBe(none.costPerHourBefore);
  });

  it('keeps nodes protected by a PDB, do-not-disrupt, or a WhenEmpty policy, and says why', async () => {
    const guarded = pod({ name: 'db', cpu: '100m', labels: { app: 'db' } });
    const nodes = [
      node('pdb', 'm6i.large', [guarded]),
      node('pinned', 'm6i.large', [pod({ cpu: '100m' })], { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }),
    ];
    const r = await run(built({ nodes, pdbs: [pdb('db-pdb', { matchLabels: { app: 'db' }, disruptionsAllowed: 0 })] }));
    const why = Object.fromEntries(r.kept.map((k) => [k.node, k.reason]));
    expect(why['pdb']).toContain('pdb default/db-pdb allows 0 disruptions (pod default/db)');
    expect(why['pinned']).toContain('karpenter.sh/do-not-disrupt');
    expect(r.moves).toEqual([]);

    const lazy = await run(
      built({
        nodes: [node('x', 'm6i.2xlarge', [pod({ cpu: '100m' })])],
        pools: [nodePool({ consolidationPolicy: 'WhenEmpty' })],
      }),
    );
    expect(lazy.kept).toEqual([
      {
        node: 'x',
        code: 'when-empty-policy',
        reason: 'nodepool default consolidates only empty nodes (WhenEmpty) and this node has 1 pod',
      },
    ]);
  });

  it('keeps well-packed nodes when re-packing would not save, and counts daemonsets on new nodes', async () => {
    const full = node('full', 'm6i.large', [pod({ cpu: '1500m', memory: '6Gi' })]);
    const r = await run(built({ nodes: [full], daemonSets: [daemonSet('agent', { cpu: '100m', memory: '64Mi' })] }));
    expect(r.moves).toEqual([]);
    expect(r.kept).toHaveLength(1);
    expect(r.kept[0]!.reason).toMatch(
      /^no cheaper replacement: cheapest fitting option \S+ \$[\d.]+\/h is not below \$[\d.]+\/h/,
    );
  });
});

describe('whatIf: savings breakdown, risks, prices', () => {
  const spotPool = () =>
    nodePool({
      budgets: [],
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand', 'spot'] }],
    });
  const sumParts = (r: WhatIfReport) => Object.values(r.savingsBreakdown.perHour).reduce((a, v) => a + v, 0);

  it('splits the saving into empty nodes, capacity type, packing and instance type, adding up to the total', async () => {
    const nodes = [
      node('empty', 'm6i.xlarge'),
      ...['a', 'b', 'c'].map((n, i) =>
        node(n, 'r6i.xlarge', [pod({ cpu: '600m', memory: '1Gi' })], { zone: `${REGION}${'abc'[i]}` }),
      ),
    ];
    const r = await run(built({ nodes, pools: [spotPool()] }));
    const b = r.savingsBreakdown.perHour;
    expect(b.emptyNodes).toBeCloseTo(onDemand('m6i.xlarge'), 6);
    expect(b.capacityType).toBeGreaterThan(0);
    expect(b.packing).toBeGreaterThan(0);
    expect(sumParts(r)).toBeCloseTo(r.savingsPerHour, 9);
    expect(b.newCapacity).toBe(0);
    expect(r.savingsBreakdown.byCapacityType.find((g) => g.key === 'on-demand')).toMatchObject({
      nodesBefore: 4,
      nodesAfter: 0,
    });
    expect(r.savingsBreakdown.byZone.reduce((a, g) => a + g.costPerHourAfter, 0)).toBeCloseTo(r.costPerHourAfter, 6);
  });

  it('counts capacity launched for pending pods as a negative part', async () => {
    const r = await run(built({ pendingPods: [pod({ name: 'p', cpu: '1', memory: '1Gi' })] }), 'provision');
    expect(r.savingsBreakdown.perHour.newCapacity).toBeCloseTo(-r.costPerHourAfter, 6);
    expect(sumParts(r)).toBeCloseTo(r.savingsPerHour, 9);
    expect(r.notes[0]).toContain('pending pods only; run with --mode consolidate to see consolidation');
  });

  it('prices a reserved node at its on-demand rate and keeps paying for it when it goes', async () => {
    const reserved = node('odcr', 'm6i.2xlarge', [], { capacityType: 'reserved' });
    const r = await run(built({ nodes: [reserved], pools: [spotPool()] }));
    const row = r.nodes.find((n) => n.name === 'odcr')!;
    expect(row.pricePerHour).toBeCloseTo(onDemand('m6i.2xlarge'), 6);
    expect(row.priceKnown).toBe(true);
    expect(r.prices.reservedNodes).toBe(1);
    if (row.fate === 'removed') {
      expect(r.savingsPerHour).toBeCloseTo(0, 9);
      expect(r.savingsBreakdown.perHour.reservations).toBeCloseTo(-row.pricePerHour, 6);
    }
    expect(sumParts(r)).toBeCloseTo(r.savingsPerHour, 9);
  });

  it('states where prices come from and that spot prices are estimates', async () => {
    const r = await run(built({ nodes: [node('a', 'm6i.large', [pod({ cpu: '1' })])] }));
    expect(r.prices.spot.estimate).toBe(true);
    expect(r.prices.onDemand.asOf).toMatch(/\d{4}-\d{2}-\d{2}/);
    expect(r.prices.spot.asOf).toMatch(/\d{4}-\d{2}-\d{2}/);
  });

  const budgetOne = () =>
    nodePool({
      budgets: [{ nodes: '1' }],
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
    });
  const fourNodes = (cpu: string) =>
    ['a', 'b', 'c', 'd'].map((n, i) =>
      node(n, 'm6i.2xlarge', [pod({ name: `${n}-p`, cpu, memory: '2Gi' })], { zone: `${REGION}${'abca'[i]}` }),
    );

  it('spreads replacements over equally cheap zones and moves no pod twice (global repack)', async () => {
    const r = await whatIf(
      {
        built: built({ nodes: fourNodes('3'), pools: [budgetOne()] }),
        sources: ['t'],
        options: { mode: 'consolidate', exact: false },
      },
      engine,
    );
    const added = r.nodes.filter((n) => n.fate === 'new');
    expect(added.length).toBeGreaterThan(1);
    expect(new Set(added.map((n) => n.zone)).size).toBeGreaterThan(1);
    const times = new Map<string, number>();
    for (const m of r.moves) for (const p of m.pods) times.set(p.pod, (times.get(p.pod) ?? 0) + 1);
    expect([...times.values()].every((n) => n === 1)).toBe(true);
    expect(r.risks.map((x) => x.kind)).not.toContain('pods-moved-twice');
  });

  it("flags pods Karpenter's one-node-at-a-time methods move twice", async () => {
    const r = await run(built({ nodes: fourNodes('1500m'), pools: [budgetOne()] }));
    const risk = r.risks.find((x) => x.kind === 'pods-moved-twice')!;
    expect(risk.pods.length).toBeGreaterThan(0);
    expect(risk.fix).toMatch(/budget/);
  });

  it('flags nodes a PDB or do-not-disrupt keeps, naming nodes and pods and what to set', async () => {
    const guarded = pod({ name: 'db', cpu: '100m', labels: { app: 'db' } });
    const nodes = [
      node('pdb', 'm6i.large', [guarded]),
      node('pinned', 'm6i.large', [
        pod({ name: 'job', cpu: '100m', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }),
      ]),
    ];
    const r = await run(built({ nodes, pdbs: [pdb('db-pdb', { matchLabels: { app: 'db' }, disruptionsAllowed: 0 })] }));
    const pdbRisk = r.risks.find((x) => x.kind === 'blocked-by-pdb')!;
    expect(pdbRisk.nodes).toEqual(['pdb']);
    expect(pdbRisk.pods).toEqual(['default/db']);
    expect(pdbRisk.fix).toMatch(/maxUnavailable/);
    expect(r.risks.find((x) => x.kind === 'blocked-by-do-not-disrupt')!.nodes).toEqual(['pinned']);
  });

  it('flags a cluster with no NodePool and nodes karpenter does not manage', async () => {
    const unmanaged = stateNode({
      name: 'ca-1',
      instanceType: type('m6i.large'),
      zone: ZONE,
      capacityType: 'on-demand',
      managed: false,
      pods: [pod({ cpu: '100m' })],
    } as Parameters<typeof stateNode>[0]);
    const r = await run({
      ...built({ nodes: [unmanaged] }),
      snapshot: { ...built({ nodes: [unmanaged] }).snapshot, nodePools: [], instanceTypes: new Map() },
    });
    expect(r.risks.map((x) => x.kind)).toEqual(expect.arrayContaining(['no-nodepools', 'unmanaged-nodes']));
    expect(r.risks[0]!.severity).toBe('high');
  });

  it('gives the same report twice (nothing in it depends on the clock or the load)', async () => {
    const nodes = ['a', 'b', 'c'].map((n) =>
      node(n, 'm6i.2xlarge', [pod({ name: `${n}-p`, cpu: '700m', memory: '1Gi' })]),
    );
    const b = built({ nodes, pools: [spotPool()] });
    const one = await whatIf({ built: b, sources: ['t'], options: { mode: 'consolidate', exact: false } }, engine);
    const two = await whatIf({ built: b, sources: ['t'], options: { mode: 'consolidate', exact: false } }, engine);
    expect(JSON.stringify(two)).toBe(JSON.stringify(one));
  });
});

describe('whatIf: a plan the safety net cut short', () => {
  // The improvement phase is budgeted by work; its wall-clock safety net firing is the one way a plan can depend
  // on the machine (test/solver/determinism.test.ts shows when it fires). Here the solvers mark their plans
  // truncated, as a fired safety net does, and the report must say so.
  const cutShort = {
    name: 'cut-short',
    solve: async (input: Parameters<WasmSolver['solve']>[0]) => ({
      ...(await new WasmSolver({ improveMs: 20 }).solve(input)),
      truncated: true as const,
    }),
  };
  const underused = () =>
    built({
      nodes: [
        node('a', 'm6i.2xlarge', [pod({ cpu: '500m', memory: '512Mi' })]),
        node('b', 'm6i.2xlarge', [pod({ cpu: '500m', memory: '512Mi' })]),
      ],
      pendingPods: [pod({ name: 'p1', cpu: '3', memory: '4Gi' })],
      pools: [
        nodePool({
          budgets: [],
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
        }),
      ],
    });
  const input = (b: Built, mode: WhatIfMode) => ({ built: b, sources: ['test'], options: { mode, exact: false } });

  it('marks the report and adds a note when provisioning was cut short', async () => {
    const cut = {
      ...engine,
      provision: async (...a: Parameters<typeof engine.provision>) => ({
        ...(await engine.provision(...a)),
        truncated: true as const,
      }),
    };
    const r = await whatIf(input(underused(), 'provision'), cut);
    expect(r.truncated).toBe(true);
    expect(r.notes.at(-1)).toMatch(/safety net fired/);
    expect(Object.keys(r).indexOf('truncated')).toBe(Object.keys(r).indexOf('notes') + 1);
  });

  it('marks the report when a consolidation simulation was cut short', async () => {
    const cut = { ...engine, planner: disruptionPlanner(cutShort) };
    const r = await whatIf(input(underused(), 'consolidate'), cut);
    expect(r.moves.length).toBeGreaterThan(1);
    expect(r.truncated).toBe(true);
    expect(r.notes.some((n) => /safety net fired/.test(n))).toBe(true);
  });

  it('says nothing of the kind when nothing was cut', async () => {
    const r = await whatIf(input(underused(), 'consolidate'), engine);
    expect(r.truncated).toBeUndefined();
    expect(r.notes.some((n) => /safety net/.test(n))).toBe(false);
  });
});
