import { describe, expect, it } from 'vitest';
import { ModelCaches } from '../model/caches.ts';
import type { InstanceType, Snapshot } from '../domain/types.ts';
import type { NewNodeClaimPlan } from '../model/types.ts';
import { DEFAULT_ENGINE_OPTIONS } from '../domain/types.ts';
import { nodePool, pdb, pod, pods, snapshot, stateNode } from '../../test/fixtures/builders.ts';
import { FAKE_WELL_KNOWN_LABELS, fakeInstanceType, fakeOffering } from '../../test/fixtures/instancetypes.ts';
import { withExtraWellKnown } from '../scheduling/labels.ts';
import { solveReference } from '../solver/reference/scheduler.ts';
import { WasmSolver } from '../solver/wasm.ts';
import { verifyPlan } from '../verify/verify.ts';
import { applyCommand } from './apply.ts';
import { budgetMapping } from './budgets.ts';
import { candidateSet } from './candidates.ts';
import { disrupt } from './disrupt.ts';
import { methodFilter } from './filters.ts';
import { resolve } from './method.ts';
import { planRepack } from './repack.ts';
import { capGain, cappedTypes } from './repackcap.ts';
import { concaveBeyond, concaveBound } from './repacksearch.ts';
import { validate } from './validate.ts';

const reference = { name: 'reference', solve: solveReference };
const wasm = new WasmSolver();
const wellKnownLabels = withExtraWellKnown(FAKE_WELL_KNOWN_LABELS);
const Gi = 2 ** 30;
const od = (price: number) => [fakeOffering({ zone: 'test-zone-1', capacityType: 'on-demand', price })];

const big = fakeInstanceType({ name: 'big', resources: { cpu: 8000, memory: 8 * Gi, pods: 20 }, offerings: od(10) });
const small = fakeInstanceType({ name: 'small', resources: { cpu: 4000, memory: 4 * Gi, pods: 20 }, offerings: od(1) });

const onNode = (it: InstanceType, o: Parameters<typeof stateNode>[0] = {}) =>
  stateNode({ instanceType: it, zone: 'test-zone-1', capacityType: 'on-demand', ...o });

async function plan(s: Snapshot, solver = reference) {
  const r = resolve({ solver, wellKnownLabels });
  const all = candidateSet(s, 'graceful').all;
  const eligible = all.filter((c) => methodFilter('repack', c, s.now) === undefined);
  return planRepack(s, eligible, all, budgetMapping(s, 'Underutilized'), r);
}

