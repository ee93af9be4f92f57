// The covering LP handed to HiGHS through its C API, as the highs package's model API hands it, without the
// package's argument checks: those build a label string for every element they check ("matrix.values[1234]") whether
// it is valid or not, 21% of a what-if job's allocation (sampled on a pool worker; docs/benchmarks.md), garbage that
// two pool workers collect on two cores. The bound's model is ours and of one shape (typed arrays of the declared
// lengths, CSC), so checkModel() checks what the package's checks would catch, once per array and not per element,
// and the calls are the ones the package makes for an LP: Highs_create with threads 1 and parallel off (its
// createModel), the three options, Highs_passLp (its passModel without a Hessian or integrality passes the same LP),
// Highs_run, the model status and objective, Highs_destroy.
import type { LpResult } from '../bound/index.ts';
import type { BoundModel } from '../bound/model.ts';

/** What of the loaded highs module (Emscripten's) the calls use. */
export interface HighsExports {
  readonly infinity: number;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  _Highs_create(): number;
  _Highs_destroy(highs: number): void;
  _Highs_passLp(highs: number, ...args: number[]): number;
  _Highs_run(highs: number): number;
  _Highs_getModelStatus(highs: number): number;
  _Highs_getObjectiveValue(highs: number): number;
  cwrap(name: string, returnType: string, argumentTypes: readonly string[]): (...args: unknown[]) => number;
}

/** HiGHS' status codes (Highs_c_api.h): kHighsStatusError. */
const STATUS_ERROR = -1;
/** Matrix format kColwise (Highs_c_api.h). */
const COLWISE = 1;
const MINIMIZE = 1;

export class HighsCallError extends Error {
  override name = 'HighsCallError';
}

/** The bound's model checked as the package's checks would, array by array: lengths and the matrix's shape. */
export function checkModel(model: BoundModel): void {
  const { numCols, numRows, colCost, rowLower, starts, indices, values } = model;
  const fail = (what: string) => {
    throw new HighsCallError(`bound LP model: ${what}`);
  };
  if (!Number.isInteger(numCols) || numCols < 0) fail(`numCols must be a non-negative integer, got ${numCols}`);
  if (!Number.isInteger(numRows) || numRows < 0) fail(`numRows must be a non-negative integer, got ${numRows}`);
  if (colCost.length !== numCols) fail(`colCost has ${colCost.length} values for ${numCols} columns`);
  if (rowLower.length !== numRows) fail(`rowLower has ${rowLower.length} values for ${numRows} rows`);
  if (starts.length !== numCols + 1) fail(`starts has ${starts.length} values for ${numCols} columns`);
  const nz = starts[numCols] ?? 0;
  if (starts[0] !== 0) fail(`starts must begin with 0, got ${starts[0]}`);
  if (indices.length !== nz || values.length !== nz)
    fail(`indices and values must hold ${nz} non-zeros, got ${indices.length} and ${values.length}`);
  for (let c = 1; c <= numCols; c++)
    if (starts[c]! < starts[c - 1]!) fail(`starts must not decrease (column ${c - 1})`);
  for (let k = 0; k < nz; k++) {
    const row = indices[k]!;
    if (row < 0 || row >= numRows) fail(`indices[${k}] = ${row} is outside the ${numRows} rows`);
  }
  for (const [name, xs] of [
    ['colCost', colCost],
    ['rowLower', rowLower],
    ['values', values],
  ] as const)
    for (let k = 0; k < xs.length; k++) if (Number.isNaN(xs[k])) fail(`${name}[${k}] is not a number`);
}

/** Calls into one loaded HiGHS whose linear memory is `memory`. */
export class HighsDirect {
  private readonly setBool: (highs: number, name: string, value: number) => number;
  private readonly setInt: (highs: number, name: string, value: number) => number;
  private readonly setDouble: (highs: number, name: string, value: number) => number;
  private readonly setString: (highs: number, name: string, value: string) => number;

