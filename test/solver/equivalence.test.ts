// The wasm solver, run without its improvement phase, must make exactly the reference solver's plan (both
// builds); with the improvement phase it must pass the verifier, cost no more than the reference plan as its
// launches would pay (a plan with the phase names every NodeClaim as its launch would pick, engine/launch), and
// leave no pod unplaced that the reference places (it may place more: docs/solver.md, NodePool limits). Random problems from ./arbitraries.ts; the seed is printed by fast-check on failure.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { solveReference } from '../../engine/solver/reference/scheduler.ts';
import { WasmSolver } from '../../engine/solver/wasm.ts';
import { verifyPlan } from '../../engine/verify/verify.ts';
import { asLaunched } from '../../engine/launch/price.ts';
import { ec2InstanceTypes } from '../../engine/catalog/index.ts';
import { plainProblemArb, problemArb } from './arbitraries.ts';
import { normalizePlan } from './normalize.ts';

const exact = {
  release: new WasmSolver({ build: 'release', improve: false }),
  debug: new WasmSolver({ build: 'debug', improve: false }),
};
const improved = {
  release: new WasmSolver({ build: 'release', improve: true }),
  debug: new WasmSolver({ build: 'debug', improve: true }),
};

describe('wasm solver against the reference solver', () => {
  it('makes exactly the reference plan without the improvement phase, in release and debug builds', () => {
    fc.assert(
      fc.property(problemArb, (input) => {
        const ref = normalizePlan(solveReference(input));
        expect(normalizePlan(exact.release.solve(input))).toEqual(ref);
        expect(normalizePlan(exact.debug.solve(input))).toEqual(ref);
      }),
      { numRuns: 150 },
    );
  });

  it('passes the verifier and never places fewer pods, nor the same pods at a higher cost, with the improvement phase', () => {
    fc.assert(
      fc.property(problemArb, (input) => {
        const ref = solveReference(input);
        const refCost = asLaunched(input, ref).costPerHour;
        for (const solver of [improved.release, improved.debug]) {
          const plan = solver.solve(input);
          expect(verifyPlan(input, plan)).toEqual([]);
          // Never fewer pods placed; the same pods at no higher cost, or more pods (room that Karpenter's NodeClaims,
          // each counted against its NodePool's limits at its largest option, used up; docs/solver.md).
          const left = plan.unschedulable.map((e) => e.uid);
          const refLeft = new Set(ref.unschedulable.map((e) => e.uid));
          for (const uid of left) expect(refLeft.has(uid)).toBe(true);
          if (left.length === refLeft.size) expect(plan.costPerHour).toBeLessThanOrEqual(refCost + 1e-9);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('re-packs plain workloads on the real catalog to no higher cost, verified, with the same pods placed', () => {
    const its = ec2InstanceTypes({ region: 'ap-northeast-2' });
    let cheaper = 0;
    fc.assert(
      fc.property(plainProblemArb(its), (input) => {
        const ref = solveReference(input);
        const refCost = asLaunched(input, ref).costPerHour;
        const plan = improved.release.solve(input);
        expect(verifyPlan(input, plan)).toEqual([]);
        expect(plan.costPerHour).toBeLessThanOrEqual(refCost + 1e-9);
        expect(plan.unschedulable.map((e) => e.uid).sort()).toEqual(ref.unschedulable.map((e) => e.uid).sort());
        if (plan.costPerHour < refCost - 1e-9) cheaper++;
      }),
      // A fixed seed: the count below is about this sample (10 of these 40 problems have a cheaper packing).
      { numRuns: 40, seed: 3 },
    );
    // The phase must actually find cheaper plans on such workloads, not just leave them alone.
    expect(cheaper).toBeGreaterThanOrEqual(5);
  });

  it('the reference plan itself passes the verifier', () => {
    fc.assert(
      fc.property(problemArb, (input) => {
        expect(verifyPlan(input, solveReference(input))).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });
});
