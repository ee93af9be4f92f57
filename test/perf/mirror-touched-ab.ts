// `BASE=/path/to/other/checkout node --import tsx test/perf/mirror-touched-ab.ts [nodes] [rounds]` (under the bench
// lock): the caller's side of an engine call after a tenth of the nodes changed their pods (`nodes` nodes of 20 pods
// each; each round a tenth of them are new node objects listing new pod objects, as a status write of every pod
// makes). This checkout's ModelMirror.diff and commit and the other one's, alternating which goes first, in one
// process; the median CPU time (process.cpuUsage) of a diff per tree and their ratio.
import { loadavg } from 'node:os';
import { mirrorCluster, mirrorsToCompare } from './mirror-fixture.ts';

const count = Number(process.argv[2] ?? 1_000);
const rounds = Number(process.argv[3] ?? 200);
const cluster = mirrorCluster(count);
let nodes = cluster.nodes;
const snap = (now: number) => cluster.snap(nodes, now);

const mirrors = await mirrorsToCompare();
for (const m of Object.values(mirrors)) m.diff(snap(0)).commit();
const cpu: Record<string, number[]> = { base: [], this: [] };
const load = loadavg()[0]!;
for (let r = 1; r <= rounds; r++) {
  const phase = r % 2 ? 'Running' : 'Pending';
  nodes = nodes.map((n, i) => (i % 10 === r % 10 ? { ...n, pods: n.pods.map((p) => ({ ...p, phase })) } : n));
  const s = snap(r);
  for (const k of r % 2 ? (['base', 'this'] as const) : (['this', 'base'] as const)) {
    const c0 = process.cpuUsage();
    mirrors[k].diff(s).commit();
    const c = process.cpuUsage(c0);
    cpu[k]!.push((c.user + c.system) / 1000);
  }
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const [b, m] = [med(cpu['base']!), med(cpu['this']!)];
console.log(
  `${count} nodes x 20 pods, a tenth rebuilt with new pods a diff, ${rounds} rounds: CPU median base ${b.toFixed(3)} ms, ` +
    `this ${m.toFixed(3)} ms, this/base ${(m / b).toFixed(3)} (load ${load.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)})`,
);
