// The verifier (engine/verify) on what consolidation launches: the replacements Karpenter's single- and multi-node
// consolidation choose are checked as the plan their command carries out (verifyReplacements) for NodePool limits,
// NodePool order and the launch rules, on random clusters; and a replacement that breaks one of those rules is
// caught. With the improvement phase (the controller's and what-if's simulations run with it) a replacement is named
// as its launch would pick; on the exact path (simulations with Karpenter's algorithm alone) it keeps Karpenter's
// naming, its cheapest option, as provisioning plans of the exact path do, and is checked as launched (asLaunched).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ec2InstanceTypes } from '../../engine/catalog/index.ts';
import { disrupt } from '../../engine/disruption/disrupt.ts';
import { asLaunched } from '../../engine/launch/price.ts';
import type { Command, MethodName } from '../../engine/disruption/types.ts';
import type { InstanceType, NodePool, Snapshot } from '../../engine/domain/types.ts';
import type { NewNodeClaimPlan } from '../../engine/model/types.ts';
import { WasmSolver } from '../../engine/solver/wasm.ts';
import { verifyReplacements } from '../../engine/verify/verify.ts';
import { nodePool, pod, snapshot, stateNode } from '../fixtures/builders.ts';
import { weightedPoolArb } from './arbitraries.ts';
import { commandCheck, RecordingSolver, type Solved } from './recording.ts';

const REGION = 'ap-northeast-2';
// Generic families of two architectures with their metal sizes, and GPU families: the exotic types the launch
// passes over while a generic type remains.
const TYPES: readonly InstanceType[] = ec2InstanceTypes({ region: REGION }).filter((t) =>
  /^(m6i|c6i|r6i|m6g|c6g|g4dn|g5)\./.test(t.name),
);
const typeNamed = (name: string) => TYPES.find((t) => t.name === name)!;
const ZONES = [`${REGION}a`, `${REGION}b`];
const NODE_TYPES = ['m6i.2xlarge', 'c6i.2xlarge', 'r6i.xlarge', 'm6i.4xlarge', 'c6g.2xlarge', 'm6g.xlarge'];

interface Replaced {
  readonly command: Command;
  readonly sim: Solved;
}

/** The replacements as checked: as the method names them with the phase, as launched on the exact path. */
function named(r: Replaced, improve: boolean): readonly NewNodeClaimPlan[] {
  if (improve) return r.command.replacements;
  const plan = { ...r.sim.plan, newNodeClaims: r.command.replacements };
  return asLaunched(r.sim.input, plan).newNodeClaims;
}

/** Runs one method on the snapshot and returns its replace command with the simulation it came from. */
async function replaceOf(s: Snapshot, method: MethodName, improve: boolean): Promise<Replaced | undefined> {
  const solver = new RecordingSolver(new WasmSolver({ improve }));
  const d = (await disrupt(s, { solver, methods: [method], repack: 'off' })).decision;
  if (d.kind !== 'replace') return undefined;
  const check = commandCheck(solver.solved, {
    candidates: d.candidates.map((c) => c.name),
    replacements: d.replacements,
  });
  // Karpenter's methods replace from a simulation of exactly their candidates.
  expect(check?.whole, `the simulation behind ${method}'s replacement`).toBe(true);
  return { command: d, sim: check!.simulation };
}

const poolArb = (i: number) =>
  weightedPoolArb(i, {
    categories: fc.constantFrom(['c', 'm', 'r'], ['c', 'm'], ['m', 'r'], ['c', 'm', 'r', 'g']),
    limits: fc.option(
      fc.constantFrom(64, 100, 200).map((cpu) => ({ cpu: String(cpu) })),
      { nil: undefined },
    ),
    budgets: true,
  });

const nodeArb = fc.record({
  pool: fc.nat(),
  type: fc.constantFrom(...NODE_TYPES),
  zone: fc.constantFrom(...ZONES),
  spot: fc.boolean(),
  pods: fc.array(
    fc.record({
      cpu: fc.constantFrom('250m', '500m', '1', '1500m'),
      memory: fc.constantFrom('256Mi', '1Gi', '2Gi'),
    }),
    { minLength: 1, maxLength: 3 },
  ),
});

