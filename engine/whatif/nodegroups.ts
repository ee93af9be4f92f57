// The node groups of a cluster that Karpenter does not manage (EKS managed node groups, Auto Scaling groups
// run by Cluster Autoscaler, kops instance groups), and what each one needs: architectures, capacity types,
// zones, taints, the labels its pods select, accelerators, instance categories and generations, capacity.
// A migration proposal (proposal.ts) is built from these facts; the mapping (migration.ts) moves each group's
// nodes to a NodePool.
import type { NodeInfo } from '../api/node.ts';
import { ec2InstanceInfos } from '../catalog/catalog.ts';
import type { Ec2InstanceInfo } from '../catalog/types.ts';
import { CPU, MEMORY } from '../domain/resources.ts';
import type { Pod, Taint } from '../domain/types.ts';
import { WELL_KNOWN_LABELS, restrictedLabelReason } from '../api/labels.ts';
import { ARCH_LABEL, INSTANCE_TYPE_LABEL, NODEPOOL_LABEL, OS_LABEL, ZONE_LABEL } from '../scheduling/labels.ts';
import { isMirrorPod, isOwnedByDaemonSet, isTerminal } from '../scheduling/pods.ts';
import { capacityTypeOf } from './prices.ts';
import type { ClusterObjects } from './types.ts';

/** Labels that name a node's group, most specific first (EKS, eksctl, kops, Cluster Autoscaler's AWS docs). */
const GROUP_LABELS = [
  'eks.amazonaws.com/nodegroup',
  'alpha.eksctl.io/nodegroup-name',
  'kops.k8s.io/instancegroup',
  'node.kubernetes.io/nodegroup',
] as const;
/** Self-managed spot nodes often say so here (eksctl, kops, older node groups). */
const LIFECYCLE_LABEL = 'node.kubernetes.io/lifecycle';

/** Taints the node's life puts on it (cordon, not-ready, autoscaler marks), not taints a NodePool would carry. */
const LIFECYCLE_TAINTS =
  /^(node\.kubernetes\.io\/|node\.cloudprovider\.kubernetes\.io\/|ToBeDeletedByClusterAutoscaler$|DeletionCandidateOfClusterAutoscaler$|karpenter\.sh\/)/;

/** Karpenter's instance-type name scheme: category, optional size suffix, generation. */
const NAME_SCHEME = /^([a-z]+)(-[0-9]+tb)?([0-9]+).*\./;

type Accelerator =
  | { readonly kind: 'none' }
  | { readonly kind: 'gpu'; readonly manufacturer: string; readonly names: readonly string[] }
  | { readonly kind: 'neuron'; readonly families: readonly string[] };

export interface NodeGroup {
  readonly name: string;
  /** The label that named it, or "shape" when nodes were grouped by taints, labels and architecture. */
  readonly namedBy: string;
  readonly nodes: readonly NodeInfo[];
  readonly instanceTypes: readonly string[];
  readonly arches: readonly string[];
  readonly capacityTypes: readonly string[];
  readonly zones: readonly string[];
  readonly taints: readonly Taint[];
  /** Labels of every node of the group that the cluster's pods select and a NodePool may set. */
  readonly selectedLabels: Readonly<Record<string, string>>;
  readonly accelerator: Accelerator;
  readonly categories: readonly string[];
  /** The oldest generation among the group's types (undefined when no name has one). */
  readonly minGeneration?: number;
  /** Σ capacity of the group's nodes: vCPU (cores), memory (bytes), GPUs. */
  readonly capacity: { readonly cpu: number; readonly memory: number; readonly gpus: number };
  /** The largest ephemeral-storage capacity among the nodes, bytes (their root volume). */
  readonly maxEphemeral: number;
  readonly os: string;
}

const sorted = (xs: Iterable<string>): string[] => [...new Set(xs)].sort();
const taintKey = (t: Taint): string => `${t.key}=${t.value ?? ''}:${t.effect}`;

