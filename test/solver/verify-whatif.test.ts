// The verifier (engine/verify) on what-if plans: what-if runs with a solver that records every plan, and the
// verifier checks the provisioning plan (verifyPlan) and each consolidation command's replacements against the
// simulation they came from (verifyReplacements): NodePool limits, NodePool order and the launch rules, with the
// improvement phase and with Karpenter's algorithm (--exact), in both what-if modes.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseText } from '../../engine/api/index.ts';
import { ec2InstanceTypes } from '../../engine/catalog/index.ts';
import type { InstanceType, NodePool, Snapshot } from '../../engine/domain/types.ts';
import { asLaunched } from '../../engine/launch/price.ts';
import { provision } from '../../engine/solver/provision.ts';
import { WasmSolver } from '../../engine/solver/wasm.ts';
import { verifyPlan, verifyReplacements } from '../../engine/verify/verify.ts';
import type { Built } from '../../engine/whatif/build.ts';
import { disruptionPlanner } from '../../engine/whatif/disruption-planner.ts';
import type { ConsolidationPlan } from '../../engine/whatif/consolidation.ts';
import { whatIfPlan, type WhatIfEngine } from '../../engine/whatif/run.ts';
import type { WhatIfMode } from '../../engine/whatif/types.ts';
import type { UnboundReport } from '../../engine/whatif/bounded.ts';
import { nodePool, pod, snapshot, stateNode } from '../fixtures/builders.ts';
import { weightedPoolArb } from './arbitraries.ts';
import { GUIDE_EXAMPLES_DIR } from '../fixtures/guide.ts';
import { commandCheck, RecordingSolver } from './recording.ts';

const REGION = 'ap-northeast-2';
const ALL = ec2InstanceTypes({ region: REGION });
const ZONE = `${REGION}a`;
const typeNamed = (name: string): InstanceType => ALL.find((t) => t.name === name)!;
/** A few generic families with their metal sizes, and GPU families (exotic types the launch passes over). */
const TYPES = ALL.filter((t) => /^(m6i|c6i|r6i|m6g|g4dn|g5)\./.test(t.name));

/** The guide's default NodePool (guide-01: c/m/r, generation > 5, spot and on-demand, limits cpu 1000, memory 1000Gi). */
function guideDefault(): NodePool {
  for (const e of parseText(readFileSync(`${GUIDE_EXAMPLES_DIR}guide-01.yaml`, 'utf8'), { assumeReady: true })) {
    if (e.result.ok && e.result.value.kind === 'NodePool') return e.result.value.value;
  }
  throw new Error('guide-01.yaml has no NodePool');
}

interface Checked {
  readonly report: UnboundReport;
  /** Violations of the provisioning plan and of every consolidation command's replacements, with where they came from. */
  readonly violations: string[];
  /** Consolidation commands with replacements that were checked. */
  readonly replacements: number;
}