/** A cluster of under-used nodes on one to three NodePools (each node's capacity type one its pool allows). */
const clusterArb = fc
  .record({
    pools: fc.integer({ min: 1, max: 3 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => poolArb(i)))),
    nodes: fc.array(nodeArb, { minLength: 2, maxLength: 7 }),
  })
  .map(({ pools, nodes }) => {
    const built = nodes.map((n, i) => {
      const pool = pools[n.pool % pools.length]!;
      const cts = pool.template.requirements.find((r) => r.key === 'karpenter.sh/capacity-type')!.values;
      const capacityType = cts.includes('spot') && (n.spot || !cts.includes('on-demand')) ? 'spot' : 'on-demand';
      const name = `n${i}`;
      return stateNode({
        name,
        nodePool: pool.name,
        instanceType: typeNamed(n.type),
        zone: n.zone,
        capacityType,
        pods: n.pods.map((p, k) => pod({ name: `${name}-p${k}`, ...p, nodeName: name })),
      });
    });
    return snapshot({ nodePools: pools, instanceTypes: TYPES, nodes: built });
  });

describe('the verifier on consolidation replacements', () => {
  for (const improve of [false, true]) {
    it(`passes every single- and multi-node replacement on random clusters (improvement phase ${improve ? 'on' : 'off'})`, async () => {
      let replaced = 0;
      await fc.assert(
        fc.asyncProperty(clusterArb, async (s) => {
          for (const method of ['single', 'multi'] as const) {
            const r = await replaceOf(s, method, improve);
            if (!r) continue;
            replaced++;
            expect(verifyReplacements(r.sim.input, r.sim.plan, named(r, improve)), method).toEqual([]);
          }
        }),
        { numRuns: 25, seed: 1603 },
      );
      // A fixed seed: the sample holds replacements to check (not only deletes and no-ops).
      expect(replaced).toBeGreaterThanOrEqual(5);
    });
  }
});

/**
 * On-demand nodes of the general pool that one cheaper node could replace: for single-node consolidation one large
 * node holding a small pod; for multi-node three nodes each holding a pod none of the others has room for.
 */
function underUsed(method: 'single' | 'multi', pools: NodePool[]): Snapshot {
  const shapes: Array<[string, string]> =
    method === 'single'
      ? [['r6i.4xlarge', '3']]
      : [
          ['m6i.2xlarge', '5'],
          ['c6i.2xlarge', '5'],
          ['m6i.2xlarge', '5'],
        ];
  const nodes = shapes.map(([t, cpu], i) =>
    stateNode({
      name: `n${i}`,
      nodePool: 'general',
      instanceType: typeNamed(t),
      zone: ZONES[0],
      capacityType: 'on-demand',
      pods: [pod({ name: `p${i}`, cpu, memory: '4Gi', nodeName: `n${i}` })],
    }),
  );
  return snapshot({ nodePools: pools, instanceTypes: TYPES, nodes });
}

const general = (o: Partial<Parameters<typeof nodePool>[0]> = {}) =>
  nodePool({
    name: 'general',
    weight: 50,
    requirements: [
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
    ],
    budgets: [{ nodes: '100%' }],
    ...o,
  });

const CT = 'karpenter.sh/capacity-type';

const cheapestOnDemand = (it: InstanceType) =>
  Math.min(...it.offerings.filter((o) => o.capacityType === 'on-demand' && o.available).map((o) => o.price));

/** The launch rule's violations of a forged replacement. */
const launchMessages = (r: Replaced, replacements: readonly NewNodeClaimPlan[], input = r.sim.input): string[] =>
  verifyReplacements(input, r.sim.plan, replacements)
    .filter((v) => v.kind === 'launch')
    .map((v) => v.message);

const kinds = (r: Replaced, replacements: readonly NewNodeClaimPlan[], input = r.sim.input) =>
  verifyReplacements(input, r.sim.plan, replacements).map((v) => v.kind);

