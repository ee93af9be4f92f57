// A focused measurement of the node metrics (metrics.node) at scale, outside any test: a cluster state of
// NODES nodes with PODS_PER_NODE running pods each is built in-process, the node metrics controller is
// registered and run once, and then the main thread's live heap (after a full collection) and a few scrapes
// of /metrics are measured: how long a scrape takes, the longest stretch it holds the event loop without a turn
// (a setImmediate ticker runs beside it; garbage collection pauses count too), and the exposition's size.
//
//   node --expose-gc --import tsx bench/node-metrics-scrape.ts [--root=DIR] [--nodes=5000] [--pods=20] [--scrapes=3]
//
// --root runs another checkout's sources (e.g. an export of main) with this script, to compare old and new
// side by side; it needs the same layout (controller/state/cluster.ts, controller/operator/metrics.ts,
// controller/controllers/metrics/node/reconcile.ts). Prints one JSON line.
import { performance } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const arg = (name: string, dflt: string): string =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const root = resolve(arg('root', resolve(import.meta.dirname, '..')));
const NODES = Number(arg('nodes', '5000'));
const PODS_PER_NODE = Number(arg('pods', '20'));
const SCRAPES = Number(arg('scrapes', '3'));

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const load = (path: string) => import(pathToFileURL(`${root}/${path}`).href);

// Labels as a launched m5.xlarge carries them (the well-known ones metrics.node reports, and a few more).
function nodeLabels(i: number): Record<string, string> {
  const zone = ['us-west-2a', 'us-west-2b', 'us-west-2c'][i % 3]!;
  return {
    'karpenter.sh/nodepool': 'default',
    'karpenter.sh/registered': 'true',
    'karpenter.sh/initialized': 'true',
    'karpenter.sh/capacity-type': i % 4 ? 'on-demand' : 'spot',
    'karpenter.k8s.aws/ec2nodeclass': 'default',
    'topology.kubernetes.io/zone': zone,
    'topology.kubernetes.io/region': 'us-west-2',
    'topology.k8s.aws/zone-id': `usw2-az${(i % 3) + 1}`,
    'node.kubernetes.io/instance-type': 'm5.xlarge',
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/os': 'linux',
    'kubernetes.io/hostname': `node-${i}`,
    'karpenter.k8s.aws/instance-hypervisor': 'nitro',
    'karpenter.k8s.aws/instance-encryption-in-transit-supported': 'false',
    'karpenter.k8s.aws/instance-category': 'm',
    'karpenter.k8s.aws/instance-family': 'm5',
    'karpenter.k8s.aws/instance-generation': '5',
    'karpenter.k8s.aws/instance-size': 'xlarge',
    'karpenter.k8s.aws/instance-cpu': '4',
    'karpenter.k8s.aws/instance-cpu-manufacturer': 'intel',
    'karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz': '3100',
    'karpenter.k8s.aws/instance-memory': '16384',
    'karpenter.k8s.aws/instance-ebs-bandwidth': '4750',
    'karpenter.k8s.aws/instance-network-bandwidth': '1250',
  };
}

function nodeObject(i: number): Record<string, unknown> {
  const resources = { cpu: '4', memory: '15Gi', pods: '58', 'ephemeral-storage': '20Gi' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: `node-${i}`,
      uid: `uid-node-${i}`,
      resourceVersion: String(i + 1),
      creationTimestamp: '2026-12-03T00:00:00Z',
      labels: nodeLabels(i),
    },
    spec: { providerID: `aws:///us-west-2a/i-${(0x1000000 + i).toString(16)}` },
    status: {
      phase: 'Running',
      capacity: { ...resources, memory: '16Gi' },
      allocatable: resources,
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', lastTransitionTime: '2026-12-03T00:00:00Z' },
      ],
    },
  };
}

function podObject(node: number, j: number): Record<string, unknown> {
  const name = `app-${node}-${j}`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      resourceVersion: String(1_000_000 + node * PODS_PER_NODE + j),
      creationTimestamp: '2026-12-03T00:00:00Z',
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'app-1', uid: 'rs', controller: true }],
    },
    spec: {
      nodeName: `node-${node}`,
      containers: [
        {
          name: 'app',
          image: 'pause',
          resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '1' } },
        },
      ],
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

const liveMiB = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

