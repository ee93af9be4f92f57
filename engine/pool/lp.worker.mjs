// An LP worker: HiGHS (WebAssembly) loaded once per thread; a task is a covering LP in CSC form (typed
// arrays, transferred) solved with the interior-point method. Plain JavaScript, like solver.worker.mjs.
import highsLoader from 'highs';

let highs;

export default async function solveLp({ numCols, numRows, colCost, rowLower, starts, indices, values, timeLimitSec }) {
  highs ??= await highsLoader();
  if (numCols === 0) return { status: 'Optimal', objective: 0, seconds: 0 };
  return highs.withModel({
    numCols,
    numRows,
    colCost,
    colLower: new Float64Array(numCols),
    colUpper: new Float64Array(numCols).fill(highs.infinity),
    rowLower,
    rowUpper: new Float64Array(numRows).fill(highs.infinity),
    matrix: { format: 'csc', numRows, numCols, starts, indices, values },
  }, (m) => {
    m.options.set({ output_flag: false, solver: 'ipm', time_limit: timeLimitSec ?? 60 });
    const t0 = performance.now();
    m.run();
    const status = m.getModelStatus();
    return { status: String(status), statusCode: Number(status), objective: m.getObjectiveValue(), seconds: (performance.now() - t0) / 1000 };
  });
}
