// `node --import tsx test/perf/repack-phases.ts [size] [runs] [local|engine|model]`: the consolidation suite's repack
// loop (repack only, until it finds nothing) on its fragmented cluster of `size`, run by repack-fixture.ts the way
// the suite runs it. `local` runs disrupt() in the calling thread with warm caches, the caller applying each
// decision; `engine` goes through an Engine's warm cluster model, each decision carried out with
// ClusterEngine.carryOut as the suite does (engineDecider); `model` is the worker's model path in this thread
// (modelDecider). Each run starts on a model synced to the start snapshot, untimed. Prints each run's time (wall,
// and this process's CPU, all threads), nodes, $/h and loops after, so a change can be checked for both speed and
// plan. REPACK_PROFILE=FILE writes a CPU profile of the last run of `local` or `model` (the earlier ones warm the
// caches and the JIT); for `engine`, use `node --cpu-prof`, which profiles the worker too. REPACK_LOOPS=1 prints
// each loop's time (deciding, carrying out).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { engineDecider, loadTree, localDecider, modelDecider, repackRun } from './repack-fixture.ts';

const size = Number(process.argv[2] ?? 5000);
const runs = Number(process.argv[3] ?? 1);
const mode = process.argv[4] ?? 'local';
const tree = await loadTree(process.cwd(), size);
const d = mode === 'engine' ? engineDecider(tree) : mode === 'model' ? modelDecider(tree) : localDecider(tree);
const profileTo = process.env['REPACK_PROFILE'];
const session = profileTo && mode !== 'engine' ? new Session() : undefined;
const post = (method: string) =>
  new Promise<unknown>((ok, fail) => session!.post(method, (e, r) => (e ? fail(e) : ok(r))));
session?.connect();
try {
  for (let run = 0; run < runs; run++) {
    const last = run === runs - 1;
    // The model back at the start snapshot before the profile starts (repackRun syncs it again, a no-op then).
    if (session && last)
      await d
        .sync(tree.snapshot)
        .then(() => post('Profiler.enable'))
        .then(() => post('Profiler.start'));
    const r = await repackRun(tree, d);
    if (session && last) {
      const { profile } = (await post('Profiler.stop')) as { profile: unknown };
      writeFileSync(profileTo!, JSON.stringify(profile));
    }
    if (process.env['REPACK_LOOPS']) process.stderr.write(`  loops: ${r.perLoop.join(' + ')}\n`);
    process.stdout.write(
      `${tree.name} (${mode}): ${tree.snapshot.nodes.length} nodes -> ${r.plan}, ${r.wall.toFixed(0)} ms wall, ${r.cpu.toFixed(0)} ms cpu\n`,
    );
  }
} finally {
  await d.close?.();
}
