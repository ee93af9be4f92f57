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
import { buildBoundModel } from './model.ts';

const pool = inThreadLp;

describe('the LP lower bound', () => {
  it('is the fractional node count times the price for one instance type', async () => {
    const it1 = fakeInstanceType({ name: 'only', resources: { cpu: 4000, memory: 16 * 2 ** 30, pods: 100 }, price: 0.2 });
    const input: ProvisionInput = {
      nodePools: [nodePool()], instanceTypes: new Map([['default', [it1]]]), nodes: [],
      pods: pods(10, { cpu: '1', memory: '1Gi' }), daemonSets: [], options: DEFAULT_ENGINE_OPTIONS,
    };
    const b = await lowerBound(input, pool);
    // CPU binds: 10 cores over the type's allocatable cores, times its price.
    const nodes = 10_000 / it1.allocatable['cpu']!;
    expect(b.status).toBe('optimal');
    expect(b.perHour).toBeCloseTo(nodes * 0.2, 6);
  });

  it('follows new prices and availability of the same NodePool between two bounds (allowed types are cached per template)', async () => {
    const np = nodePool();
    const cheap = fakeInstanceType({ name: 'cheap', resources: { cpu: 4000, memory: 16 * 2 ** 30, pods: 100 }, price: 0.2 });
    const dear = fakeInstanceType({ name: 'dear', resources: { cpu: 4000, memory: 16 * 2 ** 30, pods: 100 }, price: 0.5 });
    const ps = pods(10, { cpu: '1', memory: '1Gi' });
    const bound = async (its: ReturnType<typeof fakeInstanceType>[]) => (await lowerBound({ nodePools: [np], instanceTypes: new Map([['default', its]]), nodes: [], pods: ps, daemonSets: [], options: DEFAULT_ENGINE_OPTIONS }, pool)).perHour;
    const nodes = 10_000 / cheap.allocatable['cpu']!;
    expect(await bound([cheap, dear])).toBeCloseTo(nodes * 0.2, 6);
    expect(await bound([withPrices(cheap, 0.8), dear])).toBeCloseTo(nodes * 0.5, 6);
    expect(await bound([withAvailability(cheap, false), dear])).toBeCloseTo(nodes * 0.5, 6);
    expect(await bound([cheap, dear])).toBeCloseTo(nodes * 0.2, 6);
  });

  it('leaves out pods no option can host and says so', async () => {
    const input: ProvisionInput = {
      nodePools: [nodePool()], instanceTypes: new Map([['default', [fakeInstanceType({ name: 'small', resources: { cpu: 2000, memory: 4 * 2 ** 30, pods: 50 }, price: 0.1 })]]]), nodes: [],
      pods: [...pods(2, { cpu: '1', memory: '1Gi' }), ...pods(1, { cpu: '64', memory: '1Gi' })], daemonSets: [], options: DEFAULT_ENGINE_OPTIONS,
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
    const rows: Array<{ name: string; vars: Array<{ name: string; coef: number }>; bnds: { type: number; lb: number; ub: number } }> = [];
    for (let r = 0; r < model.numRows; r++) rows.push({ name: `r${r}`, vars: [], bnds: { type: glpk.GLP_LO, lb: model.rowLower[r]!, ub: 0 } });
    for (let j = 0; j < model.numCols; j++) for (let k = model.starts[j]!; k < model.starts[j + 1]!; k++) rows[model.indices[k]!]!.vars.push({ name: `x${j}`, coef: model.values[k]! });
    const res = glpk.solve({ name: 'bound', objective: { direction: glpk.GLP_MIN, name: 'cost', vars }, subjectTo: rows });
    const b = await lowerBound(input!, pool);
    expect(b.perHour * 1e6).toBeCloseTo(res.result.z, -1);
  });

  it('is never above the cost of a plan, Karpenter\'s or ours', async () => {
    const its = ec2InstanceTypes({ region: 'ap-northeast-2' });
    for (const input of fc.sample(plainProblemArb(its), { numRuns: 12, seed: 5 })) {
      const b = await lowerBound(input, pool);
      const placed = (p: { unschedulable: readonly unknown[] }) => p.unschedulable.length === 0;
      const ref = solveReference(input);
      const ours = new WasmSolver().solve(input);
      if (placed(ref)) expect(b.perHour).toBeLessThanOrEqual(ref.costPerHour + 1e-6);
      if (placed(ours)) expect(b.perHour).toBeLessThanOrEqual(ours.costPerHour + 1e-6);
    }
  });
});
