// Writes examples/snapshots/cluster-autoscaler.yaml: a `kubectl get nodes,pods,daemonsets,deployments,pdb -A -o
// yaml` style dump of an EKS cluster scaled by Cluster Autoscaler over five managed node groups (no Karpenter
// objects): general on-demand and spot m5 nodes, a tainted batch group, a GPU group and an arm64 group, with
// the pods each runs, two DaemonSets, a PDB, and a Deployment whose replicas are not all running yet.
// Node capacity and allocatable come from the engine's catalog. Deterministic.
//
//   node --import tsx examples/snapshots/cluster-autoscaler.ts [OUT]
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { ec2InstanceTypes, type InstanceType } from '../../engine/index.ts';

const REGION = 'us-east-1';
const CREATED = '2026-11-02T08:00:00Z';
type Obj = Record<string, unknown>;
type Taint = { key: string; value: string; effect: string };

interface Group {
  readonly name: string;
  readonly capacityType: 'ON_DEMAND' | 'SPOT';
  /** type and zone letter per node */
  readonly nodes: readonly (readonly [string, string])[];
  readonly taints?: readonly Taint[];
  readonly labels?: Readonly<Record<string, string>>;
}

const GROUPS: readonly Group[] = [
  {
    name: 'general',
    capacityType: 'ON_DEMAND',
    nodes: [
      ['m5.xlarge', 'a'],
      ['m5.xlarge', 'b'],
      ['m5.xlarge', 'c'],
      ['m5.xlarge', 'a'],
      ['m5.xlarge', 'b'],
      ['m5.xlarge', 'c'],
    ],
  },
  {
    name: 'general-spot',
    capacityType: 'SPOT',
    nodes: [
      ['m5.xlarge', 'a'],
      ['m5a.xlarge', 'b'],
      ['m5.xlarge', 'c'],
    ],
  },
  {
    name: 'batch',
    capacityType: 'ON_DEMAND',
    nodes: [
      ['c5.2xlarge', 'a'],
      ['c5.2xlarge', 'b'],
    ],
    taints: [{ key: 'workload', value: 'batch', effect: 'NoSchedule' }],
    labels: { workload: 'batch' },
  },
  {
    name: 'gpu',
    capacityType: 'ON_DEMAND',
    nodes: [['g4dn.xlarge', 'a']],
    taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }],
  },
  {
    name: 'arm',
    capacityType: 'ON_DEMAND',
    nodes: [
      ['m6g.large', 'b'],
      ['m6g.large', 'c'],
    ],
  },
];

const quantities = (r: Readonly<Record<string, number>>, disk: string): Record<string, string> => {
  const out: Record<string, string> = {
    cpu: `${r['cpu'] ?? 0}m`,
    memory: `${Math.floor((r['memory'] ?? 0) / 1024)}Ki`,
    pods: String(r['pods'] ?? 0),
    'ephemeral-storage': disk,
  };
  if (r['nvidia.com/gpu']) out['nvidia.com/gpu'] = String(r['nvidia.com/gpu']);
  return out;
};

function nodeObject(g: Group, it: InstanceType, zone: string, i: number): Obj {
  const arch = [...it.requirements.get('kubernetes.io/arch')!.values][0]!;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: `ip-10-1-${i}-${20 + i}.ec2.internal`,
      creationTimestamp: CREATED,
      labels: {
        'eks.amazonaws.com/nodegroup': g.name,
        'eks.amazonaws.com/capacityType': g.capacityType,
        'alpha.eksctl.io/cluster-name': 'shop',
        'node.kubernetes.io/instance-type': it.name,
        'kubernetes.io/arch': arch,
        'kubernetes.io/os': 'linux',
        'topology.kubernetes.io/region': REGION,
        'topology.kubernetes.io/zone': zone,
        'kubernetes.io/hostname': `ip-10-1-${i}-${20 + i}.ec2.internal`,
        ...g.labels,
      },
    },
    spec: {
      providerID: `aws:///${zone}/i-0ca${String(i).padStart(4, '0')}`,
      ...(g.taints ? { taints: g.taints } : {}),
    },
    status: {
      capacity: quantities(it.capacity, '52416492Ki'),
      allocatable: quantities(it.allocatable, '47233297124'),
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: CREATED }],
    },
  };
}

function pod(
  name: string,
  node: string | undefined,
  requests: Record<string, string>,
  extra: { owner?: [string, string]; spec?: Obj; labels?: Record<string, string> } = {},
): Obj {
  const [kind, owner] = extra.owner ?? ['ReplicaSet', name.replace(/-[a-z0-9]+$/, '')];
  const limits = requests['nvidia.com/gpu'] ? { 'nvidia.com/gpu': requests['nvidia.com/gpu'] } : undefined;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: kind === 'DaemonSet' ? 'kube-system' : 'shop',
      uid: `uid-${name}`,
      creationTimestamp: CREATED,
      labels: extra.labels ?? {},
      ownerReferences: [{ apiVersion: 'apps/v1', kind, name: owner, controller: true }],
    },
    spec: {
      ...(node ? { nodeName: node } : {}),
      containers: [{ name: 'main', image: 'app', resources: { requests, ...(limits ? { limits } : {}) } }],
      ...extra.spec,
    },
    status: { phase: node ? 'Running' : 'Pending' },
  };
}

