// `node --expose-gc --import tsx test/perf/model-memory.ts [nodes=5000] [root=DIR] [decide] [breakdown] [top=N]`:
// the live heap of an engine worker's warm cluster model (engine/cluster/model.ts) per pod and per node, in bytes,
// after forced collections (no timing: a loaded machine gives the same figures). root=DIR measures another
// checkout's model (its ModelMirror, codec, ClusterModel and operations; the cluster is built by this one), so base
// and branch run on the same data.
//
// The cluster is the controller benchmark's big one (bench/controller: 20 pods of one shape a node, one instance
// type, labels `app: app-<i % 100>`), pods parsed from API objects by the controller's own PodRecords as cluster
// state holds them, nodes from test/fixtures' stateNode with the type's labels, the AWS catalog for the NodePool;
// plus 50 pending pods that each need a node (steady-churn's bursts). The controller's side (ModelMirror.diff,
// pack) runs first and is let go; then the worker's side (unpack, ClusterModel.apply) is measured into fresh
// models: with the nodes alone (per node, the catalog included) and with every pod (the difference over the pods:
// per pod). `decide` then runs one provisioning decision (the pending pods) and one disruption pass on the full
// model, as the worker's operations (ops.ts runOp), and says what the caches kept and the most wasm memory one of
// their solves needed. `breakdown` then empties the model part by part (each cache, the lists, the tables, the
// catalog) and prints what each let go, a pod at a time.
// `top=N` prints the N kinds of heap object (a heap snapshot before and after, grouped by constructor, and strings
// by their shape) that grew most with the full model: about 1 GB of snapshot at 5,000 nodes, so use a smaller size
// such as 500 (the figures a pod hardly change with size).
//
// msgpackr's packer and unpacker each hold on to the last value they handled until the next one: the script packs
// and unpacks a small value after each large one, or the delta's objects would count as the model's.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { catalog, guideDefaultNodePool } from '../../bench/scenarios/generic.ts';
import { LARGE, SMALL } from '../../bench/controller/workload.ts';
import { PodRecords } from '../../controller/state/podrecord.ts';
import type { KubeObject } from '../../controller/operator/kube.ts';
import { mulberry32 } from '../../engine/index.ts';
import type { InstanceType, Pod, Snapshot, StateNode } from '../../engine/domain/types.ts';
import { DEFAULT_ENGINE_OPTIONS } from '../../engine/domain/types.ts';
import { stateNode } from '../fixtures/builders.ts';

const args = process.argv.slice(2);
const named = (k: string): string | undefined => args.find((a) => a.startsWith(`${k}=`))?.slice(k.length + 1);
const nodes = Number(args.find((a) => /^\d+$/.test(a)) ?? 5000);
const root = (named('root') ?? new URL('../..', import.meta.url).pathname).replace(/\/$/, '');
const decide = args.includes('decide');
const top = Number(named('top') ?? 0);
const PODS_PER_NODE = 20;
const PENDING = 50;

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('model-memory: run node with --expose-gc');
/** The heap in use after full collections (a few: weak tables let go of entries one collection late). */
function live(): number {
  for (let i = 0; i < 4; i++) gc!();
  return process.memoryUsage().heapUsed;
}

// The checkout measured: its wire format and model (loaded by path, so base and branch run the same fixture).
const { ModelMirror } = await import(`${root}/engine/cluster/delta.ts`);
const { ClusterModel } = await import(`${root}/engine/cluster/model.ts`);
const codec = await import(`${root}/engine/pool/codec.ts`);

// ---- the cluster, as the controller holds it ----