/** The node's taints a NodePool would carry (lifecycle taints left out), in a stable order. */
function workloadTaints(taints: readonly Taint[]): Taint[] {
  return taints.filter((t) => !LIFECYCLE_TAINTS.test(t.key)).sort((a, b) => taintKey(a).localeCompare(taintKey(b)));
}

export function sameTaints(a: readonly Taint[], b: readonly Taint[]): boolean {
  return workloadTaints(a).map(taintKey).join() === workloadTaints(b).map(taintKey).join();
}

/** A node Karpenter manages already (a NodeClaim or its nodepool label): not part of a migration. */
export function karpenterManaged(n: NodeInfo, claimed: ReadonlySet<string>): boolean {
  return (
    n.labels[NODEPOOL_LABEL] !== undefined ||
    claimed.has(n.name) ||
    (n.providerId !== undefined && claimed.has(n.providerId))
  );
}

/** Node names and provider ids that have a NodeClaim in the input. */
export function claimedNodes(o: ClusterObjects): Set<string> {
  const out = new Set<string>();
  for (const c of o.nodeClaims) {
    if (c.nodeName) out.add(c.nodeName);
    if (c.providerId) out.add(c.providerId);
  }
  return out;
}

/** Label keys the pods constrain in nodeSelector or required node affinity (In, Exists, ...: any operator). */
function selectedKeys(pods: readonly Pod[]): Set<string> {
  const keys = new Set<string>();
  for (const p of pods) {
    for (const k of Object.keys(p.nodeSelector)) keys.add(k);
    for (const term of p.affinity?.nodeAffinity?.required ?? []) for (const e of term.matchExpressions) keys.add(e.key);
  }
  return keys;
}

function groupName(n: NodeInfo): { name: string; namedBy: string } {
  for (const l of GROUP_LABELS) if (n.labels[l]) return { name: n.labels[l]!, namedBy: l };
  const arch = n.labels[ARCH_LABEL] ?? 'amd64';
  const taints = workloadTaints(n.taints)
    .map((t) => t.key.replace(/[^a-z0-9]+/gi, '-'))
    .join('-');
  return {
    name: `nodes-${arch}-${capacityTypeOf(n.labels) ?? lifecycleOf(n) ?? 'on-demand'}${taints ? `-${taints}` : ''}`.toLowerCase(),
    namedBy: 'shape',
  };
}

function lifecycleOf(n: NodeInfo): string | undefined {
  const v = n.labels[LIFECYCLE_LABEL]?.toLowerCase();
  return v === 'spot' ? 'spot' : v === 'normal' || v === 'on-demand' || v === 'ondemand' ? 'on-demand' : undefined;
}

/** The capacity type a node runs as: Karpenter's or EKS's label, else the lifecycle label, else on-demand. */
export function nodeCapacityType(n: NodeInfo): string {
  return capacityTypeOf(n.labels) ?? lifecycleOf(n) ?? 'on-demand';
}

function acceleratorOf(infos: readonly (Ec2InstanceInfo | undefined)[], gpus: number): Accelerator {
  const gpuInfos = infos.flatMap((i) => i?.gpus ?? []);
  if (gpuInfos.length > 0 || gpus > 0) {
    return {
      kind: 'gpu',
      manufacturer: (gpuInfos[0]?.manufacturer ?? 'nvidia').toLowerCase(),
      names: sorted(gpuInfos.flatMap((g) => (g.name ? [g.name.toLowerCase()] : []))),
    };
  }
  const neuron = infos.filter((i) => (i?.neuronDevices?.length ?? 0) > 0);
  if (neuron.length > 0) return { kind: 'neuron', families: sorted(neuron.map((i) => i!.name.split('.')[0]!)) };
  return { kind: 'none' };
}

/** The labels every node of the group carries, that the cluster's pods select, and that a NodePool may set. */
function selectedLabelsOf(nodes: readonly NodeInfo[], keys: ReadonlySet<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of [...keys].sort()) {
    if (WELL_KNOWN_LABELS.has(k) || restrictedLabelReason(k) !== undefined) continue;
    const v = nodes[0]!.labels[k];
    if (v !== undefined && nodes.every((n) => n.labels[k] === v)) out[k] = v;
  }
  return out;
}

