// `node --import tsx test/perf/repack-ab.ts /path/to/other/tree|carry [size] [rounds] [local|engine|model]`: the consolidation
// suite's repack loop (repack-fixture.ts) on its fragmented cluster of `size`, this tree against another checkout,
// interleaved in one process so both see the same machine load. `local` runs disrupt() in this thread with warm
// caches, the caller applying each decision; `engine` goes through each tree's Engine (one worker) and a warm
// cluster model synced to the start snapshot first, decisions carried out as each tree's suite does. Prints the
// median wall and process-CPU ms per run for each (after one warm-up run), their ratio, and whether the plans
// (nodes, $/h, loops) are identical. `carry` in place of the other tree compares this tree with itself: A carries
// each decision out on the model (ClusterEngine.carryOut, or ClusterModel.adopt in `model` mode), B applies it on
// the caller's side only and ships the difference with the next call. `model` mode runs the worker's model path in
// this thread (repack-fixture.ts, modelDecider); its CPU is then the worker's and the caller's together, in turn.
import { engineDecider, loadTree, localDecider, median, modelDecider, repackRun } from './repack-fixture.ts';

const [other, sizeArg = '5000', roundsArg = '5', mode = 'local'] = process.argv.slice(2);
const size = Number(sizeArg);
const rounds = Number(roundsArg);

const carryAB = other === 'carry';

async function load(root: string, carry = true) {
  const tree = await loadTree(root, size);
  const d =
    mode === 'engine'
      ? engineDecider(tree, carry)
      : mode === 'model'
        ? modelDecider(tree, undefined, carry && tree.carries)
        : localDecider(tree);
  const name = carryAB ? `${root} (${carry ? 'carry out' : 'caller applies, ships the difference'})` : root;
  return { name, run: () => repackRun(tree, d), close: async () => d.close?.() };
}

const trees = carryAB
  ? [await load(process.cwd()), await load(process.cwd(), false)]
  : [await load(process.cwd()), await load(other!)];
const wall: number[][] = [[], []];
const cpu: number[][] = [[], []];
const plans: string[][] = [[], []];
try {
  for (let r = 0; r <= rounds; r++) {
    // A B, then B A: neither always runs first after the other's garbage.
    for (const i of r % 2 ? [1, 0] : [0, 1]) {
      const t = trees[i]!;
      const run = await t.run();
      if (r === 0) continue; // warm-up
      wall[i]!.push(run.wall);
      cpu[i]!.push(run.cpu);
      plans[i]!.push(run.plan);
    }
  }
  for (const [i, t] of trees.entries())
    process.stdout.write(
      `${i === 0 ? 'this ' : 'other'} ${t.name}: median ${median(wall[i]!).toFixed(0)} ms wall, ${median(cpu[i]!).toFixed(0)} ms cpu; ${plans[i]![0]}\n`,
    );
  process.stdout.write(
    `fragmented-${size} ${mode}, ${rounds} rounds: this/other wall ${(median(wall[0]!) / median(wall[1]!)).toFixed(3)}, cpu ${(median(cpu[0]!) / median(cpu[1]!)).toFixed(3)}; plans ${JSON.stringify(plans[0]) === JSON.stringify(plans[1]) ? 'identical' : 'DIFFER'}\n`,
  );
} finally {
  for (const t of trees) await t.close();
}