describe('the verifier catches a replacement that breaks a rule', () => {
  for (const method of ['single', 'multi'] as const) {
    it(`${method}: limits, order, launch and accounting`, async () => {
      const s = underUsed(method, [general(), nodePool({ name: 'spare', weight: 10, budgets: [{ nodes: '100%' }] })]);
      const r = (await replaceOf(s, method, true))!;
      expect(r).toBeDefined();
      const [claim] = r.command.replacements;
      expect(verifyReplacements(r.sim.input, r.sim.plan, r.command.replacements)).toEqual([]);

      // Limits: the same replacement under a general pool whose cpu limit it exceeds.
      const tight = r.sim.input.nodePools.map((p) => (p.name === 'general' ? { ...p, limits: { cpu: 1000 } } : p));
      expect(kinds(r, [claim!], { ...r.sim.input, nodePools: tight })).toContain('limits');

      // Order: the replacement moved to the weight-10 pool, which the weight-50 pool outranks for these pods.
      const lower = { ...claim!, nodePool: 'spare' };
      expect(kinds(r, [lower])).toContain('order');

      // Launch, exotic types: a metal type named first while the generic types its launch would pick remain.
      const metal = typeNamed('m6i.metal');
      const odMetal = cheapestOnDemand(metal);
      const named = { ...claim!, instanceTypes: [{ name: metal.name, price: odMetal }, ...claim!.instanceTypes] };
      expect(launchMessages(r, [{ ...named, price: odMetal }])).toEqual([expect.stringMatching(/exotic/)]);

      // Launch, the spot rule: spot allowed too, but the NodeClaim named and priced as an on-demand launch.
      const both = r.sim.input.nodePools.map((p) =>
        p.name === 'general'
          ? { ...p, template: { ...p.template, requirements: p.template.requirements.filter((q) => q.key !== CT) } }
          : p,
      );
      const options = claim!.instanceTypes
        .map((o) => ({ name: o.name, price: cheapestOnDemand(typeNamed(o.name)) }))
        .sort((a, b) => a.price - b.price);
      const onDemand = {
        ...claim!,
        requirements: [
          ...claim!.requirements.filter((q) => q.key !== CT),
          { key: CT, operator: 'In' as const, values: ['spot', 'on-demand'] },
        ],
        instanceTypes: options,
        price: options[0]!.price,
      };
      const input = { ...r.sim.input, nodePools: both };
      expect(launchMessages(r, [onDemand], input)).toEqual([expect.stringMatching(/would pick spot/)]);
      // ... and nothing else is wrong with it: priced as offered, in order, within the rules but the launch's.
      expect(kinds(r, [onDemand], input)).toEqual(['launch']);

      // Accounting: a replacement that leaves one of the moved pods behind.
      expect(kinds(r, [{ ...claim!, pods: claim!.pods.slice(1) }])).toContain('accounting');
    });
  }
});

describe('the type a replacement names', () => {
  // An on-demand r6i.32xlarge holding a 100-cpu pod: its cheaper replacements hold 128 cpu, and the cheapest of them
  // in spot is a metal type.
  const pool = general({
    requirements: [
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
    ],
  });
  const nodes = [
    stateNode({
      name: 'n0',
      nodePool: 'general',
      instanceType: typeNamed('r6i.32xlarge'),
      zone: ZONES[0],
      capacityType: 'on-demand',
      pods: [pod({ name: 'p0', cpu: '100', memory: '8Gi', nodeName: 'n0' })],
    }),
  ];
  const s = snapshot({ nodePools: [pool], instanceTypes: TYPES, nodes });

  it("is the launch's with the improvement phase", async () => {
    const r = (await replaceOf(s, 'single', true))!;
    expect(r.command.replacements[0]!.instanceTypes[0]!.name).not.toMatch(/metal/);
    expect(verifyReplacements(r.sim.input, r.sim.plan, r.command.replacements)).toEqual([]);
  });

  it("is Karpenter's cheapest option on the exact path, a metal type the launch passes over; as launched it is not", async () => {
    const r = (await replaceOf(s, 'single', false))!;
    expect(r.command.replacements[0]!.instanceTypes[0]!.name).toMatch(/metal/);
    expect(verifyReplacements(r.sim.input, r.sim.plan, r.command.replacements).map((v) => v.kind)).toEqual(['launch']);
    expect(verifyReplacements(r.sim.input, r.sim.plan, named(r, false))).toEqual([]);
  });
});