  constructor(
    private readonly h: HighsExports,
    private readonly memory: WebAssembly.Memory,
  ) {
    const wrap = (name: string, value: string) => h.cwrap(name, 'number', ['number', 'string', value]);
    this.setBool = wrap('Highs_setBoolOptionValue', 'number');
    this.setInt = wrap('Highs_setIntOptionValue', 'number');
    this.setDouble = wrap('Highs_setDoubleOptionValue', 'number');
    this.setString = wrap('Highs_setStringOptionValue', 'string');
  }

  /** Solves `model` (minimise colCost.x, x >= 0, A x >= rowLower) with the interior-point method. */
  solve(model: BoundModel, timeLimitSec: number): LpResult {
    checkModel(model);
    const highs = this.h._Highs_create();
    if (!highs) throw new HighsCallError('Highs_create failed');
    try {
      this.options(highs, timeLimitSec);
      this.pass(highs, model);
      const t0 = performance.now();
      if (this.h._Highs_run(highs) === STATUS_ERROR) throw new HighsCallError('Highs_run failed on the bound LP');
      const seconds = (performance.now() - t0) / 1000;
      const status = this.h._Highs_getModelStatus(highs);
      return { status: String(status), statusCode: status, objective: this.h._Highs_getObjectiveValue(highs), seconds };
    } finally {
      this.h._Highs_destroy(highs);
    }
  }

  private options(highs: number, timeLimitSec: number): void {
    const set = [
      this.setInt(highs, 'threads', 1),
      this.setString(highs, 'parallel', 'off'),
      this.setBool(highs, 'output_flag', 0),
      this.setString(highs, 'solver', 'ipm'),
      this.setDouble(highs, 'time_limit', timeLimitSec),
    ];
    if (set.includes(STATUS_ERROR)) throw new HighsCallError('HiGHS refused an option of the bound LP');
  }

  /** Copies the model into HiGHS' memory (one block: doubles first, then ints) and passes it. */
  private pass(highs: number, model: BoundModel): void {
    const { numCols: n, numRows: m, starts } = model;
    const nz = starts[n]!;
    const doubles = 3 * n + 2 * m + nz;
    const block = this.h._malloc(Math.max(8, doubles * 8 + (n + nz) * 4));
    if (!block) throw new HighsCallError('no WebAssembly memory for the bound LP');
    try {
      // Views made after the allocation: a malloc that grows the memory detaches earlier ones.
      const f64 = new Float64Array(this.memory.buffer, block, doubles);
      const i32 = new Int32Array(this.memory.buffer, block + doubles * 8, n + nz);
      const at = [0, n, 2 * n, 3 * n, 3 * n + m, 3 * n + 2 * m];
      f64.set(model.colCost, at[0]);
      f64.fill(0, at[1], at[2]);
      f64.fill(this.h.infinity, at[2], at[3]);
      f64.set(model.rowLower, at[3]);
      f64.fill(this.h.infinity, at[4], at[5]);
      f64.set(model.values, at[5]);
      i32.set(starts.subarray(0, n), 0);
      i32.set(model.indices, n);
      const d = (k: number) => block + k * 8;
      const i = (k: number) => block + doubles * 8 + k * 4;
      const status = this.h._Highs_passLp(
        highs,
        n,
        m,
        nz,
        COLWISE,
        MINIMIZE,
        0,
        d(at[0]!),
        d(at[1]!),
        d(at[2]!),
        d(at[3]!),
        d(at[4]!),
        i(0),
        i(n),
        d(at[5]!),
      );
      if (status === STATUS_ERROR) throw new HighsCallError(`HiGHS refused the bound LP (${n} columns, ${m} rows)`);
    } finally {
      this.h._free(block);
    }
  }
}

/** The linear memory among a HiGHS instance's exports. */
export function exportedMemory(instance: WebAssembly.Instance): WebAssembly.Memory | undefined {
  return Object.values(instance.exports).find((x): x is WebAssembly.Memory => x instanceof WebAssembly.Memory);
}
