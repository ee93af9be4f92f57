// Writes examples/snapshots/inflate.msgpack: the guide's inflate demo (guide-08, scaled to 10 replicas)
// running in the simulator on four nodes of the guide's `default` NodePool, with some fragmentation (a
// small `api` Deployment and a fluent-bit DaemonSet), listed through the simulated API server by
// `karpenter-ts snapshot`. Deterministic: a manual sim clock and seeded ids.
//
//   node --import tsx examples/snapshots/generate.ts [OUT]
import { readFileSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { memoryIo } from '../../cli/io.ts';
import { main } from '../../cli/main.ts';
import { manualClock, type SimClock } from '../../sim/clock.ts';
import { startSimCluster, type SimCluster } from '../../sim/cluster/cluster.ts';
import { kubeConfigText } from '../../sim/kubeconfig.ts';
import { ec2InstanceTypes, type InstanceType } from '../../engine/index.ts';

const GUIDE = fileURLToPath(new URL('../guide/', import.meta.url));
const EXAMPLE_TIME = Date.parse('2026-11-30T11:30:00Z');
const REGION = 'ap-northeast-2';

const doc = (file: string): Record<string, unknown> =>
  parseAllDocuments(readFileSync(join(GUIDE, file), 'utf8'))[0]!.toJS() as Record<string, unknown>;

/** The nodes a few scale-ups and scale-downs left behind: type, zone, capacity type. */
const NODES: readonly (readonly [string, string, string])[] = [
  ['m6i.xlarge', 'ap-northeast-2a', 'on-demand'],
  ['c6i.2xlarge', 'ap-northeast-2b', 'on-demand'],
  ['m6i.xlarge', 'ap-northeast-2c', 'spot'],
  ['r6i.xlarge', 'ap-northeast-2a', 'on-demand'],
];

/** A resource list as a Node reports it (cpu in millicores, memory in KiB). */
const quantities = (r: Readonly<Record<string, number>>): Record<string, string> => ({
  cpu: `${r['cpu'] ?? 0}m`,
  memory: `${Math.floor((r['memory'] ?? 0) / 1024)}Ki`,
  pods: String(r['pods'] ?? 0),
});

function singleLabels(it: InstanceType): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of it.requirements.values()) if (!r.complement && r.values.size === 1) out[r.key] = [...r.values][0]!;
  return out;
}

export async function generate(out: string): Promise<string> {
  const clock = manualClock(EXAMPLE_TIME - 3_600_000);
  const cluster = await startSimCluster({
    clock,
    unregisteredTaint: false,
    kubeletDelays: { registerMs: 1000, readyMs: 1000, startupTaintMs: 0, podStartMs: 1000 },
    onError: (e) => {
      throw e;
    },
  });
  try {
    createNodePool(cluster, clock);
    const types = new Map(ec2InstanceTypes({ region: REGION }).map((t) => [t.name, t]));
    NODES.forEach(([type, zone, capacityType], i) => {
      addNode(cluster, clock, { it: types.get(type)!, zone, capacityType, index: i });
    });
    await clock.advance(5_000);
    createWorkloads(cluster);
    await clock.advance(EXAMPLE_TIME - clock.now());
    return await snapshot(cluster, out);
  } finally {
    await cluster.close();
  }
}

/** The guide's `default` EC2NodeClass (resolved, Ready) and NodePool. */
function createNodePool(cluster: SimCluster, clock: SimClock): void {
  const { api } = cluster;
  api.create('ec2nodeclasses', undefined, doc('guide-03.yaml'));
  api.patchStatus('ec2nodeclasses', undefined, 'default', {
    subnets: ['a', 'b', 'c'].map((z, i) => ({ id: `subnet-0${i + 1}`, zone: `${REGION}${z}` })),
    conditions: [
      { type: 'Ready', status: 'True', reason: 'Ready', lastTransitionTime: new Date(clock.now()).toISOString() },
    ],
  });
  api.create('nodepools', undefined, doc('guide-01.yaml'));
}

interface NodeSpec {
  readonly it: InstanceType;
  readonly zone: string;
  readonly capacityType: string;
  readonly index: number;
}