const rng = mulberry32(20_261_204);
function uid(): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(rng() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}
const T0 = Date.parse('2026-12-04T10:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** A pod as the simulated API server stores it (bench/controller/workload.ts podObject, then bound and running). */
function podObject(i: number, shape: { cpu: string; memory: string }, node: string | undefined): KubeObject {
  const created = T0 + i * 3;
  const scheduled = {
    type: 'PodScheduled',
    status: node ? 'True' : 'False',
    ...(node ? {} : { reason: 'Unschedulable', message: 'no nodes available to schedule pods' }),
    lastProbeTime: null,
    lastTransitionTime: iso(created + 1000),
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${node ? 's' : 'l'}-${i}`,
      namespace: 'default',
      uid: uid(),
      resourceVersion: String(100_000 + i),
      creationTimestamp: iso(created),
      labels: { app: `app-${i % 100}` },
    },
    spec: {
      schedulerName: 'controller-bench',
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: { ...shape } } }],
      ...(node ? { nodeName: node } : {}),
    },
    status: node
      ? {
          phase: 'Running',
          startTime: iso(created + 60_000),
          conditions: [
            scheduled,
            { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: iso(created + 61_000) },
          ],
        }
      : { phase: 'Pending', conditions: [scheduled] },
  } as unknown as KubeObject;
}

const nodeName = (i: number): string =>
  `ip-10-${(i >> 16) & 255}-${(i >> 8) & 255}-${i & 255}.us-west-2.compute.internal`;

/** The big cluster: `perNode` running pods on each node (0: the nodes alone), and the pending pods. */
function cluster(it: InstanceType, perNode: number): Snapshot {
  const records = new PodRecords(() => nodes * perNode);
  const parsed = (o: KubeObject): Pod => {
    const r = records.record(o);
    if (!r.pod) throw new Error(`model-memory: pod ${o.metadata.name}: ${JSON.stringify(r.errors)}`);
    return r.pod;
  };
  const pool = guideDefaultNodePool();
  const list: StateNode[] = [];
  for (let n = 0; n < nodes; n++) {
    const name = nodeName(n);
    const pods = Array.from({ length: perNode }, (_, k) => parsed(podObject(n * PODS_PER_NODE + k, SMALL, name)));
    const zone = ['us-west-2a', 'us-west-2b', 'us-west-2c'][n % 3]!;
    list.push({
      ...stateNode({ name, instanceType: it, nodePool: pool.name, zone, capacityType: 'on-demand', pods }),
      providerId: `aws:///${zone}/i-${(0x10000000 + n).toString(16)}${'0'.repeat(9)}`,
      nodeClaimName: `${pool.name}-${(n * 7919).toString(36).padStart(5, 'x')}`,
      creationTimestamp: T0 + n * 1000,
    });
  }
  const pending = Array.from({ length: PENDING }, (_, i) =>
    parsed(podObject(nodes * PODS_PER_NODE + i, LARGE, undefined)),
  );
  return {
    now: T0 + 3_600_000,
    nodePools: [pool],
    nodeClasses: [],
    instanceTypes: new Map([[pool.name, catalog()]]),
    nodes: list,
    pendingPods: pending,
    daemonSets: [],
    pdbs: [],
    options: DEFAULT_ENGINE_OPTIONS,
  };
}

/** The first delta a worker gets for this cluster, packed (the controller's side, then dropped). */
function firstDelta(perNode: number): ArrayBuffer {
  const it = catalog().find((t) => t.name === 'm5.2xlarge');
  if (!it) throw new Error('model-memory: no m5.2xlarge in the catalog');
  const s = cluster(it, perNode);
  const buf = codec.pack(new ModelMirror().diff(s).delta);
  // msgpackr's packer holds on to the last value it packed: a small one lets the cluster go.
  codec.pack(null);
  return buf;
}

// ---- the worker's side, measured ----

/** A model of the cluster, and how much the live heap grew to hold it (bytes). */
function modelOf(delta: ArrayBuffer): { model: any; bytes: number } {
  const before = live();
  const model = new ClusterModel();
  model.apply(codec.unpack(delta));
  // msgpackr's unpacker holds on to the last value it unpacked (the worker's next message is its operation).
  codec.unpack(codec.pack(null));
  return { model, bytes: live() - before };
}

/** One provisioning decision (the pending pods) and one disruption pass, as the worker runs them; live bytes kept. */
async function runDecisions(model: any): Promise<number> {
  const { runOp } = await import(`${root}/engine/cluster/ops.ts`);
  const { WasmSolver } = await import(`${root}/engine/local.ts`);
  const solver = new WasmSolver();
  const ctx = { solver: () => solver, lp: undefined, clock: () => performance.now() };
  const before = live();
  const pendingAt = Array.from({ length: PENDING }, (_, i) => i);
  // The most wasm linear memory one solve needed (what a pool worker's trim keeps twice of; absent on older trees).
  const need = (): string => (solver.takeNeed ? `${(solver.takeNeed() / 2 ** 20).toFixed(1)} MiB` : '?');
  const plan = await runOp(model, { op: 'provision', pending: { pendingAt }, opts: {} }, ctx);
  const provisionNeed = need();
  const r = await runOp(model, { op: 'disrupt', opts: {} }, ctx);
  console.log(
    `decisions: provision ${plan.newNodeClaims?.length ?? '?'} new NodeClaims; disrupt ${r.decision?.kind ?? '?'}`,
  );
  console.log(`wasm memory a solve needed at most: provision ${provisionNeed}, disrupt ${need()}`);
  return live() - before;
}

/** A cache slot's name (ModelCaches.stats names the slots it counted: the slot's count is raised a moment). */
function slotName(caches: any, id: number): string {
  const before = caches.hits[id];
  caches.hits[id] = (before ?? 0) + 1e9;
  const name = Object.entries(caches.stats() as Record<string, { hits: number }>).find(([, st]) => st.hits >= 1e9)?.[0];
  caches.hits[id] = before;
  return name ?? String(id);
}

