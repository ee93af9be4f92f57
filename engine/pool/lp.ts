// The covering LP of the lower bound (engine/bound) solved with HiGHS' interior-point method in the calling
// thread: a pool worker, where engine tasks run. HiGHS (WebAssembly) is loaded once per thread, on first use: from
// the module its pool compiled (lp-module.ts) when a task brought one, else compiled here from HiGHS' file.
import highsLoader, { type Highs } from 'highs';
import type { LpResult, LpSolver } from '../bound/index.ts';
import type { BoundModel } from '../bound/model.ts';

// The package's types describe a CommonJS default export; the ESM entry Node loads exports the loader itself, which
// takes Emscripten's module options.
const loadHighs = highsLoader as unknown as (options?: object) => Promise<Highs>;
let highs: Promise<Highs> | undefined;
/** The compiled module a task brought, until HiGHS is loaded. */
let shared: WebAssembly.Module | undefined;

/** HiGHS in this thread is to be made from `module` (compiled by the pool), if it is not loaded yet. */
export function adoptLpModule(module: WebAssembly.Module): void {
  shared ??= module;
}

/**
 * Loads HiGHS; from the adopted module through Emscripten's `instantiateWasm` hook when there is one (the package's
 * `wasmModule` option is typed and documented, but its 1.15.3 build never reads it), else, or if that module does
 * not instantiate (bytes of another highs version than the loader's), from the package's own file.
 */
function load(): Promise<Highs> {
  const module = shared;
  return module ? fromModule(module).catch(() => loadHighs()) : loadHighs();
}

/**
 * HiGHS instantiated from `module`. A failed instantiation rejects: the hook's callback alone would leave the load
 * waiting for ever.
 */
function fromModule(module: WebAssembly.Module): Promise<Highs> {
  return new Promise((resolve, reject) => {
    const options = {
      instantiateWasm(imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance) => void) {
        WebAssembly.instantiate(module, imports).then(receive, reject);
        return {};
      },
    };
    loadHighs(options).then(resolve, reject);
  });
}

async function solve(model: BoundModel, timeLimitSec: number): Promise<LpResult> {
  const h = await (highs ??= load());
  if (model.numCols === 0) return { status: 'Optimal', statusCode: 7, objective: 0, seconds: 0 };
  const { numCols, numRows } = model;
  const data = {
    numCols,
    numRows,
    colCost: model.colCost,
    colLower: new Float64Array(numCols),
    colUpper: new Float64Array(numCols).fill(h.infinity),
    rowLower: model.rowLower,
    rowUpper: new Float64Array(numRows).fill(h.infinity),
    matrix: {
      format: 'csc' as const,
      numRows,
      numCols,
      starts: model.starts,
      indices: model.indices,
      values: model.values,
    },
  };
  return h.withModel(
    data as never,
    (m: { options: { set(o: object): void }; run(): void; getModelStatus(): unknown; getObjectiveValue(): number }) => {
      m.options.set({ output_flag: false, solver: 'ipm', time_limit: timeLimitSec });
      const t0 = performance.now();
      m.run();
      const status = m.getModelStatus();
      return {
        status: String(status),
        statusCode: Number(status),
        objective: m.getObjectiveValue(),
        seconds: (performance.now() - t0) / 1000,
      };
    },
  );
}

/** HiGHS in this thread. */
export const inThreadLp: LpSolver = { solveLp: (model, opts = {}) => solve(model, opts.timeLimitSec ?? 60) };
