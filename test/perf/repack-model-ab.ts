// `node --import tsx test/perf/repack-model-ab.ts /path/to/other/tree [size] [rounds]`: the consolidation suite's
// repack loop (repack only, until it finds nothing) the way the Engine's worker runs it, in this thread: each loop's
// snapshot goes through a ModelMirror's delta, msgpack and a ClusterModel, and disrupt() runs over the model's
// snapshot with the model's caches. This tree and the other are interleaved (A B, B A, ...), each with its own
// model that stays warm from run to run, as the suite's does; run 0 of each is its cold run (what the suite's
// repack row times, a worker's JIT aside). No worker threads, so the two trees' figures are not skewed by how the
// machine schedules them. Prints each run, the cold and warm (median) wall and process-CPU ms per tree, their
// ratio, and whether the plans are identical. REPACK_PROFILE=FILE instead profiles this tree's third run alone
// (REPACK_PROFILE_RUN=0 profiles its cold run, 1 its second).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

interface Run {
  readonly wall: number;
  readonly cpu: number;
  readonly plan: string;
}

const [other, sizeArg = '5000', roundsArg = '3'] = process.argv.slice(2);
const size = Number(sizeArg);
const rounds = Number(roundsArg);
const LEGACY = [100, 1000, 5000, 10_000];

async function load(root: string): Promise<{ name: string; run(): Promise<Run> }> {
  const idx = await import(`${root}/engine/index.ts`);
  const local = await import(`${root}/engine/local.ts`);
  const codec = await import(`${root}/engine/pool/codec.ts`);
  const scen = await import(`${root}/bench/suites/consolidation-scenarios.ts`);
  const at = LEGACY.indexOf(size);
  const sc = await scen.fragmentedCluster(size, 20_261_129 + (at >= 0 ? at : size), new local.WasmSolver());
  const mirror = new local.ModelMirror();
  const model = new local.ClusterModel();
  const solver = new local.WasmSolver();
  const ship = (s: unknown) => {
    const { delta, commit } = mirror.diff(s);
    model.apply(codec.unpack(codec.pack(delta)));
    commit();
    return model.snapshot();
  };
  return {
    name: root,
    async run() {
      ship(sc.snapshot); // the model starts where the cluster is (untimed, as the suite's lowerBound call)
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      let s = sc.snapshot;
      let state = idx.INITIAL_LOOP_STATE;
      let loops = 0;
      for (let version = 0; ; version++) {
        loops++;
        const o = { repack: 'only', repackDeadlineMs: 30_000, state, consolidationState: version };
        const r = await local.disrupt(ship(s), { ...o, solver, caches: model.caches });
        state = r.state;
        const d = r.decision;
        if (d.kind === 'noop') break;
        let i = 0;
        for (const c of [d, ...(d.followUps ?? []), ...(d.concurrent ?? [])])
          s = idx.applyCommand(s, c, (j: number) => `v${version}-c${i++}-r${j}`);
      }
      const wall = performance.now() - t0;
      const c = process.cpuUsage(c0);
      const nodes = s.nodes.filter((n: { hasNodeClaim: boolean }) => n.hasNodeClaim).length;
      const plan = `${nodes} nodes, $${scen.clusterCost(s).toFixed(4)}/h, ${loops} loops`;
      return { wall, cpu: (c.user + c.system) / 1000, plan };
    },
  };
}

async function profile(file: string): Promise<void> {
  const tree = await load(process.cwd());
  const warmUps = Number(process.env['REPACK_PROFILE_RUN'] ?? 2);
  for (let i = 0; i < warmUps; i++) await tree.run();
  const session = new Session();
  session.connect();
  const post = (m: string) => new Promise<unknown>((ok, fail) => session.post(m, (e, r) => (e ? fail(e) : ok(r))));
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
        `round ${round} ${i ? 'other' : 'this '}: ${r.wall.toFixed(0)} ms wall, ${r.cpu.toFixed(0)} ms cpu; ${r.plan}\n`,
      );
    }
  }
  const median = (a: number[]) => [...a].sort((p, q) => p - q)[a.length >> 1]!;
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
