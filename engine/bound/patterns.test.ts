// The integer-aware bound (patterns.ts, solver-as/assembly/boundcg.ts) is a lower bound: never above the optimum,
// which small random vector bin packing instances get by exhaustive search, and never above a plan; and it is
// tighter than the resource LP where whole pods fill nodes badly.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { customInstanceTypes, ec2InstanceTypes } from '../catalog/index.ts';
import { DEFAULT_ENGINE_OPTIONS } from '../domain/types.ts';
import { inThreadLp } from '../pool/lp.ts';
import type { ProvisionInput } from '../model/types.ts';
import { WasmSolver } from '../solver/wasm.ts';
import { nodePool, pod } from '../../test/fixtures/builders.ts';
import { lowerBound } from './index.ts';

const pool = inThreadLp;

/** One bin type of capacity (W cpu-milli, W MiB) at $1/h, and one pod per item. */
function binPacking(W: number, items: ReadonlyArray<readonly [number, number]>): ProvisionInput {
  const bin = customInstanceTypes([
    {
      name: 'bin',
      capacity: { cpu: `${W}m`, memory: `${W}Mi`, pods: 1000 },
      offerings: [{ zone: 'a', capacityType: 'on-demand', price: 1 }],
    },
  ]);
  const np = nodePool({ name: 'bins' });
  return {
    nodePools: [np],
    instanceTypes: new Map([[np.name, bin]]),
    nodes: [],
    pods: items.map(([a, b], i) => pod({ name: `i${i}`, cpu: `${a}m`, memory: `${b}Mi`, createdAt: i })),
    daemonSets: [],
    options: DEFAULT_ENGINE_OPTIONS,
  };
}

/** The fewest bins, by dynamic programming over subsets (n <= 10). */
function optimum(W: number, items: ReadonlyArray<readonly [number, number]>): number {
  const n = items.length;
  const fits = (s: number) => {
    let a = 0,
      b = 0;
    for (let i = 0; i < n; i++)
      if (s & (1 << i)) {
        a += items[i]![0];
        b += items[i]![1];
      }
    return a <= W && b <= W;
  };
  const dp = new Array<number>(1 << n).fill(Infinity);
  dp[0] = 0;
  for (let m = 1; m < 1 << n; m++) {
    const low = m & -m;
    for (let s = m; s; s = (s - 1) & m) if (s & low && fits(s)) dp[m] = Math.min(dp[m]!, dp[m ^ s]! + 1);
  }
  return dp[(1 << n) - 1]!;
}

describe('the pattern bound', () => {
  it('is never above the optimum of small vector bin packing instances, and reaches it when rounded', async () => {
    const item = fc.tuple(fc.integer({ min: 10, max: 70 }), fc.integer({ min: 10, max: 70 }));
    let reached = 0;
    const samples = fc.sample(fc.array(item, { minLength: 3, maxLength: 9 }), { numRuns: 25, seed: 4 });
    for (const items of samples) {
      const b = await lowerBound(binPacking(100, items), pool);
      const opt = optimum(100, items);
      expect(b.perHour).toBeLessThanOrEqual(opt + 1e-9);
      expect(b.perHour).toBeGreaterThanOrEqual(b.lp - 1e-9);
      if (Math.abs(b.perHour - opt) < 1e-9) reached++;
    }
    // Column generation with the rounding argument proves the optimum on nearly all of these.
    expect(reached).toBeGreaterThanOrEqual(20);
  });

  it('stays below the optimum when its work budget stops the generation early (the closing exact search)', async () => {
    const item = fc.tuple(fc.integer({ min: 15, max: 60 }), fc.integer({ min: 15, max: 60 }));
    const samples = fc.sample(fc.array(item, { minLength: 6, maxLength: 10 }), { numRuns: 20, seed: 11 });
    let stopped = 0;
    for (const items of samples) {
      const opt = optimum(100, items);
      for (const work of [1e3, 3e4, 3e5]) {
        const b = await lowerBound(binPacking(100, items), pool, { patternWork: work });
        if (b.patterns.status === 'stopped') stopped++;
        expect(b.patterns.perHour).toBeLessThanOrEqual(opt + 1e-9);
      }
    }
    // The budgets are small enough that most generations are cut short before they prove the LP optimal.
    expect(stopped).toBeGreaterThanOrEqual(20);
  });

  it("proves most of the gap on large pods is the LP bound's, and stays below the plan", async () => {
    const its = ec2InstanceTypes({ region: 'ap-northeast-2' });
    const np = nodePool({
      name: 'general',
      requirements: [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] }],
    });
    const pods = [
      ...Array.from({ length: 4 }, (_, i) => pod({ name: `big-${i}`, cpu: '192', memory: '960Gi', createdAt: i })),
      ...Array.from({ length: 12 }, (_, i) => pod({ name: `mid-${i}`, cpu: '64', memory: '320Gi', createdAt: 10 + i })),
    ];
    const input: ProvisionInput = {
      nodePools: [np],
      instanceTypes: new Map([[np.name, its]]),
      nodes: [],
      pods,
      daemonSets: [],
      options: DEFAULT_ENGINE_OPTIONS,
    };
    const b = await lowerBound(input, pool);
    const plan = new WasmSolver().solve(input);
    expect(b.kind).toBe('patterns');
    expect(b.perHour).toBeGreaterThan(1.2 * b.lp);
    expect(b.perHour).toBeLessThanOrEqual(plan.costPerHour + 1e-6);
  });

  it('bounds pods that can share no node apart, each part rounded to whole nodes', async () => {
    const bin = (name: string, arch: string) => ({
      name,
      capacity: { cpu: '1000m', memory: '1000Mi', pods: 1000 },
      labels: { 'kubernetes.io/arch': arch },
      offerings: [{ zone: 'a', capacityType: 'on-demand' as const, price: 1 }],
    });
    const np = nodePool({ name: 'bins' });
    // Three pods of 500m per architecture: 1.5 nodes each, so two whole nodes each, four in all (three together).
    const half = (arch: string, i: number) =>
      pod({
        name: `${arch}-${i}`,
        cpu: '500m',
        memory: '100Mi',
        nodeSelector: { 'kubernetes.io/arch': arch },
        createdAt: i,
      });
    const input: ProvisionInput = {
      nodePools: [np],
      instanceTypes: new Map([[np.name, customInstanceTypes([bin('arm', 'arm64'), bin('amd', 'amd64')])]]),
      nodes: [],
      pods: [0, 1, 2].flatMap((i) => [half('arm64', i), half('amd64', i)]),
      daemonSets: [],
      options: DEFAULT_ENGINE_OPTIONS,
    };
    const b = await lowerBound(input, pool);
    expect(b.lp).toBeCloseTo(3, 6);
    expect(b.kind).toBe('patterns-rounded');
    expect(b.perHour).toBeCloseTo(4, 6);
    expect(new WasmSolver().solve(input).costPerHour).toBeGreaterThanOrEqual(4 - 1e-9);
  });
});
