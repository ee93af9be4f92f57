// What the controller's main thread holds per NodeClaim, per Node and per pod, deterministically (no timing):
//
//   node --import tsx test/perf/mainmem.ts [nodes=1000] [podsPerNode=20] [--snapshot=FILE]
//   node --import tsx test/perf/mainmem.ts 1000 20 ../base       # the same, on the modules of another checkout
//   node --import tsx test/perf/mainmem.ts 5000 2 --unique-times  # no two NodeClaims or Nodes share a time
//
// The objects are the big benchmark scenario's (bench/controller/scenarios.ts: the uniform NodePool, m5.2xlarge,
// bare pods of the SMALL shape bound by the benchmark's binder), taken from a small simulation (2 nodes, 40 pods)
// as the simulated API server serves them, then copied N times as JSON text with names, uids and instance ids
// made unique (each object is parsed from its own text, so no string is shared that a real list would not share).
// They go through what the informers do with them (feed.ts's transforms, strip.ts and podrecord.ts; a map per
// kind standing for client-node's cache, which holds the kept object; none for pods in a tree whose Pod informer
// reads cluster state's table, keptcache.ts), into cluster state (Cluster, Workloads),
// then the state nodes are listed and a model mirror (engine/cluster/delta.ts) diffs and commits the snapshot, as
// a decision does. After each step a full collection, and the heap used then: the growth of each step divided by
// its count is what one NodeClaim, Node or pod costs there. `--snapshot=FILE` also writes a heap snapshot at the
// end (scripts/heap-owners.mjs FILE breaks it down by owner). A checkout given as the last argument is measured
// instead of this one (its modules loaded; the objects are made by this tree's simulator).
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { resolve } from 'node:path';
import type { KubeObject } from '../../controller/operator/kube.ts';
import { clusterTexts, loadTree } from './cluster-objects.ts';

// Not `node --expose-gc`: the simulation's engine pool starts workers, which refuse that flag in their execArgv.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const NODES = Number(args[0] ?? 1000);
const PODS_PER_NODE = Number(args[1] ?? 20);
const TREE = args[2] ? resolve(args[2]) : resolve(import.meta.dirname, '../..');
const UNIQUE_TIMES = process.argv.includes('--unique-times');
const SNAPSHOT = process.argv.find((a) => a.startsWith('--snapshot='))?.slice('--snapshot='.length);

type Obj = KubeObject;

/** Heap in use after two full collections. */
function heap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** Heap growth per step: each call records what the heap grew by since the last. */
class Steps {
  readonly rows: Array<[string, number, number]> = [];
  private last = heap();

  step(what: string, count: number): void {
    const h = heap();
    this.rows.push([what, h - this.last, count]);
    this.last = h;
  }
}

/** client-node's cache: a map of namespaces, each a map of names to the object kept. */
type Caches = Record<string, Map<string, Map<string, unknown>>>;

function cacheIn(caches: Caches, kind: string, o: { metadata: { namespace?: string; name?: string } }): void {
  const ns = o.metadata.namespace ?? '';
  let m = caches[kind]!.get(ns);
  if (!m) caches[kind]!.set(ns, (m = new Map()));
  m.set(o.metadata.name!, o);
}

type Tree = Awaited<ReturnType<typeof loadTree>>;
type Texts = Awaited<ReturnType<typeof clusterTexts>>;

/** NodeClaims, Nodes and pods through the informers' transforms into cluster state, a step each. */
function feed(tree: Tree, cluster: ReturnType<Tree['newCluster']>, texts: Texts, caches: Caches, steps: Steps): void {
  let rv = 1000;
  /** Each of `count` objects parsed from its text, stripped as its informer does, versioned, cached, applied. */
  const each = (count: number, text: (i: number) => string, strip: (o: Obj) => Obj, apply: (o: Obj) => void) => {
    for (let i = 0; i < count; i++) {
      const o = strip(JSON.parse(text(i)) as Obj);
      o.metadata.resourceVersion = String(++rv);
      apply(o);
    }
  };
  const kept = (kind: string, apply: (o: Obj) => void) => (o: Obj) => {
    cacheIn(caches, kind, o);
    apply(o);
  };
  const kinds: Array<[string, (i: number) => string, (o: Obj) => Obj, (o: Obj) => void]> = [
    ['NodeClaim', texts.claim, tree.stripClaim, (o) => cluster.applyNodeClaim(o)],
    ['Node', texts.node, tree.stripNode, (o) => cluster.applyNode(o)],
  ];
  for (const [kind, text, strip, apply] of kinds) {
    each(NODES, text, strip, kept(kind, apply));
    steps.step(`${kind}s`, NODES);
  }
  const w = cluster.workloads;
  const pod = (k: number) => texts.pod(Math.floor(k / PODS_PER_NODE), k % PODS_PER_NODE);
  // A tree whose Pod informer reads cluster state's pod table (keptcache.ts) has no Pod cache of client-node's own.
  const podCache = typeof (w as { keptPods?: unknown }).keptPods !== 'function';
  each(NODES * PODS_PER_NODE, pod, tree.stripPod, (o) => {
    const rec = w.podRecord(o);
    if (podCache) cacheIn(caches, 'Pod', rec);
    w.applyPod(rec);
  });
  steps.step('pods', NODES * PODS_PER_NODE);
}

