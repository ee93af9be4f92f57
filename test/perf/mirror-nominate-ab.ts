// `BASE=/path/to/other/checkout node --import tsx test/perf/mirror-nominate-ab.ts [nodes] [changed]`: the caller's
// side of an engine call after a wave of nominations: `nodes` nodes of 20 pods each, of which `changed` are new node
// objects with the same pod array and a new nominatedUntil (what cluster state hands out when the provisioner
// nominates existing nodes, or their nominations run out). This checkout's ModelMirror.diff and the other one's,
// interleaved in one process; medians of 30, and the CPU time of the whole loop.
import { mirrorCluster, mirrorsToCompare } from './mirror-fixture.ts';

const count = Number(process.argv[2] ?? 5_000);
const changed = Number(process.argv[3] ?? 500);
const cluster = mirrorCluster(count);
let nodes = cluster.nodes;
const snap = (now: number) => cluster.snap(nodes, now);

const mirrors = await mirrorsToCompare();
for (const m of Object.values(mirrors)) m.diff(snap(0)).commit();
const t: Record<string, number[]> = { base: [], this: [] };
const cpu: Record<string, number> = { base: 0, this: 0 };
for (let r = 1; r <= 30; r++) {
  // A wave of nominations: `changed` nodes rejoined with their very pod array.
  nodes = nodes.map((n, i) => ((i * 7 + r) % count < changed ? { ...n, nominatedUntil: 1_000 * r } : n));
  const s = snap(r);
  for (const [k, m] of Object.entries(mirrors)) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    m.diff(s).commit();
    t[k]!.push(performance.now() - t0);
    cpu[k]! += process.cpuUsage(c0).user / 1000;
  }
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
console.log(
  `${count} nodes x 20 pods, ${changed} rejoined with the same pods a diff: diff median base ${med(t['base']!).toFixed(2)} ms, ` +
    `this ${med(t['this']!).toFixed(2)} ms (${(med(t['this']!) / med(t['base']!)).toFixed(2)}x); ` +
    `CPU base ${cpu['base']!.toFixed(0)} ms, this ${cpu['this']!.toFixed(0)} ms`,
);
