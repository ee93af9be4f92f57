// `node --import tsx test/perf/repack-model-ab.ts /path/to/other/tree [size] [rounds]`: the consolidation suite's
// repack loop the way the Engine's worker runs it, in this thread (repack-fixture.ts: each loop's snapshot through
// a ModelMirror's delta, msgpack and a ClusterModel; decisions carried out as each tree's suite does). This tree
// and the other are interleaved (A B, B A, ...), each with its own model that stays warm from run to run, as the
// suite's does; run 0 of each is its cold run (what the suite's repack row times, a worker's JIT aside). No worker
// threads, so the two trees' figures are not skewed by how the machine schedules them. Prints each run, the cold
// and warm (median) wall and process-CPU ms per tree, their ratio, and whether the plans are identical.
// REPACK_PROFILE=FILE instead profiles this tree's third run alone (REPACK_PROFILE_RUN=0 profiles its cold run, 1
// its second), from after the untimed sync that ships the start snapshot back to the model.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { loadTree, median, modelDecider, repackRun, type Run } from './repack-fixture.ts';

const [other, sizeArg = '5000', roundsArg = '3'] = process.argv.slice(2);
const size = Number(sizeArg);
const rounds = Number(roundsArg);

async function load(root: string) {
  const tree = await loadTree(root, size);
  const d = modelDecider(tree);
  return { name: root, run: () => repackRun(tree, d), sync: () => d.sync(tree.snapshot) };
}

async function profile(file: string): Promise<void> {
  const tree = await load(process.cwd());
  const warmUps = Number(process.env['REPACK_PROFILE_RUN'] ?? 2);
  for (let i = 0; i < warmUps; i++) await tree.run();
  const session = new Session();
  session.connect();
  const post = (m: string) => new Promise<unknown>((ok, fail) => session.post(m, (e, r) => (e ? fail(e) : ok(r))));
  // The model back at the start snapshot before the profile starts, as the timed part of a run finds it.
  await tree.sync();
  await post('Profiler.enable');
  await post('Profiler.start');
  const r = await tree.run();
  const { profile } = (await post('Profiler.stop')) as { profile: unknown };
  writeFileSync(file, JSON.stringify(profile));
  process.stdout.write(`profiled run: ${r.wall.toFixed(0)} ms wall, ${r.cpu.toFixed(0)} ms cpu; ${r.plan}\n`);
}

async function compare(): Promise<void> {
  const trees = [await load(process.cwd()), await load(other!)];
  const runs: Run[][] = [[], []];
  for (let round = 0; round <= rounds; round++) {
    const order = round % 2 ? [1, 0] : [0, 1];
    for (const i of order) {
      const r = await trees[i]!.run();
      runs[i]!.push(r);
      process.stdout.write(
        `round ${round} ${i ? 'other' : 'this '}: ${r.wall.toFixed(0)} ms wall (${r.perLoop.join(' + ')}), ${r.cpu.toFixed(0)} ms cpu; ${r.plan}\n`,
      );
    }
  }
  const warm = (i: number, k: 'wall' | 'cpu') => median(runs[i]!.slice(1).map((r) => r[k]));
  for (const [i, t] of trees.entries())
    process.stdout.write(
      `${i ? 'other' : 'this '} ${t.name}: cold ${runs[i]![0]!.wall.toFixed(0)} ms wall, ${runs[i]![0]!.cpu.toFixed(0)} ms cpu; warm median ${warm(i, 'wall').toFixed(0)} ms wall, ${warm(i, 'cpu').toFixed(0)} ms cpu\n`,
    );
  const same = JSON.stringify(runs[0]!.map((r) => r.plan)) === JSON.stringify(runs[1]!.map((r) => r.plan));
  process.stdout.write(
    `fragmented-${size} worker path in-thread, ${rounds} warm rounds: this/other cold cpu ${(runs[0]![0]!.cpu / runs[1]![0]!.cpu).toFixed(3)}, warm cpu ${(warm(0, 'cpu') / warm(1, 'cpu')).toFixed(3)}, warm wall ${(warm(0, 'wall') / warm(1, 'wall')).toFixed(3)}; plans ${same ? 'identical' : 'DIFFER'}\n`,
  );
}

const profileTo = process.env['REPACK_PROFILE'];
await (profileTo ? profile(profileTo) : compare());