function printSteps(rows: Steps['rows'], pods: number, stateNodes: number): void {
  console.log(`tree ${TREE}: ${NODES} nodes, ${pods} pods (${stateNodes} state nodes)`);
  for (const [what, bytes, n] of rows)
    console.log(
      `${what.padEnd(20)} ${(bytes / 2 ** 20).toFixed(2).padStart(8)} MiB  ${(bytes / n).toFixed(0).padStart(6)} B each (${n})`,
    );
  const perPod = rows.filter(([w]) => w !== 'NodeClaims' && w !== 'Nodes').reduce((s, r) => s + r[1], 0) / pods;
  console.log(`per pod, all steps after the nodes: ${perPod.toFixed(0)} B`);
}

/** What each structure holds that nothing else does: dropped one after the other, the heap freed each time. */
function dropOneByOne(drops: Array<[string, number, () => void]>): void {
  let last = heap();
  console.log('dropped one after the other (what only it held):');
  for (const [what, n, drop] of drops) {
    drop();
    const h = heap();
    console.log(
      `  ${what.padEnd(24)} ${((last - h) / 2 ** 20).toFixed(2).padStart(8)} MiB  ${((last - h) / n).toFixed(0).padStart(6)} B each (${n})`,
    );
    last = h;
  }
}

async function main(): Promise<void> {
  const texts = await clusterTexts(PODS_PER_NODE, UNIQUE_TIMES);
  const tree = await loadTree(TREE);
  const now = Date.parse('2026-12-04T12:00:00Z');
  const cluster = tree.newCluster(now);
  const caches: Caches = { NodeClaim: new Map(), Node: new Map(), Pod: new Map() };
  const steps = new Steps();
  feed(tree, cluster, texts, caches, steps);
  const pods = NODES * PODS_PER_NODE;
  const w = cluster.workloads;
  const nodes = cluster.stateNodes();
  steps.step('state nodes listed', pods);
  const mirror = new tree.ModelMirror();
  const snapshot = {
    now,
    nodePools: [],
    nodeClasses: [],
    instanceTypes: new Map(),
    nodes,
    pendingPods: w.pendingPods(),
    daemonSets: [],
    pdbs: [],
    options: tree.DEFAULT_ENGINE_OPTIONS,
  };
  mirror.diff(snapshot).commit();
  steps.step('model mirror', pods);
  printSteps(steps.rows, pods, nodes.length);
  if (SNAPSHOT) console.log(`heap snapshot: ${writeHeapSnapshot(SNAPSHOT)}`);
  const priv = (o: object): Record<string, unknown> => o as unknown as Record<string, unknown>;
  dropOneByOne([
    ['model mirror', pods, () => mirror.reset()],
    ["informers' caches", pods, () => Object.values(caches).forEach((m) => m.clear())],
    ['Workloads.byNode', pods, () => (priv(w)['byNode'] as Map<string, unknown>).clear()],
    ['PodRecords tables', pods, () => clearTables(priv(priv(w)['records'] as object))],
    ['pod records', pods, () => (priv(w)['pods'] as Map<string, unknown>).clear()],
    ['Cluster.joined, listed', NODES, () => dropJoins(priv(cluster))],
    ['Cluster.claims', NODES, () => (priv(cluster)['claims'] as Map<string, unknown>).clear()],
    ['Cluster.nodes', NODES, () => (priv(cluster)['nodes'] as Map<string, unknown>).clear()],
  ]);
  void [cluster, caches, mirror, snapshot];
}

/** The record maker's memo and shared-part tables, emptied in place. */
function clearTables(records: Record<string, unknown>): void {
  for (const k of Object.keys(records)) {
    const v = records[k] as { clear?: () => void } | undefined;
    if (v && typeof v.clear === 'function') v.clear();
    else if (v && typeof v === 'object' && 'byDecoder' in v) (v.byDecoder as Map<string, unknown>).clear();
  }
}

function dropJoins(cluster: Record<string, unknown>): void {
  (cluster['joined'] as Map<string, unknown>).clear();
  cluster['listed'] = undefined;
}

await main();