/** A launched, registered and initialized NodeClaim of the pool, and its instance in the simulated kubelet. */
function addNode(cluster: SimCluster, clock: SimClock, { it, zone, capacityType, index: i }: NodeSpec): void {
  const name = `ip-10-0-${i + 1}-${10 + i}.${REGION}.compute.internal`;
  const providerID = `aws:///${zone}/i-0example${i + 1}`;
  const labels = {
    ...singleLabels(it),
    'topology.kubernetes.io/zone': zone,
    'karpenter.sh/capacity-type': capacityType,
    'karpenter.sh/nodepool': 'default',
    'karpenter.sh/registered': 'true',
    'karpenter.sh/initialized': 'true',
    team: 'platform',
    environment: 'production',
  };
  const claim = `default-${['x7k2p', 'm4q9d', 'h2n8w', 'b5t3r'][i]}`;
  cluster.api.create('nodeclaims', undefined, {
    metadata: { name: claim, labels },
    spec: {
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: [it.name] }],
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
    },
  });
  cluster.api.patchStatus('nodeclaims', undefined, claim, {
    providerID,
    nodeName: name,
    capacity: quantities(it.capacity),
    allocatable: quantities(it.allocatable),
    conditions: ['Launched', 'Registered', 'Initialized', 'Ready'].map((type) => ({
      type,
      status: 'True',
      reason: type,
      lastTransitionTime: new Date(clock.now()).toISOString(),
    })),
  });
  cluster.kubelet.registerInstance({
    providerID,
    nodeName: name,
    labels,
    capacity: quantities(it.capacity),
    allocatable: quantities(it.allocatable),
  });
}

/** The fragmentation (a fluent-bit DaemonSet, a small `api` Deployment) and the guide's inflate at 10 replicas. */
function createWorkloads(cluster: SimCluster): void {
  const { api } = cluster;
  const daemon = {
    metadata: { name: 'fluent-bit', namespace: 'kube-system' },
    spec: {
      selector: { matchLabels: { app: 'fluent-bit' } },
      template: {
        metadata: { labels: { app: 'fluent-bit' } },
        spec: {
          containers: [
            { name: 'fluent-bit', image: 'fluent-bit', resources: { requests: { cpu: '100m', memory: '128Mi' } } },
          ],
        },
      },
    },
  };
  api.create('daemonsets.apps', 'kube-system', daemon);
  const apiDeploy = {
    metadata: { name: 'api', namespace: 'default' },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'api' } },
      template: {
        metadata: { labels: { app: 'api' } },
        spec: {
          containers: [{ name: 'api', image: 'api', resources: { requests: { cpu: '500m', memory: '2Gi' } } }],
        },
      },
    },
  };
  api.create('deployments.apps', 'default', apiDeploy);
  const inflate = doc('guide-08.yaml');
  (inflate['spec'] as Record<string, unknown>)['replicas'] = 10;
  api.create('deployments.apps', 'default', inflate);
}

/** `karpenter-ts snapshot` against the simulated API server; returns what it printed on stderr. */
async function snapshot(cluster: SimCluster, out: string): Promise<string> {
  const tmp = mkdtempSync(join(tmpdir(), 'karpenter-ts-example-'));
  try {
    const kubeconfig = join(tmp, 'kubeconfig');
    // client-node refuses plain http unless the cluster entry skips TLS verification.
    const cfg = JSON.parse(kubeConfigText(cluster)) as { clusters: { cluster: Record<string, unknown> }[] };
    for (const c of cfg.clusters) c.cluster['insecure-skip-tls-verify'] = true;
    writeFileSync(kubeconfig, JSON.stringify(cfg));
    const io = memoryIo();
    const code = await main(
      ['snapshot', '-o', out, '--kubeconfig', kubeconfig, '--created-at', new Date(EXAMPLE_TIME).toISOString()],
      io,
    );
    if (code !== 0) throw new Error(`snapshot failed: ${io.stderr}`);
    return io.stderr;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = process.argv[2] ?? fileURLToPath(new URL('./inflate.msgpack', import.meta.url));
  process.stdout.write(await generate(out));
}