/** whatIfPlan() (the report but its bound) with every plan recorded, then each plan the report is made of handed to the verifier. */
async function checked(s: Snapshot, mode: WhatIfMode, exact: boolean): Promise<Checked> {
  const solver = new RecordingSolver(new WasmSolver({ improveMs: 60_000 }));
  const planner = disruptionPlanner(solver);
  let consolidation: ConsolidationPlan | undefined;
  const engine: WhatIfEngine = {
    provision: (snap, pods, o) => provision(snap, pods, { exact: o.exact, solver }),
    lowerBound: () => Promise.reject(new Error('the plan alone is checked: no bound')),
    planner: {
      name: planner.name,
      plan: async (snap, o) => (consolidation = await planner.plan(snap, o)),
    },
  };
  const built: Built = { snapshot: s, region: REGION, catalog: new Map(ALL.map((t) => [t.name, t])), warnings: [] };
  const report = await whatIfPlan({ built, sources: ['test'], options: { mode, exact } }, engine);
  // The provisioning plan as the report presents it: Karpenter's plan (--exact) with each NodeClaim named as its launch
  // would pick (engine/whatif/run.ts), the improvement phase's plan as it is.
  const first = solver.solved[0]!;
  const plan = exact ? asLaunched(first.input, first.plan) : first.plan;
  const violations = verifyPlan(first.input, plan).map((v) => `provisioning: ${v.kind}: ${v.message}`);
  // ... and the report names those types: without consolidation, its new nodes are the plan's NodeClaims, in order.
  if (mode === 'provision') {
    const shown = report.nodes.filter((n) => n.fate === 'new').map((n) => `${n.instanceType} ${n.pricePerHour}`);
    const named = plan.newNodeClaims.map((c) => `${c.instanceTypes[0]?.name} ${c.price}`);
    if (shown.join() !== named.join())
      violations.push(`the report shows ${shown.join(', ')}, the plan names ${named.join(', ')}`);
  }
  let replacements = 0;
  for (const [i, cmd] of (consolidation?.commands ?? []).entries()) {
    if (!cmd.replacements.length) continue;
    const check = commandCheck(solver.solved, cmd);
    if (!check) {
      violations.push(`command ${i} (${cmd.reason}): no simulation made its replacements`);
      continue;
    }
    replacements++;
    const found = check.whole
      ? verifyReplacements(check.simulation.input, check.simulation.plan, cmd.replacements)
      : verifyPlan(check.input, check.plan);
    for (const v of found) violations.push(`command ${i} (${cmd.reason}): ${v.kind}: ${v.message}`);
  }
  return { report, violations, replacements };
}

const work = (n: number, cpu: string, memory: string, prefix: string, extra: Parameters<typeof pod>[0] = {}) =>
  Array.from({ length: n }, (_, i) => pod({ name: `${prefix}-${i}`, cpu, memory, createdAt: i, ...extra }));

/** Under-used on-demand nodes of `pool`, one pod each, that consolidation replaces or deletes. */
function underUsed(pool: string, types: readonly string[]) {
  return types.map((t, i) =>
    stateNode({
      name: `${pool}-n${i}`,
      nodePool: pool,
      instanceType: typeNamed(t),
      zone: ZONE,
      capacityType: 'on-demand',
      pods: [pod({ name: `${pool}-p${i}`, cpu: '5', memory: '8Gi', nodeName: `${pool}-n${i}` })],
    }),
  );
}

describe("the verifier on what-if plans under the guide's default NodePool (limits, spot and on-demand)", () => {
  const pool = { ...guideDefault(), disruption: { ...guideDefault().disruption, budgets: [{ nodes: '100%' }] } };
  const s = snapshot({
    nodePools: [pool],
    instanceTypes: ALL,
    nodes: underUsed(pool.name, ['m6i.2xlarge', 'c6i.2xlarge', 'r6i.2xlarge', 'm6i.4xlarge']),
    pendingPods: [...work(90, '1', '256Mi', 'a'), ...work(12, '8', '30Gi', 'b')],
  });
  for (const exact of [false, true]) {
    for (const mode of ['provision', 'consolidate'] as const) {
      it(`${mode}, ${exact ? "Karpenter's algorithm" : 'with the improvement phase'}`, async () => {
        const r = await checked(s, mode, exact);
        expect(r.violations).toEqual([]);
        expect(r.report.nodes.filter((n) => n.fate === 'new').length).toBeGreaterThan(0);
        // Consolidation replaces some of the under-used nodes (Karpenter's methods, or the global repack).
        if (mode === 'consolidate') expect(r.replacements).toBeGreaterThan(0);
      });
    }
  }
});

