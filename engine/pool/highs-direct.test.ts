import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ec2InstanceTypes } from '../catalog/index.ts';
import { buildBoundModel, type BoundModel } from '../bound/model.ts';
import { plainProblemArb } from '../../test/solver/arbitraries.ts';
import { checkModel, HighsCallError } from './highs-direct.ts';
import { loadedHighs, throughPackage } from './lp.ts';

const its = ec2InstanceTypes({ region: 'ap-northeast-2' });
const models = fc.sample(plainProblemArb(its), { numRuns: 8, seed: 23 }).map((input) => buildBoundModel(input).model);

/** A two-column covering LP: min 2x + 3y, x + y >= 1, x >= 0.25. */
function small(): BoundModel {
  return {
    numCols: 2,
    numRows: 2,
    colCost: Float64Array.of(2, 3),
    rowLower: Float64Array.of(1, 0.25),
    starts: Int32Array.of(0, 2, 3),
    indices: Int32Array.of(0, 1, 0),
    values: Float64Array.of(1, 1, 1),
  };
}

describe("the bound LP through HiGHS' C API", () => {
  it('is loaded in this thread from the compiled module, with the direct calls', async () => {
    expect((await loadedHighs()).direct).toBeDefined();
  });

  it("solves as the package's model API does on the same HiGHS: same status and objective, bit for bit", async () => {
    const { h, direct } = await loadedHighs();
    expect(models.some((m) => m.numCols > 50)).toBe(true);
    for (const model of [small(), ...models]) {
      const { seconds: _a, ...viaPackage } = throughPackage(h, model, 60);
      const { seconds: _b, ...viaDirect } = direct!.solve(model, 60);
      expect(viaDirect).toEqual(viaPackage);
    }
    const { seconds: _, ...r } = direct!.solve(small(), 60);
    expect(r).toEqual({ status: '7', statusCode: 7, objective: 2 });
  });

  it('refuses a model whose arrays do not fit its shape, naming the field', () => {
    const bad = (patch: Partial<BoundModel>, field: RegExp) => {
      expect(() => checkModel({ ...small(), ...patch })).toThrow(HighsCallError);
      expect(() => checkModel({ ...small(), ...patch })).toThrow(field);
    };
    bad({ colCost: Float64Array.of(1) }, /colCost/);
    bad({ rowLower: Float64Array.of(1, 2, 3) }, /rowLower/);
    bad({ starts: Int32Array.of(0, 2) }, /starts/);
    bad({ starts: Int32Array.of(1, 2, 3) }, /starts must begin with 0/);
    bad({ starts: Int32Array.of(0, 3, 2), indices: Int32Array.of(0, 1), values: Float64Array.of(1, 1) }, /decrease/);
    bad({ indices: Int32Array.of(0, 2, 0) }, /indices\[1\] = 2/);
    bad({ values: Float64Array.of(1, Number.NaN, 1) }, /values\[1\] is not a number/);
    bad({ numRows: -1 }, /numRows/);
  });
});
