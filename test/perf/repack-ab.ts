// `node --import tsx test/perf/repack-ab.ts /path/to/other/tree [size] [rounds] [local|engine]`: the consolidation
// suite's repack loop (repack-fixture.ts) on its fragmented cluster of `size`, this tree against another checkout,
// interleaved in one process so both see the same machine load. `local` runs disrupt() in this thread with warm
// caches, the caller applying each decision; `engine` goes through each tree's Engine (one worker) and a warm
// cluster model synced to the start snapshot first, decisions carried out as each tree's suite does. Prints the
// median wall and process-CPU ms per run for each (after one warm-up run), their ratio, and whether the plans
// (nodes, $/h, loops) are identical.
import { engineDecider, loadTree, localDecider, median, repackRun } from './repack-fixture.ts';

const [other, sizeArg = '5000', roundsArg = '5', mode = 'local'] = process.argv.slice(2);
const size = Number(sizeArg);
const rounds = Number(roundsArg);

async function load(root: string) {
  const tree = await loadTree(root, size);
  const d = mode === 'engine' ? engineDecider(tree) : localDecider(tree);
  return { name: root, run: () => repackRun(tree, d), close: async () => d.close?.() };
}

const trees = [await load(process.cwd()), await load(other!)];
const wall: number[][] = [[], []];
const cpu: number[][] = [[], []];
const plans: string[][] = [[], []];
try {
  for (let r = 0; r <= rounds; r++) {
    for (const [i, t] of trees.entries()) {
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