const daemonSet = (name: string, cpu: string, memory: string): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name, namespace: 'kube-system' },
  spec: {
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        tolerations: [{ operator: 'Exists' }],
        containers: [{ name, image: name, resources: { requests: { cpu, memory } } }],
      },
    },
  },
});

/** The pods each group runs: web and api on the general groups, batch jobs, a GPU model server, arm64 services. */
function workloads(nodes: readonly { group: string; name: string }[]): Obj[] {
  const of = (g: string) => nodes.filter((n) => n.group === g).map((n) => n.name);
  const general = [...of('general'), ...of('general-spot')];
  const out: Obj[] = [];
  for (let i = 0; i < 14; i++)
    out.push(
      pod(
        `web-7f9c-${String.fromCharCode(97 + i)}${i}`,
        general[i % general.length],
        { cpu: '700m', memory: '1536Mi' },
        { labels: { app: 'web' } },
      ),
    );
  for (let i = 0; i < 4; i++)
    out.push(
      pod(
        `api-5d4b-${i}x`,
        general[(i * 2 + 1) % general.length],
        { cpu: '1', memory: '3Gi' },
        { labels: { app: 'api' } },
      ),
    );
  const batch = {
    tolerations: [{ key: 'workload', operator: 'Equal', value: 'batch', effect: 'NoSchedule' }],
    nodeSelector: { workload: 'batch' },
  };
  for (let i = 0; i < 3; i++)
    out.push(
      pod(`etl-${i}q`, of('batch')[i % 2], { cpu: '2500m', memory: '6Gi' }, { owner: ['Job', 'etl'], spec: batch }),
    );
  const gpu = { tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] };
  out.push(pod('model-6c8d-0g', of('gpu')[0], { cpu: '2', memory: '8Gi', 'nvidia.com/gpu': '1' }, { spec: gpu }));
  for (let i = 0; i < 3; i++)
    out.push(
      pod(
        `search-8e2a-${i}r`,
        of('arm')[i % 2],
        { cpu: '600m', memory: '2Gi' },
        { spec: { nodeSelector: { 'kubernetes.io/arch': 'arm64' } } },
      ),
    );
  for (const n of nodes) {
    out.push(
      pod(
        `aws-node-${n.name.split('.')[0]!.slice(-5)}`,
        n.name,
        { cpu: '25m', memory: '64Mi' },
        { owner: ['DaemonSet', 'aws-node'] },
      ),
    );
    out.push(
      pod(
        `kube-proxy-${n.name.split('.')[0]!.slice(-5)}`,
        n.name,
        { cpu: '100m', memory: '128Mi' },
        { owner: ['DaemonSet', 'kube-proxy'] },
      ),
    );
  }
  return out;
}

export function clusterAutoscalerExample(): string {
  const types = new Map(ec2InstanceTypes({ region: REGION }).map((t) => [t.name, t] as const));
  const nodes: Obj[] = [];
  const names: { group: string; name: string }[] = [];
  let i = 1;
  for (const g of GROUPS) {
    for (const [type, letter] of g.nodes) {
      const n = nodeObject(g, types.get(type)!, `${REGION}${letter}`, i++);
      nodes.push(n);
      names.push({ group: g.name, name: (n['metadata'] as { name: string }).name });
    }
  }
  const reports = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'reports', namespace: 'shop' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'reports' } },
      template: {
        metadata: { labels: { app: 'reports' } },
        spec: {
          containers: [{ name: 'reports', image: 'reports', resources: { requests: { cpu: '1500m', memory: '4Gi' } } }],
        },
      },
    },
  };
  const pdb = {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'web', namespace: 'shop' },
    spec: { minAvailable: 12, selector: { matchLabels: { app: 'web' } } },
    status: { disruptionsAllowed: 2, currentHealthy: 14, desiredHealthy: 12, expectedPods: 14 },
  };
  const docs = [
    ...nodes,
    ...workloads(names),
    daemonSet('aws-node', '25m', '64Mi'),
    daemonSet('kube-proxy', '100m', '128Mi'),
    reports,
    pdb,
  ];
  return (
    `# ${'An EKS cluster scaled by Cluster Autoscaler (five managed node groups), as kubectl would dump it.'}\n# Generated by examples/snapshots/cluster-autoscaler.ts; try: karpenter-ts whatif examples/snapshots/cluster-autoscaler.yaml\n` +
    docs.map((d) => `---\n${stringify(d, { lineWidth: 0 })}`).join('')
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(
    process.argv[2] ?? fileURLToPath(new URL('./cluster-autoscaler.yaml', import.meta.url)),
    clusterAutoscalerExample(),
  );
}