describe('global repack', () => {
  it('splits one large node into two cheaper ones, which Karpenter cannot do', async () => {
    const pool = nodePool({ consolidateAfter: 0, budgets: [{ nodes: '100%' }] });
    const n = onNode(big, { name: 'big-node', pods: pods(2, { cpu: '3', memory: '1Gi' }) });
    const s = snapshot({ nodePools: [pool], nodes: [n], instanceTypes: [big, small] });

    const karpenter = await disrupt(s, { solver: reference, wellKnownLabels, repack: 'off' });
    expect(karpenter.decision.kind).toBe('noop');
    if (karpenter.decision.kind === 'noop')
      expect(karpenter.decision.explanations[0]!.code).toBe('no-cheaper-replacement');

    const withRepack = await disrupt(s, { solver: reference, wellKnownLabels });
    const d = withRepack.decision;
    expect(d.kind).toBe('replace');
    if (d.kind === 'noop') return;
    expect(d.method).toBe('repack');
    expect(d.candidates.map((c) => c.name)).toEqual(['big-node']);
    expect(d.replacements.map((r) => r.instanceTypes.map((o) => o.name))).toEqual([['small'], ['small']]);
    expect(d.savingsPerHour).toBeCloseTo(8, 9);
    expect(d.podsMoved).toHaveLength(2);
    expect(new Set(d.podsMoved.map((m) => m.to))).toEqual(new Set(['replacement:0', 'replacement:1']));

    const p = await plan(s);
    for (const step of p.steps) {
      const v = step.verification();
      expect(verifyPlan(v.input, v.plan)).toEqual([]);
    }

    // Validation after the delay re-solves within the planned options: an unconstrained solve would put
    // both pods on one dearer node and wrongly call the split stale.
    expect(await validate(s, d, { solver: reference, wellKnownLabels })).toMatchObject({ ok: true });
    const busier = snapshot({
      nodePools: [pool],
      nodes: [onNode(big, { name: 'big-node', pods: pods(3, { cpu: '2500m', memory: '1Gi' }) })],
      instanceTypes: [big, small],
    });
    expect(await validate(busier, d, { solver: reference, wellKnownLabels })).toMatchObject({
      ok: false,
      category: 'scheduling',
    });
  });

  it("has the last word on a node it cannot improve, while single-node consolidation's event stays", async () => {
    const pool = nodePool({ consolidateAfter: 0, budgets: [{ nodes: '100%' }] });
    const s = snapshot({
      nodePools: [pool],
      nodes: [onNode(big, { name: 'big-node', pods: pods(2, { cpu: '3', memory: '1Gi' }) })],
      instanceTypes: [big],
    });
    const d = (await disrupt(s, { solver: reference, wellKnownLabels })).decision;
    expect(d.kind).toBe('noop');
    expect(d.explanations[0]).toMatchObject({
      code: 'no-saving-repack',
      event: { reason: 'Unconsolidatable', message: "Can't replace with a cheaper node" },
    });
  });

  it('never touches a node whose pods a PDB or do-not-disrupt protects', async () => {
    const pool = nodePool({ consolidateAfter: 0, budgets: [{ nodes: '100%' }] });
    const guarded = onNode(small, { name: 'guarded', pods: [pod({ cpu: '500m', labels: { app: 'db' } })] });
    const pinned = onNode(small, {
      name: 'pinned',
      pods: [pod({ cpu: '500m', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })],
    });
    const loose = [
      onNode(small, { name: 'a', pods: [pod({ cpu: '500m' })] }),
      onNode(small, { name: 'b', pods: [pod({ cpu: '500m' })] }),
    ];
    const s = snapshot({
      nodePools: [pool],
      nodes: [guarded, pinned, ...loose],
      instanceTypes: [small],
      pdbs: [pdb('db', { matchLabels: { app: 'db' }, disruptionsAllowed: 0 })],
    });
    const p = await plan(s);
    const touched = p.steps.flatMap((st) => st.command.candidates.map((c) => c.name));
    expect(touched.length).toBeGreaterThan(0);
    expect(touched).not.toContain('guarded');
    expect(touched).not.toContain('pinned');
    let after = s;
    for (const st of p.steps) {
      const v = st.verification();
      expect(verifyPlan(v.input, v.plan)).toEqual([]);
      after = applyCommand(after, st.command);
    }
    expect(after.nodes.map((n) => n.name)).toEqual(expect.arrayContaining(['guarded', 'pinned']));
    expect(after.nodes.length).toBeLessThan(s.nodes.length);
  });

  it('cuts the plan into steps that each fit the budget, planned on the state after the previous step', async () => {
    const pool = nodePool({ consolidateAfter: 0, budgets: [{ nodes: '2' }] });
    // ten small nodes a quarter full: two would do
    const nodes = Array.from({ length: 10 }, (_, i) => onNode(small, { name: `n${i}`, pods: [pod({ cpu: '700m' })] }));
    const s = snapshot({ nodePools: [pool], nodes, instanceTypes: [small, big], options: DEFAULT_ENGINE_OPTIONS });
    const p = await plan(s, wasm);
    expect(p.steps.length).toBeGreaterThan(1);
    let working = s;
    for (const st of p.steps) {
      const allowed = budgetMapping(working, 'Underutilized').get('default')!.available;
      expect(st.command.candidates.length).toBeLessThanOrEqual(allowed);
      const v = st.verification();
      expect(verifyPlan(v.input, v.plan)).toEqual([]);
      expect(st.command.savingsPerHour).toBeGreaterThan(0);
      working = applyCommand(working, st.command);
    }
    const cost = (x: Snapshot) =>
      x.nodes.reduce((a, n) => a + (n.labels['node.kubernetes.io/instance-type'] === 'big' ? 10 : 1), 0);
    expect(cost(working)).toBeLessThan(cost(s));
    // every pod still has a node
    expect(working.nodes.flatMap((n) => n.pods).length).toBe(10);
  });

  it('returns the first step as the decision and the rest as follow-ups', async () => {
    const pool = nodePool({ consolidateAfter: 0, budgets: [{ nodes: '1' }] });
    const nodes = Array.from({ length: 4 }, (_, i) => onNode(small, { name: `n${i}`, pods: [pod({ cpu: '700m' })] }));
    const s = snapshot({ nodePools: [pool], nodes, instanceTypes: [small] });
    const r = await disrupt(s, { solver: reference, wellKnownLabels, repack: 'only' });
    expect(r.decision.kind).toBe('delete');
    if (r.decision.kind === 'noop') return;
    expect(r.decision.candidates).toHaveLength(1);
    expect(r.decision.followUps?.length).toBeGreaterThan(0);
    for (const f of r.decision.followUps ?? []) expect(f.candidates).toHaveLength(1);
  });

  it("leaves a unit that saves less than the minimum share of its nodes' price, and says why", async () => {
    const pool = nodePool({ consolidateAfter: 0, budgets: [{ nodes: '100%' }] });
    // the pods fit a type 3 % cheaper: a saving, but not worth a move at the default minimum of 5 %
    const dear = fakeInstanceType({
      name: 'dear',
      resources: { cpu: 4000, memory: 4 * Gi, pods: 20 },
      offerings: od(1),
    });
    const near = fakeInstanceType({
      name: 'near',
      resources: { cpu: 4000, memory: 4 * Gi, pods: 20 },
      offerings: od(0.97),
    });
    const s = snapshot({
      nodePools: [pool],
      nodes: [onNode(dear, { name: 'n0', pods: pods(2, { cpu: '1', memory: '1Gi' }) })],
      instanceTypes: [dear, near],
    });
    const d = (await disrupt(s, { solver: reference, wellKnownLabels, repack: 'only' })).decision;
    expect(d.kind).toBe('noop');
    expect(d.explanations[0]).toMatchObject({ code: 'small-saving-repack', data: { nodes: 1, minShare: 0.05 } });
    expect((d.explanations[0]!.data as { share: number }).share).toBeCloseTo(0.03, 9);
    const any = (await disrupt(s, { solver: reference, wellKnownLabels, repack: 'only', repackMinSavingsShare: 0 }))
      .decision;
    expect(any.kind).toBe('replace');
    if (any.kind !== 'noop')
      expect(any.replacements.map((r) => r.instanceTypes.map((o) => o.name))).toEqual([['near']]);
    const just = (await disrupt(s, { solver: reference, wellKnownLabels, repack: 'only', repackMinSavingsShare: 0.03 }))
      .decision;
    expect(just.kind).toBe('replace');
  });

  it('tries a price cap only where it could save on the NodeClaims dearer than it', async () => {
    const pool = nodePool({ consolidateAfter: 0, budgets: [{ nodes: '100%' }] });
    // six small nodes an eighth full: deleting five is the layout, nothing launches
    const nodes = Array.from({ length: 6 }, (_, i) => onNode(small, { name: `n${i}`, pods: [pod({ cpu: '500m' })] }));
    const s = snapshot({ nodePools: [pool], nodes, instanceTypes: [small, big] });
    const catalogs: number[] = [];
    const counting = {
      name: 'counting',
      solve: (input: Parameters<typeof solveReference>[0]) => (
        catalogs.push(input.instanceTypes.get('default')!.length), solveReference(input)
      ),
    };
    const p = await plan(s, counting);
    expect(p.steps.flatMap((st) => st.command.candidates)).toHaveLength(5);
    expect(p.steps.flatMap((st) => st.command.replacements)).toEqual([]);
    expect(catalogs.length).toBe(p.evaluations);
    expect(catalogs).toEqual(catalogs.map(() => 2));
  });

  it('stops searching at the deadline and still returns the first layout it found', async () => {
    const pool = nodePool({ consolidateAfter: 0, budgets: [{ nodes: '100%' }] });
    const nodes = Array.from({ length: 6 }, (_, i) => onNode(small, { name: `n${i}`, pods: [pod({ cpu: '700m' })] }));
    const s = snapshot({ nodePools: [pool], nodes, instanceTypes: [small] });
    let t = 0;
    const r = resolve({ solver: reference, wellKnownLabels, elapsedMs: () => (t += 1000), repackDeadlineMs: 500 });
    const all = candidateSet(s, 'graceful').all;
    const p = await planRepack(s, all, all, budgetMapping(s, 'Underutilized'), r);
    expect(p.timedOut).toBe(true);
    expect(p.evaluations).toBe(1);
    // the first length tried is half the candidates: three nodes whose pods fit on the other three
    expect(p.steps).toHaveLength(1);
    expect(p.steps[0]!.command.candidates).toHaveLength(3);
    expect(p.steps[0]!.command.kind).toBe('delete');
  });

  it('says the decision is truncated when the deadline cut its search short, and not otherwise', async () => {
    const pool = nodePool({ consolidateAfter: 0, budgets: [{ nodes: '100%' }] });
    const nodes = Array.from({ length: 6 }, (_, i) => onNode(small, { name: `n${i}`, pods: [pod({ cpu: '700m' })] }));
    const s = snapshot({ nodePools: [pool], nodes, instanceTypes: [small] });
    let t = 0;
    const opts = { solver: reference, wellKnownLabels, repack: 'only' as const, repackDeadlineMs: 500 };
    const cut = await disrupt(s, { ...opts, elapsedMs: () => (t += 1000) });
    expect(cut.decision).toMatchObject({ kind: 'delete', method: 'repack', truncated: true });
    const whole = await disrupt(s, opts);
    expect(whole.decision.kind).toBe('delete');
    expect(whole.decision.truncated).toBeUndefined();
    // A search the deadline cut short that found nothing is no "consolidated": the next loop looks again.
    const busy = snapshot({ nodePools: [pool], nodes: nodes.slice(0, 1), instanceTypes: [small] });
    const noop = await disrupt(busy, { ...opts, elapsedMs: () => (t += 1000), consolidationState: 7 });
    expect(noop.decision).toMatchObject({ kind: 'noop', truncated: true });
    expect(noop.state.consolidated['repack']).toBeUndefined();
    const done = await disrupt(busy, { ...opts, consolidationState: 7 });
    expect(done.decision.truncated).toBeUndefined();
    expect(done.state.consolidated['repack']).toBe(7);
  });

  it("carries a simulation plan's truncated mark into the decision", async () => {
    const pool = nodePool({ consolidateAfter: 0, budgets: [{ nodes: '100%' }] });
    const n = onNode(big, { name: 'big-node', pods: pods(2, { cpu: '3', memory: '1Gi' }) });
    const s = snapshot({ nodePools: [pool], nodes: [n], instanceTypes: [big, small] });
    const cutShort = {
      name: 'reference-cut-short',
      solve: async (input: Parameters<typeof solveReference>[0]) => ({
        ...(await solveReference(input)),
        truncated: true as const,
      }),
    };
    for (const repack of ['only', 'off'] as const) {
      const d = (await disrupt(s, { solver: cutShort, wellKnownLabels, repack })).decision;
      expect(d.truncated).toBe(true);
      expect((await disrupt(s, { solver: reference, wellKnownLabels, repack })).decision.truncated).toBeUndefined();
    }
  });

  it('refines only where a concave savings curve through the tried lengths could beat the best', () => {
    // the 1,000-node benchmark's first loop: savings at 1/4, 1/2, 3/4 and all of 1,377 candidates
    const pts = [
      { k: 344, v: 254.1 },
      { k: 689, v: 263.7 },
      { k: 1033, v: 279.2 },
      { k: 1377, v: 271.1 },
    ];
    expect(concaveBound(pts, 2, -1)).toBeCloseTo(263.7 + ((263.7 - 254.1) / 345) * 344, 9); // below 279.2: skip
    expect(concaveBound(pts, 2, 1)).toBeCloseTo(279.2 + ((279.2 - 263.7) / 344) * 344, 9); // nothing beyond 1,377 bounds it
    // the two secants cross inside the gap
    const crossing = [
      { k: 0, v: 0 },
      { k: 10, v: 10 },
      { k: 20, v: 12 },
      { k: 30, v: 10 },
    ];
    expect(concaveBound(crossing, 2, -1)).toBeCloseTo(40 / 3, 9);
    // a length whose pods could not move is no point of the curve: only the secant on the other side bounds
    expect(concaveBound([{ k: 344, v: undefined }, ...pts.slice(1)], 2, -1)).toBeCloseTo(279.2 + (279.2 - 271.1), 9);
    expect(
      concaveBound(
        [
          { k: 10, v: 0 },
          { k: 20, v: 5 },
        ],
        1,
        -1,
      ),
    ).toBe(Infinity);
    // beyond the longest length tried: the last secant, from 0 saved at length 0
    expect(
      concaveBeyond(
        [
          { k: 0, v: 0 },
          { k: 235, v: 0 },
          { k: 470, v: 0 },
        ],
        704,
      ),
    ).toBe(0);
    expect(
      concaveBeyond(
        [
          { k: 0, v: 0 },
          { k: 344, v: 254.1 },
          { k: 689, v: 263.7 },
        ],
        1033,
      ),
    ).toBeCloseTo(263.7 + ((263.7 - 254.1) / 345) * 344, 9);
    expect(
      concaveBeyond(
        [
          { k: 0, v: 0 },
          { k: 344, v: undefined },
          { k: 689, v: 263.7 },
        ],
        1033,
      ),
    ).toBe(Infinity);
  });
});

