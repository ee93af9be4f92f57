// Cluster objects for controller unit tests, in the shape the controller's own lifecycle leaves them: a
// launched, registered and initialized NodeClaim, its Node (Ready, with the termination finalizer and the
// NodeClaim as owner) and the cloud's instance; bound, running pods.
import { createHash } from 'node:crypto';
import { ec2InstanceTypes, singleValueLabels, type InstanceType } from '../../engine/index.ts';
import { quantities } from '../../controller/controllers/provisioning/nodeclaim.ts';
import { toKubeTime } from '../../controller/operator/clock.ts';
import type { KObject } from '../../sim/apiserver/index.ts';
import type { FakeControllerEnv } from './controller.ts';

let types: Map<string, InstanceType> | undefined;
const catalogType = (name: string): InstanceType => {
  types ??= new Map(ec2InstanceTypes({ region: 'ap-northeast-2' }).map((t) => [t.name, t]));
  const t = types.get(name);
  if (!t) throw new Error(`no instance type ${name} in the ap-northeast-2 catalog`);
  return t;
};

interface NodeSpec {
  readonly name: string;
  readonly nodePool?: string;
  readonly nodeClass?: string;
  readonly instanceType?: string;
  readonly zone?: string;
  readonly capacityType?: 'on-demand' | 'spot';
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  /** NodeClaim conditions besides Launched, Registered and Initialized (all True). */
  readonly conditions?: ReadonlyArray<{ type: string; status: string; reason?: string; message?: string }>;
}

interface LaunchedNode {
  readonly providerID: string;
  readonly claim: KObject;
  readonly node: KObject;
}

/** What the node is: its instance type, where and how it runs, and the labels its NodeClaim and Node carry. */
interface NodeShape {
  readonly name: string;
  readonly type: InstanceType;
  readonly zone: string;
  readonly capacityType: 'on-demand' | 'spot';
  readonly pool: string;
  readonly nodeClass: string;
  readonly providerID: string;
  readonly labels: Record<string, string>;
}

function shapeOf(s: NodeSpec): NodeShape {
  const type = catalogType(s.instanceType ?? 'm6i.large');
  const zone = s.zone ?? 'ap-northeast-2a';
  const capacityType = s.capacityType ?? 'on-demand';
  const pool = s.nodePool ?? 'default';
  const nodeClass = s.nodeClass ?? 'default';
  const providerID = `aws:///${zone}/i-${createHash('sha256').update(s.name).digest('hex').slice(0, 17)}`;
  const labels = {
    ...singleValueLabels(type.requirements),
    'node.kubernetes.io/instance-type': type.name,
    'topology.kubernetes.io/zone': zone,
    'karpenter.sh/capacity-type': capacityType,
    'karpenter.sh/nodepool': pool,
    'karpenter.k8s.aws/ec2nodeclass': nodeClass,
    ...(s.labels ?? {}),
  };
  return { name: s.name, type, zone, capacityType, pool, nodeClass, providerID, labels };
}

/** The NodeClaim as launch leaves it: spec, labels and the termination finalizer; no status yet. */
function addClaim(env: FakeControllerEnv, n: NodeShape, annotations: Record<string, string> | undefined): KObject {
  const [claim] = env.add('nodeclaims.karpenter.sh', {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: n.name,
      labels: n.labels,
      annotations: annotations ?? {},
      finalizers: ['karpenter.sh/termination'],
    },
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: n.nodeClass },
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: [n.type.name] }],
      resources: { requests: { cpu: '100m' } },
      expireAfter: 'Never',
    },
  });
  return claim!;
}

/** The Node `<name>-node`: registered, initialized, Ready, owned by its NodeClaim. */
function addNode(env: FakeControllerEnv, n: NodeShape, claim: KObject, now: string): KObject {
  const [node] = env.add('nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: `${n.name}-node`,
      labels: {
        ...n.labels,
        'kubernetes.io/hostname': `${n.name}-node`,
        'karpenter.sh/registered': 'true',
        'karpenter.sh/initialized': 'true',
      },
      finalizers: ['karpenter.sh/termination'],
      ownerReferences: [
        {
          apiVersion: 'karpenter.sh/v1',
          kind: 'NodeClaim',
          name: n.name,
          uid: claim.metadata.uid!,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { providerID: n.providerID },
    status: {
      capacity: quantities(n.type.capacity),
      allocatable: quantities(n.type.allocatable),
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: '',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
      ],
    },
  });
  return node!;
}

/** The NodeClaim's status as registration writes it once the Node exists: Launched, Registered, Initialized and `extra`. */
function claimStatus(n: NodeShape, extra: NodeSpec['conditions'], now: string): Record<string, unknown> {
  const conditions = [
    ...['Launched', 'Registered', 'Initialized'].map((t) => ({
      type: t,
      status: 'True',
      reason: t,
      message: '',
      lastTransitionTime: now,
    })),
    ...(extra ?? []).map((c) => ({ reason: c.type, message: '', lastTransitionTime: now, ...c })),
  ];
  return {
    providerID: n.providerID,
    nodeName: `${n.name}-node`,
    capacity: quantities(n.type.capacity),
    allocatable: quantities(n.type.allocatable),
    imageID: 'ami-fake',
    conditions,
  };
}

/** Creates the NodeClaim `<name>`, the Node `<name>-node` and the instance behind them. */
export function launchedNode(env: FakeControllerEnv, s: NodeSpec): LaunchedNode {
  const n = shapeOf(s);
  const now = toKubeTime(env.clock.now());
  const claim = addClaim(env, n, s.annotations);
  const node = addNode(env, n, claim, now);
  // The NodeClaim's status last, as registration writes it once the Node exists.
  const storedClaim = env.api.patchStatus(
    'nodeclaims.karpenter.sh',
    undefined,
    s.name,
    claimStatus(n, s.conditions, now),
  );
  env.cloud.addInstance({
    providerID: n.providerID,
    instanceType: n.type.name,
    zone: n.zone,
    capacityType: n.capacityType,
    capacity: n.type.capacity,
    allocatable: n.type.allocatable,
    labels: n.labels,
    nodeClaimName: s.name,
    nodePoolName: n.pool,
  });
  return { providerID: n.providerID, claim: storedClaim, node };
}

/** A running pod bound to `node` (owned by a ReplicaSet unless `owner` is null). */
export function runningPod(
  env: FakeControllerEnv,
  name: string,
  node: string,
  o: {
    cpu?: string;
    memory?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    namespace?: string;
  } = {},
): KObject {
  const namespace = o.namespace ?? 'default';
  env.add('pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: o.labels ?? { app: name },
      ...(o.annotations ? { annotations: o.annotations } : {}),
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${name}-rs`, uid: `${name}-rs-uid`, controller: true },
      ],
    },
    spec: {
      nodeName: node,
      containers: [
        { name: 'app', image: 'pause', resources: { requests: { cpu: o.cpu ?? '100m', memory: o.memory ?? '128Mi' } } },
      ],
    },
  });
  const now = toKubeTime(env.clock.now());
  return env.api.patchStatus('pods', namespace, name, {
    phase: 'Running',
    conditions: [
      { type: 'Ready', status: 'True', lastTransitionTime: now },
      { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
    ],
  });
}
