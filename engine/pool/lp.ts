// The covering LP of the lower bound (engine/bound) solved with HiGHS' interior-point method in the calling
// thread: a pool worker, where engine tasks run. HiGHS (WebAssembly) is loaded once per thread, on first use: from
// the module its pool compiled (lp-module.ts) when a task brought one, else from the module compiled here from the
// same embedded bytes, through Emscripten's `instantiateWasm` hook; the LP then goes through HiGHS' C API with no
// per-element argument checks (highs-direct.ts). Only if neither module instantiates is the package loaded from its
// own file, and the LP passed through its model API, checks and all.
//
// The highs package (Emscripten's loader, which every path above runs) is imported on first use too, not statically:
// a worker's module must load without it (only a lower bound needs it), and in a tree without it (an image whose
// node_modules lost it) the task that bounds fails with an error naming the package, instead of every worker failing
// to start (which left the pool's queued tasks waiting for ever: pool.ts).
import type { Highs } from 'highs';
import type { LpResult, LpSolver } from '../bound/index.ts';
import type { BoundModel } from '../bound/model.ts';
import { exportedMemory, HighsDirect, type HighsExports } from './highs-direct.ts';
import { lpModule } from './lp-module.ts';
import { MissingPackageError } from './missing-package.ts';

/** HiGHS' loader: takes Emscripten's module options. */
type HighsLoader = (options?: object) => Promise<Highs>;

let loader: Promise<HighsLoader> | undefined;

/** The highs package's loader, imported once per thread; rejects with a MissingPackageError naming the package. */
function highsLoader(): Promise<HighsLoader> {
  loader ??= import('highs').then(
    // The package's types describe a CommonJS default export; the ESM entry Node loads exports the loader itself.
    (m) => m.default as unknown as HighsLoader,
    (e: unknown) => {
      throw new MissingPackageError(
        'highs',
        `the lower bound (its LP) needs the package \`highs\`, which cannot be loaded: ${(e as Error)?.message ?? String(e)}`,
        { cause: e },
      );
    },
  );
  return loader;
}

/** HiGHS in this thread: `direct` when it was instantiated here from a compiled module (its memory known). */
interface Loaded {
  readonly h: Highs;
  readonly direct?: HighsDirect;
}

let highs: Promise<Loaded> | undefined;
/** The compiled module a task brought, until HiGHS is loaded. */
let shared: WebAssembly.Module | undefined;

/** HiGHS in this thread is to be made from `module` (compiled by the pool), if it is not loaded yet. */
export function adoptLpModule(module: WebAssembly.Module): void {
  shared ??= module;
}

/**
 * Loads HiGHS: from the adopted module, else from one compiled here, through Emscripten's `instantiateWasm` hook
 * (the package's `wasmModule` option is typed and documented, but its 1.15.3 build never reads it); from the
 * package's own file if there is no module or it does not instantiate (bytes of another highs version than the
 * loader's).
 */
async function load(): Promise<Loaded> {
  const loadHighs = await highsLoader();
  const module = shared ?? (await lpModule());
  if (module) {
    try {
      return await fromModule(loadHighs, module);
    } catch {
      // The package's own file, below.
    }
  }
  return { h: await loadHighs() };
}

/**
 * HiGHS instantiated from `module`, with its linear memory for the direct calls. A failed instantiation rejects:
 * the hook's callback alone would leave the load waiting for ever.
 */
function fromModule(loadHighs: HighsLoader, module: WebAssembly.Module): Promise<Loaded> {
  return new Promise((resolve, reject) => {
    let memory: WebAssembly.Memory | undefined;
    const options = {
      instantiateWasm(imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance) => void) {
        WebAssembly.instantiate(module, imports).then((instance) => {
          memory = exportedMemory(instance);
          receive(instance);
        }, reject);
        return {};
      },
    };
    loadHighs(options).then(
      (h) => resolve({ h, ...(memory ? { direct: new HighsDirect(h as unknown as HighsExports, memory) } : {}) }),
      reject,
    );
  });
}

async function solve(model: BoundModel, timeLimitSec: number): Promise<LpResult> {
  const { h, direct } = await loadedHighs();
  if (model.numCols === 0) return { status: 'Optimal', statusCode: 7, objective: 0, seconds: 0 };
  return direct ? direct.solve(model, timeLimitSec) : throughPackage(h, model, timeLimitSec);
}

/** The LP through the package's model API (its argument checks included). */
export function throughPackage(h: Highs, model: BoundModel, timeLimitSec: number): LpResult {
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

/** HiGHS as loaded in this thread (tests compare the direct calls with the package's API on it). */
export const loadedHighs = (): Promise<Loaded> => (highs ??= load());

/** HiGHS in this thread. */
export const inThreadLp: LpSolver = { solveLp: (model, opts = {}) => solve(model, opts.timeLimitSec ?? 60) };
