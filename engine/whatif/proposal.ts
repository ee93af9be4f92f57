// A migration proposal: NodePools and one EC2NodeClass for a cluster Karpenter does not manage yet, built from
// what its node groups run and what their pods need (nodegroups.ts). Node groups that look alike to the
// scheduler (same taints, same labels their pods select, same kind of accelerator) share a NodePool; each
// NodePool keeps today's architectures, capacity types and zones, allows the instance categories in use plus
// c, m and r (no bare metal), and gets limits of twice today's capacity. The manifests are plain Kubernetes
// objects: the CLI writes them as YAML and they parse and validate as any NodePool would.
import { ec2InstanceInfos } from '../catalog/catalog.ts';
import type { NodeGroup } from './nodegroups.ts';

type Manifest = Record<string, unknown>;

interface ProposedNodePool {
  readonly name: string;
  /** The node groups it replaces. */
  readonly groups: readonly string[];
  /** The NodePool (karpenter.sh/v1) as a manifest. */
  readonly manifest: Manifest;
  /** Why each part is what it is, one line each. */
  readonly why: readonly string[];
}

export interface Proposal {
  readonly nodePools: readonly ProposedNodePool[];
  /** The EC2NodeClass (karpenter.k8s.aws/v1) every proposed NodePool refers to. */
  readonly nodeClass: Manifest;
  /** Assumptions every user should read (placeholders to fill in, what is not carried over). */
  readonly notes: readonly string[];
  /** Groups left out of the proposal, and why. */
  readonly left: readonly { readonly group: string; readonly reason: string }[];
  /** group name -> proposed NodePool name. */
  readonly groupPool: Readonly<Record<string, string>>;
}

interface ProposalOptions {
  /** The cluster's name, for the node role and discovery tags; else from node labels, else a placeholder. */
  readonly clusterName?: string;
}

const NODE_CLASS_NAME = 'default';
const CLUSTER_PLACEHOLDER = 'CLUSTER_NAME';
const GIB = 1024 ** 3;
/** AL2023's root volume when the EC2NodeClass sets none. */
const DEFAULT_ROOT_GIB = 20;
const FARGATE_LABEL = 'eks.amazonaws.com/compute-type';
const CLUSTER_NAME_LABELS = ['alpha.eksctl.io/cluster-name', 'eks.amazonaws.com/cluster-name'];

/** Groups that share a NodePool: same taints, same selected labels, same accelerator, same architectures. */
function signature(g: NodeGroup): string {
  return JSON.stringify([g.taints, Object.entries(g.selectedLabels), g.accelerator, g.arches]);
}

function isGeneral(g: NodeGroup): boolean {
  return g.taints.length === 0 && Object.keys(g.selectedLabels).length === 0 && g.accelerator.kind === 'none';
}

/** A DNS-1123 name from a node group's name. */
function poolName(raw: string, taken: Set<string>): string {
  const base =
    raw
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 50) || 'pool';
  let name = base;
  for (let i = 2; taken.has(name); i++) name = `${base}-${i}`;
  taken.add(name);
  return name;
}

const sizesWithMetal = (): string[] =>
  [
    ...new Set(
      ec2InstanceInfos()
        .map((i) => i.name.split('.')[1] ?? '')
        .filter((s) => s.includes('metal')),
    ),
  ].sort();

const union = (gs: readonly NodeGroup[], f: (g: NodeGroup) => readonly string[]): string[] =>
  [...new Set(gs.flatMap(f))].sort();

/** What the instance types may be: the accelerator in use, or the categories in use plus c, m and r (no metal). */
function typeRequirements(gs: readonly NodeGroup[]): { reqs: Manifest[]; why: string[] } {
  const a = gs[0]!.accelerator;
  if (a.kind === 'gpu') {
    const reqs: Manifest[] = [
      { key: 'karpenter.k8s.aws/instance-gpu-manufacturer', operator: 'In', values: [a.manufacturer] },
    ];
    if (a.names.length) reqs.push({ key: 'karpenter.k8s.aws/instance-gpu-name', operator: 'In', values: [...a.names] });
    return {
      reqs,
      why: [`GPUs: ${a.manufacturer}${a.names.length ? ` ${a.names.join(', ')}` : ''}, the GPUs the nodes have`],
    };
  }
  if (a.kind === 'neuron') {
    return {
      reqs: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: [...a.families] }],
      why: [`instance families ${a.families.join(', ')}: the Neuron accelerators the nodes have`],
    };
  }
  const categories = [...new Set(['c', 'm', 'r', ...gs.flatMap((g) => g.categories)])].sort();
  const oldest = Math.min(5, ...gs.map((g) => g.minGeneration ?? 5));
  return {
    reqs: [
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: categories },
      { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: [String(oldest - 1)] },
      { key: 'karpenter.k8s.aws/instance-size', operator: 'NotIn', values: sizesWithMetal() },
    ],
    why: [
      `instance categories ${categories.join(', ')} (those in use plus c, m and r), generation ${oldest} or later, no bare metal: many types to choose from, none exotic`,
    ],
  };
}

