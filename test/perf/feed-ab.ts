// `BASE=/path/to/other/checkout node --import tsx test/perf/feed-ab.ts [nodes] [rounds] [all|pods|nodes]` (under the
// bench lock):
// the steady state of cluster state on the big scenario's objects (cluster-objects.ts), this checkout against the
// other one, alternating in one process. Each tree holds `nodes` nodes (default 1,000) with their NodeClaims and 20
// pods each; a round (default 30 per tree) updates a tenth of the nodes, their NodeClaims and all their pods (a new
// resourceVersion each, as a status write makes), as the informers hand them on (the transform of feed.ts, the pod's
// record, then cluster state), then lists the state nodes and diffs and commits a model mirror, as a decision does.
// `pods` updates only the pods, `nodes` only the Nodes and NodeClaims. The objects are parsed before the round (the same JSON for both trees): what is timed is this code's part. Prints
// the median CPU time (process.cpuUsage) and wall time of a round per tree, and their ratio.
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import type { KubeObject } from '../../controller/operator/kube.ts';
import { clusterTexts, loadTree } from './cluster-objects.ts';

const base = process.env['BASE'];
if (!base) throw new Error('BASE: the path of the checkout to compare with');
const NODES = Number(process.argv[2] ?? 1_000);
const ROUNDS = Number(process.argv[3] ?? 30);
const PODS = 20;
const WHAT = process.argv[4] ?? 'all';
const now = Date.parse('2026-12-04T12:00:00Z');

const texts = await clusterTexts(PODS);
type Tree = Awaited<ReturnType<typeof loadTree>>;

/** One tree's cluster state, filled, with its mirror committed once. */
function setUp(t: Tree) {
  const cluster = t.newCluster(now);
  const mirror = new t.ModelMirror();
  let rv = 1_000;
  const withRv = (o: KubeObject): KubeObject => ((o.metadata.resourceVersion = String(++rv)), o);
  const apply = (claims: KubeObject[], nodes: KubeObject[], pods: KubeObject[]): void => {
    for (const o of claims) cluster.applyNodeClaim(t.stripClaim(withRv(o)));
    for (const o of nodes) cluster.applyNode(t.stripNode(withRv(o)));
    const w = cluster.workloads;
    for (const o of pods) w.applyPod(w.podRecord(t.stripPod(withRv(o))));
  };
  const decide = (): void => {
    const s = {
      now,
      nodePools: [],
      nodeClasses: [],
      instanceTypes: new Map(),
      nodes: cluster.stateNodes(),
      pendingPods: cluster.workloads.pendingPods(),
      daemonSets: [],
      pdbs: [],
      options: t.DEFAULT_ENGINE_OPTIONS,
    };
    mirror.diff(s).commit();
  };
  return { apply, decide };
}

/** The objects of nodes `from` to `to` (exclusive), parsed. */
function objects(from: number, to: number): [KubeObject[], KubeObject[], KubeObject[]] {
  const claims: KubeObject[] = [];
  const nodes: KubeObject[] = [];
  const pods: KubeObject[] = [];
  for (let i = from; i < to; i++) {
    claims.push(JSON.parse(texts.claim(i)));
    nodes.push(JSON.parse(texts.node(i)));
    for (let j = 0; j < PODS; j++) pods.push(JSON.parse(texts.pod(i, j)));
  }
  return [claims, nodes, pods];
}

const trees = [
  {
    name: 'this',
    state: setUp(await loadTree(resolve(import.meta.dirname, '../..'))),
    cpu: [] as number[],
    wall: [] as number[],
  },
  { name: 'base', state: setUp(await loadTree(resolve(base))), cpu: [] as number[], wall: [] as number[] },
];
for (const t of trees) {
  t.state.apply(...objects(0, NODES));
  t.state.decide();
}
const load = [loadavg()[0]!];
const slice = Math.max(1, Math.floor(NODES / 10));
for (let r = 0; r < ROUNDS; r++) {
  const from = (r * slice) % NODES;
  for (const t of r % 2 ? [...trees].reverse() : trees) {
    const [claims, nodes, pods] = objects(from, Math.min(NODES, from + slice));
    const batch: (typeof claims)[] =
      WHAT === 'pods' ? [[], [], pods] : WHAT === 'nodes' ? [claims, nodes, []] : [claims, nodes, pods];
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    t.state.apply(batch[0]!, batch[1]!, batch[2]!);
    t.state.decide();
    const c = process.cpuUsage(c0);
    t.wall.push(performance.now() - w0);
    t.cpu.push((c.user + c.system) / 1000);
  }
}
load.push(loadavg()[0]!);
const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
};
for (const t of trees)
  console.log(
    JSON.stringify({ tree: t.name, roundCpuMs: +median(t.cpu).toFixed(2), roundWallMs: +median(t.wall).toFixed(2) }),
  );
const [a, b] = trees;
console.log(
  `this/base: cpu ${(median(a!.cpu) / median(b!.cpu)).toFixed(3)}, wall ${(median(a!.wall) / median(b!.wall)).toFixed(3)}` +
    ` (${NODES} nodes, ${slice} updated a round with their NodeClaims and ${slice * PODS} pods, ${ROUNDS} rounds, updating ${WHAT}, load ${load.map((l) => l.toFixed(1)).join(' -> ')})`,
);
