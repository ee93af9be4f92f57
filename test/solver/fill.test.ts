// Packing by fullest nodes (solver-as/assembly/fill.ts) in the improvement phase: on triplets, pods that come in sets
// of three filling a node exactly in both cpu and memory (bench/scenarios/packing.ts), Karpenter's first-fit order
// leaves most nodes part-empty; filling each node as full as it goes finds the sets, so the plan comes within a node
// of the optimum the construction fixes, with every pod placed and the plan verified.
import { describe, expect, it } from 'vitest';
import { solveReference } from '../../engine/local.ts';
import { WasmSolver } from '../../engine/solver/wasm.ts';
import { verifyPlan } from '../../engine/verify/verify.ts';
import { packingInput, packingInstances } from '../../bench/scenarios/packing.ts';

describe('packing by fullest nodes', () => {
  it('packs two-dimensional triplets within one node of their optimum, fewer than Karpenter', () => {
    const insts = packingInstances([120], 2).filter((i) => i.family === 'triplets-2d');
    expect(insts).toHaveLength(2);
    for (const inst of insts) {
      const input = packingInput(inst);
      const plan = new WasmSolver().solve(input);
      expect(verifyPlan(input, plan)).toEqual([]);
      expect(plan.unschedulable).toEqual([]);
      const karpenter = solveReference(input).newNodeClaims.length;
      expect(plan.newNodeClaims.length).toBeLessThanOrEqual(inst.optimum! + 1);
      expect(plan.newNodeClaims.length).toBeLessThan(karpenter);
    }
  });

  it('gives the same plan with a slower clock and in the debug build (one instance type)', () => {
    const inst = packingInstances([60], 1).find((i) => i.family === 'uniform-3d')!;
    const input = packingInput(inst);
    const names = (p: { newNodeClaims: readonly { pods: readonly string[] }[] }) =>
      p.newNodeClaims.map((c) => [...c.pods].sort().join(','));
    const base = names(new WasmSolver({ build: 'release' }).solve(input));
    expect(names(new WasmSolver({ build: 'release', clock: () => performance.now() / 10 }).solve(input))).toEqual(base);
    expect(names(new WasmSolver({ build: 'debug' }).solve(input))).toEqual(base);
  });
});
