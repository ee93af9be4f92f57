// `node --import tsx test/perf/repack-apply-ab.ts [/path/to/other/tree] [size] [reps]`: what carrying out a repack
// decision costs on each side of the Engine. Takes the first decision of the consolidation suite's repack loop on
// its fragmented cluster of `size` (repack-fixture.ts) and times applyCommands on it, median of `reps`: as the
// worker's model runs it (the commands are the objects disrupt() made, sharing requirement arrays between
// NodeClaims finished alike), and as the caller runs it (the commands through msgpack, as they reach the caller:
// nothing shared). With another tree, each tree's applyCommands runs on that tree's own first decision,
// interleaved, and the resulting snapshots are compared (nodes, labels, pods) across the trees.
import { loadTree, median } from './repack-fixture.ts';

const [other, sizeArg = '5000', repsArg = '7'] = process.argv.slice(2);
const size = Number(sizeArg);
const reps = Number(repsArg);

async function load(root: string) {
  const t = await loadTree(root, size);
  const solver = new t.local.WasmSolver();
  const caches = new t.local.ModelCaches();
  const o = { repack: 'only', repackDeadlineMs: 30_000, state: t.idx.INITIAL_LOOP_STATE, consolidationState: 0 };
  const r = await t.local.disrupt(t.snapshot, { ...o, solver, caches });
  const d = r.decision;
  const cmds = [d, ...(d.followUps ?? []), ...(d.concurrent ?? [])];
  const names = cmds.map((c: { replacements: unknown[] }, k: number) => c.replacements.map((_, i) => `v0-c${k}-r${i}`));
  const wire = t.codec.unpack(t.codec.pack(cmds));
  const apply = (c: unknown) => () => t.idx.applyCommands(t.snapshot, c, names);
  return { root, worker: apply(cmds), caller: apply(wire), replacements: names.flat().length };
}

function time(f: () => unknown): number {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
}

/** A digest of a snapshot's nodes: names, labels (in order), annotations, pods and their fields. */
function digest(s: { nodes: readonly Record<string, unknown>[] }): string {
  return JSON.stringify(s.nodes);
}

const trees = [await load(process.cwd()), ...(other ? [await load(other)] : [])];
const ms = trees.map(() => ({ worker: [] as number[], caller: [] as number[] }));
for (let r = 0; r <= reps; r++)
  for (const i of r % 2 ? [...trees.keys()].reverse() : trees.keys())
    for (const side of ['worker', 'caller'] as const) {
      const t = time(trees[i]![side]);
      if (r > 0) ms[i]![side].push(t);
    }
for (const [i, t] of trees.entries())
  process.stdout.write(
    `${i ? 'other' : 'this '} ${t.root}: ${t.replacements} replacements; applyCommands median ${median(ms[i]!.worker).toFixed(1)} ms as the worker's model (shared requirements), ${median(ms[i]!.caller).toFixed(1)} ms as the caller (decoded commands)\n`,
  );
if (trees.length === 2) {
  const same = (side: 'worker' | 'caller') => digest(trees[0]![side]() as never) === digest(trees[1]![side]() as never);
  process.stdout.write(
    `this/other worker ${(median(ms[0]!.worker) / median(ms[1]!.worker)).toFixed(3)}, caller ${(median(ms[0]!.caller) / median(ms[1]!.caller)).toFixed(3)}; snapshots after: worker side ${same('worker') ? 'identical' : 'DIFFER'}, caller side ${same('caller') ? 'identical' : 'DIFFER'}\n`,
  );
}
