// `node --import tsx test/perf/repack-ab.ts /path/to/other/tree [size] [rounds] [local|engine]`: the consolidation
// suite's repack loop (repack only, until it finds nothing) on its fragmented cluster of `size`, this tree
// against another checkout, interleaved in one process so both see the same machine load. `local` runs
// disrupt() in this thread with warm caches; `engine` goes through each tree's Engine (one worker) and a warm
// cluster model synced to the start snapshot first, as the suite does. Prints the median wall and process-CPU
// ms per run for each, their ratio, and whether the plans (nodes, $/h, loops) are identical.
import type { LoopState, Snapshot } from '../../engine/index.ts';

interface Tree {
  readonly name: string;
  run(): Promise<string>;
  close(): Promise<void>;
}

const [other, sizeArg = '5000', roundsArg = '5', mode = 'local'] = process.argv.slice(2);
const size = Number(sizeArg);
const rounds = Number(roundsArg);
const LEGACY = [100, 1000, 5000, 10_000];

async function load(root: string): Promise<Tree> {
  const idx = await import(`${root}/engine/index.ts`);
  const local = await import(`${root}/engine/local.ts`);
  const scen = await import(`${root}/bench/suites/consolidation-scenarios.ts`);
  const solver = new local.WasmSolver();
  const at = LEGACY.indexOf(size);
  const sc = await scen.fragmentedCluster(size, 20_261_129 + (at >= 0 ? at : size), solver);
  const caches = new local.ModelCaches();
  const engine = mode === 'engine' ? idx.createEngine({ threads: 1 }) : undefined;
  const cluster = engine?.cluster(sc.name);
  return {
    name: root,
    async run() {
      // The model starts where the cluster is, as a controller's does (shipped before the timed part).
      if (cluster) await cluster.lowerBound(sc.snapshot, []);
      let s: Snapshot = sc.snapshot;
      let state: LoopState = idx.INITIAL_LOOP_STATE;
      let loops = 0;
      for (let version = 0; ; version++) {
        loops++;
        const o = { repack: 'only', repackDeadlineMs: 30_000, state, consolidationState: version };
        const r = cluster
          ? await cluster.disrupt(s, { ...o, deadlines: true })
          : await local.disrupt(s, { ...o, solver, caches });
        state = r.state;
        const d = r.decision;
        if (d.kind === 'noop') break;
        let i = 0;
        for (const c of [d, ...(d.followUps ?? []), ...(d.concurrent ?? [])])
          s = idx.applyCommand(s, c, (j: number) => `v${version}-c${i++}-r${j}`);
      }
      const nodes = s.nodes.filter((n) => n.hasNodeClaim).length;
      return `${nodes} nodes, $${scen.clusterCost(s).toFixed(4)}/h, ${loops} loops`;
    },
    close: async () => engine?.close(),
  };
}

const median = (a: number[]) => [...a].sort((p, q) => p - q)[a.length >> 1]!;
const trees = [await load(process.cwd()), await load(other!)];
const wall: number[][] = [[], []];
const cpu: number[][] = [[], []];
const plans: string[][] = [[], []];
try {
  for (let r = 0; r <= rounds; r++) {
    for (const [i, t] of trees.entries()) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const plan = await t.run();
      const ms = performance.now() - t0;
      const c = process.cpuUsage(c0);
      if (r === 0) continue; // warm-up
      wall[i]!.push(ms);
      cpu[i]!.push((c.user + c.system) / 1000);
      plans[i]!.push(plan);
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