/** Runs `f` with a setImmediate ticker beside it: its time, and the longest gap between two of the ticker's turns. */
async function timed<T>(f: () => Promise<T>): Promise<{ value: T; ms: number; cpuMs: number; longestMs: number }> {
  const cpu = process.cpuUsage();
  let longest = 0;
  let last = performance.now();
  let running = true;
  const tick = (): void => {
    const t = performance.now();
    longest = Math.max(longest, t - last);
    last = t;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const start = performance.now();
  const value = await f();
  const ms = performance.now() - start;
  running = false;
  longest = Math.max(longest, performance.now() - last);
  const used = process.cpuUsage(cpu);
  return { value, ms, cpuMs: (used.user + used.system) / 1000, longestMs: longest };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const { Cluster } = await load('controller/state/cluster.ts');
const { Metrics } = await load('controller/operator/metrics.ts');
const { newNodeMetrics } = await load('controller/controllers/metrics/node/reconcile.ts');

const clock = { now: () => Date.parse('2026-12-03T09:00:00Z') };
const silent = () => {};
const log = { debug: silent, info: silent, warn: silent, error: silent, child: () => log };
const cluster = new Cluster({ clock, log, listed: () => true });
for (let i = 0; i < NODES; i++) {
  cluster.applyNode(nodeObject(i));
  for (let j = 0; j < PODS_PER_NODE; j++) cluster.workloads.applyPod(podObject(i, j));
}
const withCluster = liveMiB();
const metrics = new Metrics();
const ctx = { clock, cluster, metrics, log };
const controller = newNodeMetrics(ctx);
controller.register(() => {});
const pass = await timed(() => controller.reconcile(''));
const withMetrics = liveMiB();
/**
 * One scrape as /metrics serves it: the exposition's pieces as they come where the tree has them (each piece
 * handed on, as the endpoint writes it to the socket), else the whole text (as the endpoint served it before).
 * Only its figures are kept (the text would be live heap).
 */
async function scrape(): Promise<{ ms: number; cpuMs: number; longestMs: number; bytes: number }> {
  const t = await timed(async () => {
    if (typeof metrics.exposition !== 'function') return ((await metrics.text()) as string).length;
    let bytes = 0;
    for await (const piece of metrics.exposition() as AsyncIterable<string>) bytes += Buffer.byteLength(piece);
    return bytes;
  });
  return { ms: t.ms, cpuMs: t.cpuMs, longestMs: t.longestMs, bytes: t.value };
}
const scrapes: Array<{ ms: number; cpuMs: number; longestMs: number; bytes: number }> = [];
for (let s = 0; s < SCRAPES; s++) scrapes.push(await scrape());
const afterScrapes = liveMiB();
const lines = (await metrics.text()).split('\n').filter((l: string) => l.startsWith('karpenter_nodes_')).length;
/** With an exposition in pieces: the pieces that took longest to come (time since the previous one). */
async function slowestPieces(): Promise<Array<{ ms: number; piece: string }>> {
  if (typeof metrics.exposition !== 'function') return [];
  const out: Array<{ ms: number; piece: string }> = [];
  let last = performance.now();
  for await (const piece of metrics.exposition() as AsyncIterable<string>) {
    const t = performance.now();
    out.push({ ms: +(t - last).toFixed(1), piece: piece.slice(0, 60) });
    last = t;
  }
  return out.sort((a, b) => b.ms - a.ms).slice(0, 3);
}
const slowest = await slowestPieces();
console.log(
  JSON.stringify({
    root,
    nodes: NODES,
    pods: NODES * PODS_PER_NODE,
    nodeSeries: lines,
    passMs: Math.round(pass.ms),
    passLongestMs: Math.round(pass.longestMs),
    heldByMetricsMiB: +(withMetrics - withCluster).toFixed(1),
    heldBytesPerNode: Math.round(((withMetrics - withCluster) * 2 ** 20) / NODES),
    heldAfterScrapesBytesPerNode: Math.round(((afterScrapes - withCluster) * 2 ** 20) / NODES),
    scrapeMs: Math.round(median(scrapes.map((s) => s.ms))),
    scrapeCpuMs: Math.round(median(scrapes.map((s) => s.cpuMs))),
    scrapeLongestMs: Math.round(median(scrapes.map((s) => s.longestMs))),
    scrapeMiB: +(scrapes[0]!.bytes / 2 ** 20).toFixed(1),
    scrapes,
    slowest,
  }),
);
