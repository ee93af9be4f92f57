// `node --import tsx test/perf/engine-phases.ts [pods] [runs]`: a provisioning decision for the solver suite's
// generic mix on an empty cluster, three ways in one process: in the calling thread with fresh caches, through
// the Engine on a fresh model (everything shipped), and through a warm model that is shipped only the new pods
// of each round (what the controller's provisioner does), with the longest the calling thread's event loop was held
// during the warm call. Medians of `runs`; for locating the decision's cost.
import { createEngine, type Snapshot } from '../../engine/index.ts';
import { provision, WasmSolver } from '../../engine/local.ts';
import { catalog, genericPods, guideDefaultNodePool } from '../../bench/scenarios/generic.ts';
import { DEFAULT_ENGINE_OPTIONS } from '../../engine/index.ts';

const n = Number(process.argv[2] ?? 10_000);
const runs = Number(process.argv[3] ?? 5);
const pool = guideDefaultNodePool();
const snap = (seed: number): Snapshot =>
  ({
    nodePools: [pool],
    instanceTypes: new Map([[pool.name, catalog()]]),
    nodes: [],
    daemonSets: [],
    pdbs: [],
    nodeClasses: [],
    pendingPods: genericPods(n, seed),
    options: DEFAULT_ENGINE_OPTIONS,
    now: 0,
  }) as unknown as Snapshot;
const median = (a: number[]) => [...a].sort((p, q) => p - q)[a.length >> 1]!;
const t: Record<string, number[]> = { local: [], oneOff: [], warm: [], warmLongestBlock: [] };
/** The calling thread's longest stretch without a turn of its event loop while `f` runs (a 1 ms timer's gaps). */
async function longestBlock(f: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  try {
    await f();
  } finally {
    clearInterval(timer);
  }
  return Math.max(worst, performance.now() - last);
}
const engine = createEngine({ threads: 2 });
const c = engine.cluster('phases');
try {
  for (let r = 0; r <= runs; r++) {
    const s = snap(100 + r);
    let t0 = performance.now();
    // A fresh solver: its caches are empty, as a fresh model's are.
    await provision(s, s.pendingPods, { solver: new WasmSolver() });
    const local = performance.now() - t0;
    t0 = performance.now();
    await engine.provision(s, s.pendingPods);
    const oneOff = performance.now() - t0;
    t0 = performance.now();
    const block = await longestBlock(() => c.provision(s, s.pendingPods));
    const warm = performance.now() - t0;
    if (r === 0) continue;
    t['local']!.push(local);
    t['oneOff']!.push(oneOff);
    t['warm']!.push(warm);
    t['warmLongestBlock']!.push(block);
  }
  process.stdout.write(
    `${n} pending pods, empty cluster: ${Object.entries(t)
      .map(([k, v]) => `${k} ${median(v).toFixed(0)} ms`)
      .join(', ')} (medians of ${runs}); last shipped ${JSON.stringify(c.lastShipped())}\n`,
  );
} finally {
  await engine.close();
}
