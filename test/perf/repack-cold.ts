// `node --import tsx test/perf/repack-cold.ts [size] [runs]`: how much of the consolidation suite's cold repack run
// (a fresh worker: cold JIT and empty model caches) is the JIT and how much the caches. Runs the repack loop the
// way repack-model-ab.ts does, in this thread: first cold (nothing warm), then alternately on a fresh model (warm
// JIT, empty caches) and on a warm one (both warm). Prints each run's wall and process-CPU ms, each loop's wall ms
// (shipping the snapshot to the model, disrupt(), applying the decision) and the plan.
const [sizeArg = '5000', runsArg = '2'] = process.argv.slice(2);
const size = Number(sizeArg);
const runs = Number(runsArg);
const LEGACY = [100, 1000, 5000, 10_000];
const root = process.cwd();
const idx = await import(`${root}/engine/index.ts`);
const local = await import(`${root}/engine/local.ts`);
const codec = await import(`${root}/engine/pool/codec.ts`);
const scen = await import(`${root}/bench/suites/consolidation-scenarios.ts`);
const at = LEGACY.indexOf(size);
const sc = await scen.fragmentedCluster(size, 20_261_129 + (at >= 0 ? at : size), new local.WasmSolver());
const solver = new local.WasmSolver();

function freshModel() {
  const mirror = new local.ModelMirror();
  const model = new local.ClusterModel();
  const ship = (s: unknown) => {
    const { delta, commit } = mirror.diff(s);
    model.apply(codec.unpack(codec.pack(delta)));
    commit();
    return model.snapshot();
  };
  return { model, ship };
}

async function run(m: ReturnType<typeof freshModel>, label: string): Promise<void> {
  m.ship(sc.snapshot);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let s = sc.snapshot;
  let state = idx.INITIAL_LOOP_STATE;
  let loops = 0;
  const perLoop: string[] = [];
  for (let version = 0; ; version++) {
    loops++;
    const l0 = performance.now();
    const o = { repack: 'only', repackDeadlineMs: 30_000, state, consolidationState: version };
    const shipped = m.ship(s);
    const l1 = performance.now();
    const r = await local.disrupt(shipped, { ...o, solver, caches: m.model.caches });
    const l2 = performance.now();
    state = r.state;
    const d = r.decision;
    if (d.kind !== 'noop') {
      let i = 0;
      for (const c of [d, ...(d.followUps ?? []), ...(d.concurrent ?? [])])
        s = idx.applyCommand(s, c, (j: number) => `v${version}-c${i++}-r${j}`);
    }
    const l3 = performance.now();
    perLoop.push(`ship ${(l1 - l0).toFixed(0)}/disrupt ${(l2 - l1).toFixed(0)}/apply ${(l3 - l2).toFixed(0)}`);
    if (d.kind === 'noop') break;
  }
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const nodes = s.nodes.filter((n: { hasNodeClaim: boolean }) => n.hasNodeClaim).length;
  process.stdout.write(
    `${label}: ${wall.toFixed(0)} ms wall (loops ${perLoop.join(' + ')}), ${((c.user + c.system) / 1000).toFixed(0)} ms cpu; ${nodes} nodes, $${scen.clusterCost(s).toFixed(4)}/h, ${loops} loops\n`,
  );
}

const warm = freshModel();
await run(warm, 'cold JIT, cold caches');
for (let i = 0; i < runs; i++) {
  await run(freshModel(), 'warm JIT, cold caches');
  await run(warm, 'warm JIT, warm caches');
}
