import fc from 'fast-check';
import GLPK from 'glpk.js/node';
import { describe, expect, it } from 'vitest';
import { ec2InstanceTypes } from '../catalog/index.ts';
import { DEFAULT_ENGINE_OPTIONS } from '../domain/types.ts';
import { inThreadLp } from '../pool/lp.ts';
import { solveReference } from '../solver/reference/scheduler.ts';
import type { ProvisionInput } from '../model/types.ts';
import { WasmSolver } from '../solver/wasm.ts';
import { nodePool, pods } from '../../test/fixtures/builders.ts';
import { fakeInstanceType, withAvailability, withPrices } from '../../test/fixtures/instancetypes.ts';
import { plainProblemArb } from '../../test/solver/arbitraries.ts';
import { lowerBound } from './index.ts';
import { asLaunched } from '../launch/price.ts';
import { buildBoundModel } from './model.ts';

const pool = inThreadLp;

describe('the lower bound', () => {
  it('is the fractional node count times the price for one instance type', async () => {
    const it1 = fakeInstanceType({
      name: 'only',
      resources: { cpu: 4000, memory: 16 * 2 ** 30, pods: 100 },
      price: 0.2,
    });
    const input: ProvisionInput = {
      nodePools: [nodePool()],
      instanceTypes: new Map([['default', [it1]]]),
      nodes: [],
      pods: pods(10, { cpu: '1', memory: '1Gi' }),
      daemonSets: [],
      options: DEFAULT_ENGINE_OPTIONS,
    };
    const b = await lowerBound(input, pool);
    // CPU binds: 10 cores over the type's allocatable cores, times its price.
    const nodes = 10_000 / it1.allocatable['cpu']!;
    expect(b.status).toBe('optimal');
    expect(b.lp).toBeCloseTo(nodes * 0.2, 6);
    // Whole pods: three 1-cpu pods fit the 3.9 allocatable cores, so 10 need 4 nodes, and nodes come whole.
    expect(b.patterns.status).toBe('optimal');
    expect(b.perHour).toBeCloseTo(4 * 0.2, 6);
    expect(b.kind).toBe('patterns-rounded');
  });

  it('follows new prices and availability of the same NodePool between two bounds (allowed types are cached per template)', async () => {
    const np = nodePool();
    const cheap = fakeInstanceType({
      name: 'cheap',
      resources: { cpu: 4000, memory: 16 * 2 ** 30, pods: 100 },
      price: 0.2,
    });
    const dear = fakeInstanceType({
      name: 'dear',
      resources: { cpu: 4000, memory: 16 * 2 ** 30, pods: 100 },
      price: 0.5,
    });
    const ps = pods(10, { cpu: '1', memory: '1Gi' });
    const bound = async (its: ReturnType<typeof fakeInstanceType>[]) =>
      (
        await lowerBound(
          {
            nodePools: [np],
            instanceTypes: new Map([['default', its]]),
            nodes: [],
            pods: ps,
            daemonSets: [],
            options: DEFAULT_ENGINE_OPTIONS,
          },
          pool,
        )
      ).lp;
    const nodes = 10_000 / cheap.allocatable['cpu']!;
    expect(await bound([cheap, dear])).toBeCloseTo(nodes * 0.2, 6);
    expect(await bound([withPrices(cheap, 0.8), dear])).toBeCloseTo(nodes * 0.5, 6);
    expect(await bound([withAvailability(cheap, false), dear])).toBeCloseTo(nodes * 0.5, 6);
    expect(await bound([cheap, dear])).toBeCloseTo(nodes * 0.2, 6);
  });

  it('leaves out pods no option can host and says so', async () => {
    const input: ProvisionInput = {
      nodePools: [nodePool()],
      instanceTypes: new Map([
        [
          'default',
          [fakeInstanceType({ name: 'small', resources: { cpu: 2000, memory: 4 * 2 ** 30, pods: 50 }, price: 0.1 })],
        ],
      ]),
      nodes: [],
      pods: [...pods(2, { cpu: '1', memory: '1Gi' }), ...pods(1, { cpu: '64', memory: '1Gi' })],
      daemonSets: [],
      options: DEFAULT_ENGINE_OPTIONS,
    };
    const b = await lowerBound(input, pool);
    expect(b.unplaceable).toHaveLength(1);
    expect(b.perHour).toBeGreaterThan(0);
  });

  it('agrees with GLPK on the same model', async () => {
    const its = ec2InstanceTypes({ region: 'ap-northeast-2' });
    const [input] = fc.sample(plainProblemArb(its), { numRuns: 1, seed: 11 });
    const { model } = buildBoundModel(input!);
    const glpk = await GLPK();
    const vars = Array.from({ length: model.numCols }, (_, j) => ({ name: `x${j}`, coef: model.colCost[j]! }));
    const rows: Array<{
      name: string;
      vars: Array<{ name: string; coef: number }>;
      bnds: { type: number; lb: number; ub: number };
    }> = [];
    for (let r = 0; r < model.numRows; r++)
      rows.push({ name: `r${r}`, vars: [], bnds: { type: glpk.GLP_LO, lb: model.rowLower[r]!, ub: 0 } });
    for (let j = 0; j < model.numCols; j++)
      for (let k = model.starts[j]!; k < model.starts[j + 1]!; k++)
        rows[model.indices[k]!]!.vars.push({ name: `x${j}`, coef: model.values[k]! });
    const res = glpk.solve({
      name: 'bound',
      objective: { direction: glpk.GLP_MIN, name: 'cost', vars },
      subjectTo: rows,
    });
    const b = await lowerBound(input!, pool);
    expect(b.lp * 1e6).toBeCloseTo(res.result.z, -1);
  });

  it("is never above the cost of a plan, Karpenter's or ours, as their launches would pay", async () => {
    const its = ec2InstanceTypes({ region: 'ap-northeast-2' });
    for (const input of fc.sample(plainProblemArb(its), { numRuns: 12, seed: 5 })) {
      const b = await lowerBound(input, pool);
      const placed = (p: { unschedulable: readonly unknown[] }) => p.unschedulable.length === 0;
      const ref = asLaunched(input, solveReference(input));
      const ours = new WasmSolver().solve(input);
      if (placed(ref)) expect(b.perHour).toBeLessThanOrEqual(ref.costPerHour + 1e-6);
      if (placed(ours)) expect(b.perHour).toBeLessThanOrEqual(ours.costPerHour + 1e-6);
    }
  });

  it("keeps Karpenter's NodePool order: CPU pods whose home is the weight-50 pool do not fill the GPU pool's nodes", async () => {
    const its = ec2InstanceTypes({ region: 'ap-northeast-2' });
    const general = nodePool({
      name: 'general',
      weight: 50,
      requirements: [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] }],
    });
    const gpu = nodePool({
      name: 'gpu',
      weight: 10,
      requirements: [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['g', 'p'] }],
    });
    const gpuPods = pods(6, { cpu: '4', memory: '16Gi', resources: { 'nvidia.com/gpu': '1' } });
    const cpuPods = pods(40, { cpu: '1', memory: '2Gi' });
    const input = (pools: (typeof general)[], ps: typeof cpuPods): ProvisionInput => ({
      nodePools: pools,
      instanceTypes: new Map(pools.map((p) => [p.name, its])),
      nodes: [],
      pods: ps,
      daemonSets: [],
      options: DEFAULT_ENGINE_OPTIONS,
    });
    const both = input([general, gpu], [...gpuPods, ...cpuPods]);
    const b = await lowerBound(both, pool);
    const apart =
      (await lowerBound(input([gpu], gpuPods), pool)).lp + (await lowerBound(input([general], cpuPods), pool)).lp;
    // In order, the LP is the two pools' LPs apart: the CPU pods' demand is the general pool's alone.
    expect(b.lp).toBeCloseTo(apart, 6);
    const ours = new WasmSolver().solve(both);
    expect(ours.unschedulable).toHaveLength(0);
    expect(b.perHour).toBeLessThanOrEqual(ours.costPerHour + 1e-6);
  });

  it('lets pods whose home pool has limits reach the pools after it, and counts the limits', async () => {
    const its = ec2InstanceTypes({ region: 'ap-northeast-2' });
    const cmr = [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In' as const, values: ['c', 'm', 'r'] }];
    const first = nodePool({ name: 'first', weight: 50, limits: { cpu: '8' }, requirements: cmr });
    const unlimited = nodePool({ name: 'first', weight: 50, requirements: cmr });
    const second = nodePool({
      name: 'second',
      weight: 10,
      requirements: [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['r'] }],
    });
    const ps = pods(30, { cpu: '1', memory: '2Gi' });
    const input = (a: typeof first): ProvisionInput => ({
      nodePools: [a, second],
      instanceTypes: new Map([
        [a.name, its],
        [second.name, its],
      ]),
      nodes: [],
      pods: ps,
      daemonSets: [],
      options: DEFAULT_ENGINE_OPTIONS,
    });
    // Eight cores of the first pool cannot hold thirty pods: the rest go to the dearer r types of the second.
    const capped = await lowerBound(input(first), pool);
    const free = await lowerBound(input(unlimited), pool);
    expect(capped.status).toBe('optimal');
    expect(capped.lp).toBeGreaterThan(free.lp * 1.05);
    const ours = new WasmSolver().solve(input(first));
    expect(ours.unschedulable).toHaveLength(0);
    expect(capped.perHour).toBeLessThanOrEqual(ours.costPerHour + 1e-6);
  });
});
