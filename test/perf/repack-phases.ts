// `node --import tsx test/perf/repack-phases.ts [size] [runs] [local|engine]`: the consolidation suite's repack
// loop (repack only, until it finds nothing) on its fragmented cluster of `size`. `local` runs disrupt() in the
// calling thread with warm caches (what the Engine's worker runs); `engine` goes through an Engine's warm
// cluster model as the suite does. Prints each run's time (wall, and this process's CPU, all threads), loops,
// nodes and $/h after, so a change can be checked for both speed and plan. REPACK_PROFILE=FILE writes a CPU
// profile of the last local run (the earlier ones warm the caches and the JIT); for the engine, use
// `node --cpu-prof`, which profiles the worker too. REPACK_LOOPS=1 prints each loop's time (and what was shipped).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import {
  applyCommand,
  createEngine,
  INITIAL_LOOP_STATE,
  type DisruptResult,
  type EngineDisruptOptions,
  type LoopState,
  type Snapshot,
} from '../../engine/index.ts';
import { disrupt, ModelCaches, WasmSolver } from '../../engine/local.ts';
import { clusterCost, fragmentedCluster } from '../../bench/suites/consolidation-scenarios.ts';

const size = Number(process.argv[2] ?? 5000);
const runs = Number(process.argv[3] ?? 1);
const mode = process.argv[4] ?? 'local';
const all = [100, 1000, 5000, 10_000];
const at = all.indexOf(size);
const solver = new WasmSolver();
const sc = await fragmentedCluster(size, 20_261_129 + (at >= 0 ? at : size), solver);
const caches = new ModelCaches();
const engine = mode === 'engine' ? createEngine({ threads: 1 }) : undefined;
const cluster = engine?.cluster(sc.name);
const decide = (s: Snapshot, o: EngineDisruptOptions): Promise<DisruptResult> =>
  cluster ? cluster.disrupt(s, { ...o, deadlines: true }) : disrupt(s, { ...o, solver, caches });
const profileTo = process.env['REPACK_PROFILE'];
const session = profileTo && !engine ? new Session() : undefined;
const post = (method: string) =>
  new Promise<unknown>((ok, fail) => session!.post(method, (e, r) => (e ? fail(e) : ok(r))));
session?.connect();
try {
  for (let run = 0; run < runs; run++) {
    const last = run === runs - 1;
    if (session && last) await post('Profiler.enable').then(() => post('Profiler.start'));
    // The model starts where the cluster is, as a controller's does (shipped before the timed part).
    if (cluster) await cluster.lowerBound(sc.snapshot, []);
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    let s: Snapshot = sc.snapshot;
    let state: LoopState = INITIAL_LOOP_STATE;
    let loops = 0;
    for (let version = 0; ; version++) {
      loops++;
      const d0 = performance.now();
      const r = await decide(s, { repack: 'only', repackDeadlineMs: 30_000, state, consolidationState: version });
      if (process.env['REPACK_LOOPS'])
        process.stderr.write(
          `  loop ${loops}: ${(performance.now() - d0).toFixed(0)} ms${cluster ? `, shipped ${JSON.stringify(cluster.lastShipped())}` : ''}\n`,
        );
      state = r.state;
      const d = r.decision;
      if (d.kind === 'noop') break;
      let i = 0;
      for (const c of [d, ...(d.followUps ?? []), ...(d.concurrent ?? [])])
        s = applyCommand(s, c, (j) => `v${version}-c${i++}-r${j}`);
    }
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(c0);
    if (session && last) {
      const { profile } = (await post('Profiler.stop')) as { profile: unknown };
      writeFileSync(profileTo!, JSON.stringify(profile));
    }
    const nodes = s.nodes.filter((n) => n.hasNodeClaim).length;
    process.stdout.write(
      `${sc.name} (${mode}): ${sc.snapshot.nodes.length} nodes -> ${nodes}, $${clusterCost(s).toFixed(4)}/h, ${loops} loops, ${ms.toFixed(0)} ms wall, ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms cpu\n`,
    );
  }
} finally {
  await engine?.close();
}