function factsOf(name: string, namedBy: string, nodes: readonly NodeInfo[], keys: ReadonlySet<string>): NodeGroup {
  const byName = new Map(ec2InstanceInfos().map((i) => [i.name, i] as const));
  const types = sorted(nodes.flatMap((n) => (n.labels[INSTANCE_TYPE_LABEL] ? [n.labels[INSTANCE_TYPE_LABEL]!] : [])));
  const schemes = types.map((t) => NAME_SCHEME.exec(t)).filter((m): m is RegExpExecArray => m !== null);
  const gens = schemes.map((m) => Number(m[3]));
  const gpus = nodes.reduce((a, n) => a + (n.capacity['nvidia.com/gpu'] ?? 0) + (n.capacity['amd.com/gpu'] ?? 0), 0);
  return {
    name,
    namedBy,
    nodes,
    instanceTypes: types,
    arches: sorted(
      nodes.map((n) => n.labels[ARCH_LABEL] ?? byNameArch(byName.get(n.labels[INSTANCE_TYPE_LABEL] ?? '')) ?? 'amd64'),
    ),
    capacityTypes: sorted(nodes.map(nodeCapacityType)),
    zones: sorted(nodes.flatMap((n) => (n.labels[ZONE_LABEL] ? [n.labels[ZONE_LABEL]!] : []))),
    taints: workloadTaints(nodes[0]!.taints),
    selectedLabels: selectedLabelsOf(nodes, keys),
    accelerator: acceleratorOf(
      types.map((t) => byName.get(t)),
      gpus,
    ),
    categories: sorted(schemes.map((m) => m[1]!)),
    ...(gens.length ? { minGeneration: Math.min(...gens) } : {}),
    capacity: {
      cpu: nodes.reduce((a, n) => a + (n.capacity[CPU] ?? 0), 0) / 1000,
      memory: nodes.reduce((a, n) => a + (n.capacity[MEMORY] ?? 0), 0),
      gpus,
    },
    maxEphemeral: Math.max(0, ...nodes.map((n) => n.capacity['ephemeral-storage'] ?? 0)),
    os: nodes[0]!.labels[OS_LABEL] ?? 'linux',
  };
}

function byNameArch(i: Ec2InstanceInfo | undefined): string | undefined {
  return i ? (i.arch === 'x86_64' ? 'amd64' : i.arch) : undefined;
}

/** The active pods that are not daemonset or mirror pods: what a node group is there to run. */
function workloadPods(pods: readonly Pod[]): Pod[] {
  return pods.filter((p) => !isTerminal(p) && !isOwnedByDaemonSet(p) && !isMirrorPod(p));
}

/**
 * The groups of the nodes Karpenter does not manage, sorted by name. Nodes of one group that differ in
 * taints are split (a group name is shared only by nodes that look alike to the scheduler).
 */
export function nodeGroups(o: ClusterObjects): NodeGroup[] {
  const claimed = claimedNodes(o);
  const keys = selectedKeys(workloadPods(o.pods));
  const by = new Map<string, { namedBy: string; nodes: NodeInfo[] }>();
  for (const n of o.nodes) {
    if (karpenterManaged(n, claimed)) continue;
    const g = groupName(n);
    const name =
      [...by.entries()].find(([k, v]) => k.split('#')[0] === g.name && sameTaints(v.nodes[0]!.taints, n.taints))?.[0] ??
      (by.has(g.name) ? `${g.name}#${by.size}` : g.name);
    const entry = by.get(name) ?? { namedBy: g.namedBy, nodes: [] };
    entry.nodes.push(n);
    by.set(name, entry);
  }
  return [...by]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, g]) => factsOf(name.replace('#', '-'), g.namedBy, g.nodes, keys));
}
