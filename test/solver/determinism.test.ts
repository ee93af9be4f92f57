// Plans do not depend on the machine: the improvement phase is budgeted by work, and the wall clock is only a
// safety net that a plan reports when it fires (docs/solver.md, "Budget"). The same random problem is solved with
// the clock running ten times slower, with half the safety-net time, and in the debug build; the plans must be
// the same to the byte (serialised in order, nothing sorted) and none may be truncated. A solver that lets its
// instance go after every solve (as after an outsized one) gives the same plans as one whose instance is warm.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ec2InstanceTypes } from '../../engine/catalog/index.ts';
import { DEFAULT_IMPROVE_SAFETY_MS } from '../../engine/abi/encode.ts';
import type { ProvisionInput, ProvisionPlan } from '../../engine/model/types.ts';
import { WasmSolver } from '../../engine/solver/wasm.ts';
import { genericInput } from '../../bench/scenarios/generic.ts';
import { plainProblemArb, problemArb } from './arbitraries.ts';

/** The plan as bytes: every field in the order the solver produced it (Maps as entry lists). */
function planBytes(p: ProvisionPlan): string {
  return JSON.stringify(p, (_k, v: unknown) => (v instanceof Map ? [...v] : v instanceof Set ? [...v] : v));
}

const normal = new WasmSolver({ build: 'release' });
const slowClock = new WasmSolver({ build: 'release', clock: () => performance.now() / 10 });
const halfTime = new WasmSolver({ build: 'release', improveMs: DEFAULT_IMPROVE_SAFETY_MS / 2 });
const debug = new WasmSolver({ build: 'debug' });
/** Keeps no wasm memory between solves: every solve on a fresh instance (the warm ones above reuse theirs). */
const fresh = new WasmSolver({ build: 'release', retainBytes: 0 });

function sameEverywhere(input: ProvisionInput): void {
  const plan = normal.solve(input);
  expect(plan.truncated).toBeUndefined();
  const bytes = planBytes(plan);
  for (const other of [slowClock, halfTime, debug, fresh]) {
    const p = other.solve(input);
    expect(p.truncated).toBeUndefined();
    expect(planBytes(p)).toBe(bytes);
  }
  expect(fresh.memoryBytes()).toBe(0);
}

describe('the plan does not depend on the clock or the build', () => {
  it('is the same with a slower clock, half the safety-net time and the debug build (random problems)', () => {
    fc.assert(fc.property(problemArb, sameEverywhere), { numRuns: 40 });
  });

  it('is the same on plain workloads over the real catalog, which the improvement phase re-packs', () => {
    const its = ec2InstanceTypes({ region: 'ap-northeast-2' });
    fc.assert(fc.property(plainProblemArb(its), sameEverywhere), { numRuns: 15 });
  });

  it('is the same when the work budget, not convergence, ends the search', () => {
    const input = genericInput(600, 11);
    const budget = 2e6;
    const solvers = [
      new WasmSolver({ build: 'release', improveWork: budget }),
      new WasmSolver({ build: 'release', improveWork: budget, clock: () => performance.now() / 10 }),
      new WasmSolver({ build: 'release', improveWork: budget, improveMs: DEFAULT_IMPROVE_SAFETY_MS / 2 }),
      new WasmSolver({ build: 'debug', improveWork: budget }),
    ];
    const plans = solvers.map((s) => s.solve(input));
    // The budget binds: with ten times the work the phase finds a different (cheaper) plan.
    const more = new WasmSolver({ build: 'release', improveWork: budget * 10 }).solve(input);
    expect(more.costPerHour).toBeLessThan(plans[0]!.costPerHour);
    for (const p of plans) {
      expect(p.truncated).toBeUndefined();
      expect(planBytes(p)).toBe(planBytes(plans[0]!));
    }
  });

  it('reports a plan the safety net cut short, and such a plan still places the same pods', () => {
    const its = ec2InstanceTypes({ region: 'ap-northeast-2' });
    const input = fc.sample(plainProblemArb(its), { numRuns: 1, seed: 7 })[0]!;
    // A clock that jumps an hour on every reading: the first check after the phase starts is past any deadline.
    let t = 0;
    const jumpy = new WasmSolver({ build: 'release', improveMs: 1, clock: () => (t += 3_600_000) });
    const cut = jumpy.solve(input);
    const full = normal.solve(input);
    expect(full.truncated).toBeUndefined();
    expect(cut.truncated).toBe(true);
    const placed = (p: ProvisionPlan) => p.newNodeClaims.flatMap((c) => c.pods).sort();
    expect(placed(cut)).toEqual(placed(full));
  });
});