function requirementsOf(gs: readonly NodeGroup[], zones: readonly string[]): { reqs: Manifest[]; why: string[] } {
  const arches = union(gs, (g) => g.arches);
  const capacityTypes = union(gs, (g) => g.capacityTypes);
  const types = typeRequirements(gs);
  const reqs: Manifest[] = [
    { key: 'kubernetes.io/arch', operator: 'In', values: arches },
    { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
    { key: 'karpenter.sh/capacity-type', operator: 'In', values: capacityTypes },
    ...(zones.length ? [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: zones }] : []),
    ...types.reqs,
  ];
  const why = [
    `architectures ${arches.join(', ')}: what the nodes run${arches.includes('arm64') ? '' : ' (arm64 types cost less; add arm64 once your images are multi-arch)'}`,
    `capacity types ${capacityTypes.join(', ')}: what the node groups use today${capacityTypes.length > 1 ? ' (Karpenter prefers spot; pin on-demand with a karpenter.sh/capacity-type node selector where a workload needs it)' : ''}`,
    ...(zones.length
      ? [
          `zones ${zones.join(', ')}: where the cluster's nodes are (a small group's few zones are chance, not a choice)`,
        ]
      : []),
    ...types.why,
  ];
  return { reqs, why };
}

/** Twice today's capacity (at least 16 vCPU and 64Gi): room to grow, and for replacements launched before old nodes go. */
function limitsOf(gs: readonly NodeGroup[]): { limits: Record<string, string>; why: string } {
  const cpu = Math.max(16, Math.ceil(2 * gs.reduce((a, g) => a + g.capacity.cpu, 0)));
  const memory = Math.max(64, Math.ceil((2 * gs.reduce((a, g) => a + g.capacity.memory, 0)) / GIB));
  const gpus = 2 * gs.reduce((a, g) => a + g.capacity.gpus, 0);
  const a = gs[0]!.accelerator;
  const gpuKey = a.kind === 'gpu' && a.manufacturer === 'amd' ? 'amd.com/gpu' : 'nvidia.com/gpu';
  const limits: Record<string, string> = {
    cpu: String(cpu),
    memory: `${memory}Gi`,
    ...(gpus > 0 ? { [gpuKey]: String(gpus) } : {}),
  };
  return {
    limits,
    why: `limits ${Object.entries(limits)
      .map(([k, v]) => `${k} ${v}`)
      .join(
        ', ',
      )}: twice what the node groups have today, room to grow and for replacements launched before old nodes go`,
  };
}

/**
 * Untainted NodePools take any pod that fits, and Karpenter picks the cheapest: an arm64 pool would draw
 * pods that ran on amd64 without choosing (their images may be amd64 only). Untainted pools with amd64 get
 * weight 10 when an untainted pool without amd64 exists, so such pods stay on amd64 as today.
 */
function weightOf(gs: readonly NodeGroup[], all: readonly (readonly NodeGroup[])[]): { weight?: number; why?: string } {
  const open = (x: readonly NodeGroup[]) => x[0]!.taints.length === 0;
  const amd = (x: readonly NodeGroup[]) => x.some((g) => g.arches.includes('amd64'));
  const others = all.filter((x) => open(x) && !amd(x));
  if (!open(gs) || !amd(gs) || others.length === 0) return {};
  return {
    weight: 10,
    why: `weight 10: tried before the NodePool${others.length > 1 ? 's' : ''} of ${union(others.flat(), (g) => g.arches).join(', ')} nodes, so pods that do not choose an architecture stay on amd64 as today`,
  };
}

function poolManifest(
  name: string,
  gs: readonly NodeGroup[],
  zones: readonly string[],
  weight: { weight?: number; why?: string },
): ProposedNodePool {
  const { reqs, why } = requirementsOf(gs, zones);
  const limits = limitsOf(gs);
  const g = gs[0]!;
  const labels = { ...g.selectedLabels };
  const nodes = gs.reduce((a, x) => a + x.nodes.length, 0);
  const manifest: Manifest = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        ...(Object.keys(labels).length ? { metadata: { labels } } : {}),
        spec: {
          requirements: reqs,
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: NODE_CLASS_NAME },
          ...(g.taints.length
            ? {
                taints: g.taints.map((t) => ({ key: t.key, ...(t.value ? { value: t.value } : {}), effect: t.effect })),
              }
            : {}),
          expireAfter: '720h',
        },
      },
      limits: limits.limits,
      ...(weight.weight !== undefined ? { weight: weight.weight } : {}),
      disruption: {
        consolidationPolicy: 'WhenEmptyOrUnderutilized',
        consolidateAfter: '1m',
        budgets: [{ nodes: '10%' }],
      },
    },
  };
  const groups = gs.map((x) => `${x.name} (${x.nodes.length} × ${x.instanceTypes.join('/') || 'unknown type'})`);
  return {
    name,
    groups: gs.map((x) => x.name),
    manifest,
    why: [
      `replaces node group${gs.length > 1 ? 's' : ''} ${groups.join(', ')}: ${nodes} node${nodes === 1 ? '' : 's'}`,
      ...why,
      ...(g.taints.length
        ? [
            `taints ${g.taints.map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).join(', ')}: the nodes' taints, which their pods tolerate`,
          ]
        : []),
      ...(Object.keys(labels).length
        ? [
            `labels ${Object.entries(labels)
              .map(([k, v]) => `${k}=${v}`)
              .join(', ')}: pods select them`,
          ]
        : []),
      limits.why,
      ...(weight.why ? [weight.why] : []),
      "consolidation when empty or underutilized after 1m, at most 10% of the nodes disrupted at a time, nodes replaced after 720h (Karpenter's default)",
    ],
  };
}