describe('the verifier on what-if plans over weighted NodePools (general weight 50, GPU weight 10)', () => {
  const general = nodePool({
    name: 'general',
    weight: 50,
    requirements: [
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
    ],
    limits: { cpu: '400' },
    budgets: [{ nodes: '100%' }],
  });
  const gpu = nodePool({
    name: 'gpu',
    weight: 10,
    requirements: [
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['g', 'p'] },
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
    ],
    budgets: [{ nodes: '100%' }],
  });
  const s = snapshot({
    nodePools: [general, gpu],
    instanceTypes: ALL,
    nodes: underUsed('general', ['m6i.2xlarge', 'c6i.2xlarge', 'm6i.2xlarge']),
    pendingPods: [
      ...work(20, '4', '16Gi', 'g', { resources: { 'nvidia.com/gpu': '1' } }),
      ...work(200, '500m', '1Gi', 'c'),
    ],
  });
  for (const exact of [false, true]) {
    it(`consolidate, ${exact ? "Karpenter's algorithm" : 'with the improvement phase'}`, async () => {
      const r = await checked(s, 'consolidate', exact);
      expect(r.violations).toEqual([]);
    });
  }
});

describe("what-if's new nodes under Karpenter's algorithm (--exact)", () => {
  it('are the types the launch would get, where Karpenter names a metal type', async () => {
    // 96 cpu of pods: Karpenter's NodeClaim keeps every type that holds them, and its cheapest option is a metal one.
    const pool = nodePool({
      requirements: [
        { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
      ],
    });
    const s = snapshot({ nodePools: [pool], instanceTypes: TYPES, pendingPods: work(16, '6', '512Mi', 'big') });
    const raw = await provision(s, s.pendingPods, { exact: true, solver: new WasmSolver() });
    expect(raw.newNodeClaims.map((c) => c.instanceTypes[0]!.name)).toContainEqual(expect.stringMatching(/metal/));
    const r = await checked(s, 'provision', true);
    expect(r.violations).toEqual([]);
    for (const n of r.report.nodes.filter((x) => x.fate === 'new')) expect(n.instanceType).not.toMatch(/metal/);
  });
});

describe('the verifier on what-if plans of random clusters', () => {
  const poolArb = (i: number) =>
    weightedPoolArb(i, {
      categories: fc.constantFrom(['c', 'm', 'r'], ['c', 'm'], ['m', 'r', 'g'], ['g']),
      limits: fc.option(
        fc.constantFrom('48', '100', '300').map((cpu) => ({ cpu })),
        { nil: undefined },
      ),
      budgets: true,
    });
  const problem = fc
    .record({
      pools: fc.integer({ min: 1, max: 3 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => poolArb(i)))),
      nodes: fc.array(fc.constantFrom('m6i.2xlarge', 'c6i.4xlarge', 'r6i.xlarge', 'm6g.2xlarge'), { maxLength: 4 }),
      deployments: fc.array(
        fc.record({
          n: fc.integer({ min: 1, max: 40 }),
          cpu: fc.constantFrom('250m', '1', '2', '6'),
          memory: fc.constantFrom('512Mi', '2Gi', '8Gi'),
          gpu: fc.boolean(),
        }),
        { minLength: 1, maxLength: 3 },
      ),
    })
    .map((o) =>
      snapshot({
        nodePools: o.pools,
        instanceTypes: TYPES,
        // On-demand nodes of the first pool that allows on-demand c/m/r (none if no pool does).
        nodes: (() => {
          const pool = o.pools.find((p) =>
            p.template.requirements.every((r) => r.values.includes('on-demand') || r.values.includes('m')),
          );
          return pool ? underUsed(pool.name, o.nodes) : [];
        })(),
        pendingPods: o.deployments.flatMap((d, i) =>
          work(d.n, d.cpu, d.memory, `d${i}`, d.gpu ? { resources: { 'nvidia.com/gpu': '1' } } : {}),
        ),
      }),
    );
  for (const exact of [false, true]) {
    it(`passes every plan, ${exact ? "Karpenter's algorithm" : 'with the improvement phase'}`, async () => {
      let replacements = 0;
      await fc.assert(
        fc.asyncProperty(problem, fc.constantFrom('provision' as const, 'consolidate' as const), async (s, mode) => {
          const r = await checked(s, mode, exact);
          expect(r.violations).toEqual([]);
          replacements += r.replacements;
        }),
        { numRuns: 16, seed: 1604 },
      );
      // A fixed seed: the sample's consolidation launches replacements (not only deletes).
      expect(replacements).toBeGreaterThan(0);
    });
  }
});
