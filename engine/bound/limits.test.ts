import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ec2InstanceTypes } from '../catalog/index.ts';
import { DEFAULT_ENGINE_OPTIONS } from '../domain/types.ts';
import { asLaunched } from '../launch/price.ts';
import type { ProvisionInput, ProvisionPlan } from '../model/types.ts';
import { inThreadLp } from '../pool/lp.ts';
import { solveReference } from '../solver/reference/scheduler.ts';
import { WasmSolver } from '../solver/wasm.ts';
import { nodePool, pods } from '../../test/fixtures/builders.ts';
import { fakeInstanceType } from '../../test/fixtures/instancetypes.ts';
import { plainProblemArb } from '../../test/solver/arbitraries.ts';
import { lowerBound } from './index.ts';

const Gi = 2 ** 30;

describe('the whole-node bound under NodePool limits', () => {
  it('sees that a tight limit forces the type with the least overhead', async () => {
    // Fifteen 500m pods under an 8-cpu limit: four 2-cpu nodes (cheaper per cpu) take the 8 cpu but hold three pods
    // each; only the 8-cpu type holds them all. The LP takes fractions of the 2-cpu type, the pattern bound five of
    // them (it has no limit rows); whole nodes within the limit cost the 8-cpu type's price.
    const big = fakeInstanceType({ name: 'big', resources: { cpu: 8000, memory: 32 * Gi, pods: 110 }, price: 0.8 });
    const small = fakeInstanceType({ name: 'small', resources: { cpu: 2000, memory: 8 * Gi, pods: 110 }, price: 0.1 });
    const pool = nodePool({ limits: { cpu: '8' } });
    const input: ProvisionInput = {
      nodePools: [pool],
      instanceTypes: new Map([[pool.name, [big, small]]]),
      nodes: [],
      pods: pods(15, { cpu: '500m', memory: '1Gi' }),
      daemonSets: [],
      options: DEFAULT_ENGINE_OPTIONS,
    };
    const b = await lowerBound(input, inThreadLp);
    expect(b.lp).toBeLessThan(0.5);
    expect(b.patterns.perHour).toBeLessThan(0.8);
    expect(b.wholeNodes).toBeCloseTo(0.8, 6);
    expect(b.kind).toBe('whole-nodes');
    const ours = new WasmSolver().solve(input);
    expect(ours.unschedulable).toHaveLength(0);
    expect(b.perHour).toBeLessThanOrEqual(ours.costPerHour + 1e-6);
  });

  it('does not apply without limits', async () => {
    const pool = nodePool();
    const input: ProvisionInput = {
      nodePools: [pool],
      instanceTypes: new Map([[pool.name, [fakeInstanceType({ name: 'only', price: 0.2 })]]]),
      nodes: [],
      pods: pods(5, { cpu: '500m', memory: '1Gi' }),
      daemonSets: [],
      options: DEFAULT_ENGINE_OPTIONS,
    };
    const b = await lowerBound(input, inThreadLp);
    expect(b.wholeNodes).toBe(0);
    expect(b.kind).not.toBe('whole-nodes');
  });

  it("is never above the cost of a plan, Karpenter's or ours, under tight cpu limits", async () => {
    const its = ec2InstanceTypes({ region: 'ap-northeast-2' });
    const sample = fc.sample(fc.tuple(plainProblemArb(its), fc.double({ min: 0.6, max: 1.3, noNaN: true })), {
      numRuns: 16,
      seed: 7,
    });
    let applied = 0;
    for (const [base, share] of sample) {
      const want = base.pods.reduce((s, p) => s + (p.requests['cpu'] ?? 0), 0);
      const pool = { ...base.nodePools[0]!, limits: { cpu: Math.max(1000, Math.ceil((want * share) / 1000) * 1000) } };
      const input: ProvisionInput = { ...base, nodePools: [pool], instanceTypes: new Map([[pool.name, its]]) };
      for (const plan of [asLaunched(input, solveReference(input)), new WasmSolver().solve(input)]) {
        const b = await lowerBound({ ...input, pods: placedPods(input, plan) }, inThreadLp);
        if (b.wholeNodes > 0) applied++;
        expect(b.wholeNodes).toBeLessThanOrEqual(plan.costPerHour + 1e-6);
      }
    }
    // Honest only if it ran: tight limits make it apply on some of them.
    expect(applied).toBeGreaterThan(0);
  });
});

function placedPods(input: ProvisionInput, plan: ProvisionPlan): ProvisionInput['pods'] {
  const left = new Set(plan.unschedulable.map((e) => e.uid));
  return input.pods.filter((p) => !left.has(p.uid));
}