function clusterNameOf(groups: readonly NodeGroup[], given?: string): string | undefined {
  if (given) return given;
  for (const g of groups)
    for (const n of g.nodes) for (const l of CLUSTER_NAME_LABELS) if (n.labels[l]) return n.labels[l];
  return undefined;
}

function nodeClassManifest(groups: readonly NodeGroup[], cluster: string): Manifest {
  const rootGib = Math.ceil(Math.max(0, ...groups.map((g) => g.maxEphemeral)) / GIB / 10) * 10;
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: NODE_CLASS_NAME },
    spec: {
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      role: `KarpenterNodeRole-${cluster}`,
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': cluster } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': cluster } }],
      ...(rootGib > DEFAULT_ROOT_GIB
        ? {
            blockDeviceMappings: [
              {
                deviceName: '/dev/xvda',
                ebs: { volumeSize: `${rootGib}Gi`, volumeType: 'gp3', encrypted: true, deleteOnTermination: true },
              },
            ],
          }
        : {}),
    },
  };
}

/** Groups the proposal cannot cover: Fargate (EKS schedules those pods itself) and Windows nodes. */
function leftOut(g: NodeGroup): string | undefined {
  if (g.nodes.some((n) => n.labels[FARGATE_LABEL] === 'fargate'))
    return 'Fargate nodes: EKS runs these pods on Fargate profiles, Karpenter does not replace them';
  if (g.os !== 'linux')
    return `${g.os} nodes: the proposal covers Linux; write a NodePool with a ${g.os} EC2NodeClass and pass it with --nodepools`;
  return undefined;
}

export function proposeNodePools(groups: readonly NodeGroup[], opts: ProposalOptions = {}): Proposal {
  const left: { group: string; reason: string }[] = [];
  const bySignature = new Map<string, NodeGroup[]>();
  for (const g of groups) {
    const why = leftOut(g);
    if (why) left.push({ group: g.name, reason: why });
    else bySignature.set(signature(g), [...(bySignature.get(signature(g)) ?? []), g]);
  }
  const taken = new Set<string>();
  // The general-purpose (amd64) pool is "default" (as in Karpenter's docs); the others are named after their first group.
  const sets = [...bySignature.values()].sort(
    (a, b) => Number(isGeneral(b[0]!)) - Number(isGeneral(a[0]!)) || a[0]!.name.localeCompare(b[0]!.name),
  );
  const general =
    sets.find((gs) => isGeneral(gs[0]!) && gs[0]!.arches.includes('amd64')) ?? sets.find((gs) => isGeneral(gs[0]!));
  const ordered = general ? [general, ...sets.filter((gs) => gs !== general)] : sets;
  const zones = union(
    groups.filter((g) => !leftOut(g)),
    (g) => g.zones,
  );
  const nodePools = ordered.map((gs) =>
    poolManifest(poolName(gs === general ? 'default' : gs[0]!.name, taken), gs, zones, weightOf(gs, sets)),
  );
  const cluster = clusterNameOf(groups, opts.clusterName);
  const notes = [
    ...(cluster
      ? []
      : [
          `the cluster's name is not in the input: replace ${CLUSTER_PLACEHOLDER} in the EC2NodeClass (node role, discovery tags), or pass --cluster-name`,
        ]),
    `EC2NodeClass ${NODE_CLASS_NAME}: Amazon Linux 2023 (alias al2023@latest), subnets and security groups tagged karpenter.sh/discovery; change amiSelectorTerms if the nodes run another AMI`,
  ];
  const groupPool: Record<string, string> = {};
  for (const p of nodePools) for (const g of p.groups) groupPool[g] = p.name;
  return { nodePools, nodeClass: nodeClassManifest(groups, cluster ?? CLUSTER_PLACEHOLDER), notes, left, groupPool };
}