/**
 * What each part of the model holds: the bytes let go when it is emptied, one after the other (the caches' slots,
 * then the model's tables), a pod at a time. Empties the model: run last.
 */
async function breakdown(model: any): Promise<void> {
  const rows: string[] = [];
  let last = live();
  const drop = (what: string, f: () => void): void => {
    f();
    const now = live();
    if (Math.abs(last - now) >= pods) rows.push(`  ${((last - now) / pods).toFixed(0).padStart(6)}  ${what}`);
    last = now;
  };
  const caches = model.caches;
  // By index, holding no slot's map meanwhile (a forEach's argument kept the map it emptied alive for one more step).
  for (let id = 0; id < caches.maps.length; id++)
    if (caches.maps[id]) drop(`cache: ${slotName(caches, id)}`, () => void (caches.maps[id] = new WeakMap()));
  // The lists first: they hold the nodes and pods the tables hold.
  drop('node and pending lists', () => {
    for (const k of ['nodeList', 'pendingList', 'nodeOrder', 'pendingUids']) model[k] = [];
    model.decided = undefined;
  });
  for (const k of ['records', 'states', 'podNodes', 'interner', 'pods', 'types', 'requirements'])
    if (model[k]?.clear) drop(`model.${k}`, () => model[k].clear());
  drop('catalog', () => {
    model.catalog = new Map();
    model.catalogIds = new Map();
  });
  console.log(`what each part held, bytes a pod (emptied one after the other):`);
  for (const r of rows) console.log(r);
}

/** Self sizes by constructor (V8 heap snapshot), bytes. */
function heapByConstructor(): Map<string, { bytes: number; count: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'model-memory-'));
  try {
    for (let i = 0; i < 4; i++) gc!();
    const file = writeHeapSnapshot(join(dir, 'h.heapsnapshot'));
    const snap = JSON.parse(readFileSync(file, 'utf8')) as {
      snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
      nodes: number[];
      strings: string[];
    };
    const f = snap.snapshot.meta.node_fields;
    const [TYPE, NAME, SIZE] = [f.indexOf('type'), f.indexOf('name'), f.indexOf('self_size')];
    const types = snap.snapshot.meta.node_types[0];
    const out = new Map<string, { bytes: number; count: number }>();
    for (let i = 0; i < snap.nodes.length; i += f.length) {
      const type = types[snap.nodes[i + TYPE]!]!;
      // Strings and numbers by their shape (digits as #), so that a pod's uid and name show as rows of their own.
      const name = snap.strings[snap.nodes[i + NAME]!]!.slice(0, 60).replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<uid>');
      const k = `${type} ${name.replace(/\d+/g, '#')}`;
      const e = out.get(k) ?? { bytes: 0, count: 0 };
      e.bytes += snap.nodes[i + SIZE]!;
      e.count++;
      out.set(k, e);
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function printGrowth(before: Map<string, { bytes: number; count: number }>, after: typeof before, pods: number): void {
  const rows = [...after].map(([k, a]) => {
    const b = before.get(k) ?? { bytes: 0, count: 0 };
    return { k, bytes: a.bytes - b.bytes, count: a.count - b.count };
  });
  rows.sort((x, y) => y.bytes - x.bytes);
  console.log(`what grew, by constructor (bytes a pod, objects a pod):`);
  for (const r of rows.slice(0, top))
    console.log(`  ${(r.bytes / pods).toFixed(1).padStart(8)}  ${(r.count / pods).toFixed(2).padStart(6)}  ${r.k}`);
}

const pods = nodes * PODS_PER_NODE;
const nodesOnly = firstDelta(0);
const full = firstDelta(PODS_PER_NODE);
const bare = modelOf(nodesOnly);
bare.model = undefined;
const before = top ? heapByConstructor() : undefined;
const whole = modelOf(full);
if (before) printGrowth(before, heapByConstructor(), pods);
const perNode = bare.bytes / nodes;
const perPod = (whole.bytes - bare.bytes) / pods;
console.log(`${root}: ${nodes} nodes, ${pods} running pods, ${PENDING} pending`);
console.log(
  `model, nodes only: ${(bare.bytes / 2 ** 20).toFixed(1)} MiB (catalog and nodes), ${perNode.toFixed(0)} B a node`,
);
console.log(
  `model, whole: ${(whole.bytes / 2 ** 20).toFixed(1)} MiB; per pod ${perPod.toFixed(0)} B, whole model per pod ${(whole.bytes / pods).toFixed(0)} B`,
);
if (decide) {
  const grown = await runDecisions(whole.model);
  console.log(
    `after one provisioning decision and one disruption pass: +${(grown / 2 ** 20).toFixed(1)} MiB (${(grown / pods).toFixed(0)} B a pod); whole model per pod ${((whole.bytes + grown) / pods).toFixed(0)} B`,
  );
}
if (args.includes('breakdown')) await breakdown(whole.model);
