// `BASE=/path/to/other/checkout node --import tsx test/perf/mirror-ab.ts [pods]`: the caller's side of a
// provisioning decision at its window's close after a speculative solve over the same cluster (the model's diff,
// the pods' refs, packing the operation) for the solver suite's generic mix of pending pods, with nothing changed
// but the clock; this checkout's ModelMirror and the other one's, interleaved in one process. Medians of 40.
import { catalog, genericPods, guideDefaultNodePool } from '../../bench/scenarios/generic.ts';
import { DEFAULT_ENGINE_OPTIONS, type Snapshot } from '../../engine/index.ts';
import { ModelMirror as Mine } from '../../engine/cluster/delta.ts';
import { pack } from '../../engine/pool/codec.ts';
const base = process.env['BASE'];
if (!base) throw new Error('BASE: the path of the checkout to compare with');
const { ModelMirror: Theirs } = (await import(`${base}/engine/cluster/delta.ts`)) as { ModelMirror: typeof Mine };
const pool = guideDefaultNodePool();
const cat = catalog();
const pods = genericPods(Number(process.argv[2] ?? 10_000), 7);
const snap = (now: number): Snapshot =>
  ({
    nodePools: [pool],
    instanceTypes: new Map([[pool.name, cat]]),
    nodes: [],
    daemonSets: [],
    pdbs: [],
    nodeClasses: [],
    pendingPods: [...pods],
    options: DEFAULT_ENGINE_OPTIONS,
    now,
  }) as unknown as Snapshot;
const mirrors = { base: new Theirs(), this: new Mine() };
for (const m of Object.values(mirrors)) m.diff(snap(0), [...pods]).commit();
const t: Record<string, number[]> = { base: [], this: [] };
for (let r = 0; r < 40; r++)
  for (const [k, m] of Object.entries(mirrors)) {
    const s = snap(r + 1);
    const all = [...pods];
    const t0 = performance.now();
    const d = m.diff(s, all);
    pack({ op: 'provision', pending: d.refs(all) });
    t[k]!.push(performance.now() - t0);
    if (r % 2 === 0) d.commit();
  }
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
console.log(
  `${pods.length} pending pods, nothing changed: diff+refs+pack median base ${med(t.base!).toFixed(2)} ms, this ${med(t.this!).toFixed(2)} ms (40 each, interleaved)`,
);
