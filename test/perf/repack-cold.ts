// `node --import tsx test/perf/repack-cold.ts [size] [runs]`: how much of the consolidation suite's cold repack run
// (a fresh worker: cold JIT and empty model caches) is the JIT and how much the caches. Runs the suite's repack
// loop on the worker's model path in this thread (repack-fixture.ts): first cold (nothing warm), then alternately
// on a fresh model (warm JIT, empty caches) and on a warm one (both warm). Prints each run's wall and process-CPU
// ms, each loop's wall ms (deciding: shipping the snapshot to the model and disrupt(); carrying the decision out)
// and the plan.
import { loadTree, modelDecider, repackRun, type Decider } from './repack-fixture.ts';

const [sizeArg = '5000', runsArg = '2'] = process.argv.slice(2);
const tree = await loadTree(process.cwd(), Number(sizeArg));
const solver = new tree.local.WasmSolver();

async function run(d: Decider, label: string): Promise<void> {
  const r = await repackRun(tree, d);
  process.stdout.write(
    `${label}: ${r.wall.toFixed(0)} ms wall (loops ${r.perLoop.join(' + ')}), ${r.cpu.toFixed(0)} ms cpu; ${r.plan}\n`,
  );
}

const warm = modelDecider(tree, solver);
await run(warm, 'cold JIT, cold caches');
for (let i = 0; i < Number(runsArg); i++) {
  await run(modelDecider(tree, solver), 'warm JIT, cold caches');
  await run(warm, 'warm JIT, warm caches');
}