describe('capped instance types', () => {
  const caches = new ModelCaches();
  it('keep the types with an offering within the cap, as the same array for the same catalog and cap', () => {
    const its = [big, small];
    const a = cappedTypes(its, 5_000_000, caches);
    expect(a.map((t) => t.name)).toEqual(['small']);
    // Templates are cached by the identity of this array: the second capped simulation must reuse it.
    expect(cappedTypes(its, 5_000_000, caches)).toBe(a);
    expect(cappedTypes(its, 20_000_000, caches).map((t) => t.name)).toEqual(['big', 'small']);
    expect(cappedTypes([small, big], 5_000_000, caches)).not.toBe(a);
  });

  const claim = (it: InstanceType, requests: { cpu: number; memory: number }): NewNodeClaimPlan => ({
    nodePool: 'default',
    pods: [],
    requirements: [],
    instanceTypes: [{ name: it.name, price: it.offerings[0]!.price }],
    requests,
    labels: {},
    taints: [],
    startupTaints: [],
    price: it.offerings[0]!.price,
  });

  it('bound what a cap could save by the cheapest fractional mix of the types within it', () => {
    const s = snapshot({ nodePools: [nodePool({})], instanceTypes: [big, small] });
    const full = { cpu: big.allocatable.cpu!, memory: big.allocatable.memory! / 2 };
    // a full big node ($10) holds what two smalls ($1 each) hold: a cap at $5 could save nearly $8
    const g = capGain(s, [claim(big, full)], 5, caches);
    const perCpu = 1 / small.allocatable.cpu!;
    expect(g.price).toBe(10);
    expect(g.gain).toBeCloseTo(10 - full.cpu * perCpu, 9);
    // claims within the cap are not counted; a cap below every type can save nothing
    expect(capGain(s, [claim(small, { cpu: 1000, memory: Gi })], 5, caches)).toEqual({ gain: 0, price: 0 });
    expect(capGain(s, [claim(big, full)], 0.5, caches)).toEqual({ gain: 0, price: 10 });
  });

  it('mix a cpu-rich and a memory-rich type where neither alone is cheap, and ignore types no mix would use', () => {
    const cpuRich = fakeInstanceType({
      name: 'cpu-rich',
      resources: { cpu: 4000, memory: 2 * Gi, pods: 20 },
      offerings: od(1),
    });
    const memRich = fakeInstanceType({
      name: 'mem-rich',
      resources: { cpu: 1000, memory: 8 * Gi, pods: 20 },
      offerings: od(1),
    });
    const worse = fakeInstanceType({
      name: 'worse',
      resources: { cpu: 1000, memory: 2 * Gi, pods: 20 },
      offerings: od(1),
    });
    // not dominated by either, but below the line between them: any mix with it costs more
    const inside = fakeInstanceType({
      name: 'inside',
      resources: { cpu: 2000, memory: 4 * Gi, pods: 20 },
      offerings: od(1),
    });
    const s = snapshot({ nodePools: [nodePool({})], instanceTypes: [big, cpuRich, inside, memRich, worse] });
    const [c, m] = [cpuRich.allocatable, memRich.allocatable];
    const want = { cpu: 4000, memory: 8 * Gi };
    // dollars x on cpu-rich and y on mem-rich with c.cpu x + m.cpu y = 4000 and c.memory x + m.memory y = 8 Gi
    const det = c.cpu! * m.memory! - m.cpu! * c.memory!;
    const x = (want.cpu * m.memory! - m.cpu! * want.memory) / det;
    const y = (c.cpu! * want.memory - want.cpu * c.memory!) / det;
    const single = Math.min(
      Math.max(want.cpu / c.cpu!, want.memory / c.memory!),
      Math.max(want.cpu / m.cpu!, want.memory / m.memory!),
    );
    expect(x + y).toBeLessThan(single);
    expect(capGain(s, [claim(big, want)], 5, caches).gain).toBeCloseTo(10 - (x + y), 9);
  });
});
