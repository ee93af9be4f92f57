// `node --import tsx test/perf/engine-phases.ts [pods] [runs]`: a provisioning decision for the solver suite's
// generic mix on an empty cluster, three ways in one process: in the calling thread with fresh caches, through
// the Engine on a fresh model (everything shipped), and through a warm model that is shipped only the new pods
// of each round (what the controller's provisioner does). Medians of `runs`; for locating the decision's cost.
import { createEngine, type Snapshot } from '../../engine/index.ts';
import { provision, WasmSolver } from '../../engine/local.ts';
import { catalog, genericPods, guideDefaultNodePool } from '../../bench/scenarios/generic.ts';
import { DEFAULT_ENGINE_OPTIONS } from '../../engine/index.ts';

const n = Number(process.argv[2] ?? 10_000);
const runs = Number(process.argv[3] ?? 5);
const pool = guideDefaultNodePool();
const snap = (seed: number): Snapshot => ({
  nodePools: [pool], instanceTypes: new Map([[pool.name, catalog()]]), nodes: [], daemonSets: [], pdbs: [],
  nodeClasses: [], pendingPods: genericPods(n, seed), options: DEFAULT_ENGINE_OPTIONS, now: 0,
} as unknown as Snapshot);
const median = (a: number[]) => [...a].sort((p, q) => p - q)[a.length >> 1]!;
const t: Record<string, number[]> = { local: [], oneOff: [], warm: [] };
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
    await c.provision(s, s.pendingPods);
    const warm = performance.now() - t0;
    if (r === 0) continue;
    t['local']!.push(local);
    t['oneOff']!.push(oneOff);
    t['warm']!.push(warm);
  }
  process.stdout.write(`${n} pending pods, empty cluster: ${Object.entries(t).map(([k, v]) => `${k} ${median(v).toFixed(0)} ms`).join(', ')} (medians of ${runs}); last shipped ${JSON.stringify(c.lastShipped())}\n`);
} finally {
  await engine.close();
}
