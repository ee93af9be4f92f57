// Fragmented clusters for the consolidation benchmark: a seeded workload is provisioned on the real EC2
// catalog with the solver, the planned NodeClaims become running nodes, then a seeded share of the pods is
// deleted (as after a scale-in), leaving many half-empty nodes.
import type { InstanceType, NodePool, Pod, Snapshot, StateNode } from '../../engine/index.ts';
import {
  DEFAULT_ENGINE_OPTIONS,
  ec2InstanceTypes,
  launchedNode,
  mulberry32,
  type ProvisionSolver,
} from '../../engine/index.ts';
import { provision } from '../../engine/local.ts';
import { nodePool, pod } from '../../test/fixtures/builders.ts';

export interface Scenario {
  readonly name: string;
  readonly snapshot: Snapshot;
  readonly pods: number;
}

/** The benchmark pool: general-purpose families, large to 4xlarge, on-demand, amd64, every node may go. */
export function benchPool(): NodePool {
  return nodePool({
    name: 'general',
    consolidateAfter: 0,
    budgets: [{ nodes: '100%' }],
    requirements: [
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
      { key: 'karpenter.k8s.aws/instance-size', operator: 'In', values: ['large', 'xlarge', '2xlarge', '4xlarge'] },
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
    ],
  });
}

const SHAPES: ReadonlyArray<{ cpu: string; memory: string }> = [
  { cpu: '250m', memory: '512Mi' },
  { cpu: '500m', memory: '1Gi' },
  { cpu: '1', memory: '2Gi' },
  { cpu: '1', memory: '6Gi' },
  { cpu: '2', memory: '4Gi' },
  { cpu: '2', memory: '12Gi' },
  { cpu: '3', memory: '2Gi' },
  { cpu: '500m', memory: '3Gi' },
];

/** Deployments of random shapes and sizes, about 10.7 pods per node wanted (what this mix packs to). */
function workload(nodes: number, random: () => number): Pod[] {
  const out: Pod[] = [];
  const target = Math.round(nodes * 10.7);
  for (let d = 0; out.length < target; d++) {
    const shape = SHAPES[Math.floor(random() * SHAPES.length)]!;
    const replicas = 1 + Math.floor(random() * 40);
    for (let i = 0; i < replicas && out.length < target; i++) {
      out.push(
        pod({
          name: `d${d}-${i}`,
          uid: `d${d}-${i}`,
          cpu: shape.cpu,
          memory: shape.memory,
          labels: { app: `d${d}` },
          createdAt: out.length,
        }),
      );
    }
  }
  return out;
}

/**
 * A cluster of about `nodes` nodes: provision the workload (one pass of the solver), launch every planned
 * NodeClaim as its first option, bind its pods, then delete `share` of the pods at random.
 */
export async function fragmentedCluster(
  nodes: number,
  seed: number,
  solver: ProvisionSolver,
  share = 0.4,
): Promise<Scenario> {
  const random = mulberry32(seed);
  const pool = benchPool();
  const types: InstanceType[] = ec2InstanceTypes({ region: 'us-east-1', zones: ['us-east-1a'] });
  const empty: Snapshot = {
    now: 0,
    nodePools: [pool],
    nodeClasses: [],
    instanceTypes: new Map([[pool.name, types]]),
    nodes: [],
    pendingPods: [],
    daemonSets: [],
    pdbs: [],
    options: DEFAULT_ENGINE_OPTIONS,
  };
  const pods = workload(nodes, random);
  const plan = await provision(empty, pods, { solver });
  const byUid = new Map(pods.map((p) => [p.uid, p]));
  const running: StateNode[] = [];
  plan.newNodeClaims.forEach((claim, i) => {
    const kept = claim.pods.map((u) => byUid.get(u)!).filter(() => random() >= share);
    const n = launchedNode(empty, claim, `node-${String(i).padStart(5, '0')}`, kept);
    if (n) running.push({ ...n, lastPodEventTime: 0, conditions: { consolidatable: true, initializedAt: 0 } });
  });
  const snapshot = { ...empty, now: 3600_000, nodes: running };
  return { name: `fragmented-${nodes}`, snapshot, pods: running.reduce((a, n) => a + n.pods.length, 0) };
}

/** $/h of the cluster's managed nodes, at each node's own offering. */
export function clusterCost(s: Snapshot): number {
  let total = 0;
  for (const n of s.nodes) {
    const its = s.instanceTypes.get(n.nodePoolName ?? '') ?? [];
    const it = its.find((t) => t.name === n.labels['node.kubernetes.io/instance-type']);
    const o = it?.offerings.find(
      (x) =>
        x.zone === n.labels['topology.kubernetes.io/zone'] && x.capacityType === n.labels['karpenter.sh/capacity-type'],
    );
    total += o?.price ?? 0;
  }
  return total;
}
