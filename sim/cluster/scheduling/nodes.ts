// What a node offers a pod, for the simulated scheduler: effective taints, allocatable, what its pods
// already use, its host ports. Pod requests follow Kubernetes' resource rule (PodRequests in
// k8s.io/component-helpers): sum of containers and sidecars, at least the largest init-container step,
// plus overhead. Quantities are parsed with the engine's parser (same units: millicores, bytes, counts).
import { add, max, parseResources, type Resources } from '../../../engine/index.ts';
import type { KObject, LabelSelectorObject } from '../../apiserver/index.ts';

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

interface Container {
  name?: string;
  restartPolicy?: string;
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
  ports?: Array<{ hostPort?: number; protocol?: string; hostIP?: string }>;
}

export interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface PodAffinityTerm {
  labelSelector?: LabelSelectorObject;
  namespaces?: string[];
  namespaceSelector?: LabelSelectorObject;
  topologyKey: string;
}

interface Affinity {
  nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] } };
  podAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[] };
  podAntiAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[] };
}

export interface TopologySpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: string;
  labelSelector?: LabelSelectorObject;
  minDomains?: number;
  matchLabelKeys?: string[];
  nodeAffinityPolicy?: string;
  nodeTaintsPolicy?: string;
}

export interface PodSpec {
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  schedulerName?: string;
  priority?: number;
  containers?: Container[];
  initContainers?: Container[];
  overhead?: Record<string, string | number>;
  tolerations?: Array<{ key?: string; operator?: string; value?: string; effect?: string }>;
  affinity?: Affinity;
  topologySpreadConstraints?: TopologySpreadConstraint[];
}

export const podSpec = (pod: KObject): PodSpec => (pod.spec ?? {}) as PodSpec;
const podPhase = (pod: KObject): string => (pod.status as { phase?: string } | undefined)?.phase ?? '';
export const isTerminal = (pod: KObject): boolean => podPhase(pod) === 'Succeeded' || podPhase(pod) === 'Failed';

/** Container requests; a limit without a request counts as the request, as the API server defaults it. */
function containerRequests(c: Container): Resources {
  return parseResources({ ...(c.resources?.limits ?? {}), ...(c.resources?.requests ?? {}) });
}

const cache = new WeakMap<KObject, Resources>();

/** The pod's effective requests (stored objects are immutable, so the result is cached per object). */
export function podRequests(pod: KObject): Resources {
  const hit = cache.get(pod);
  if (hit) return hit;
  const spec = podSpec(pod);
  let reqs: Resources = {};
  for (const c of spec.containers ?? []) reqs = add(reqs, containerRequests(c));
  let sidecars: Resources = {};
  let initMax: Resources = {};
  for (const c of spec.initContainers ?? []) {
    const r = containerRequests(c);
    if (c.restartPolicy === 'Always') {
      reqs = add(reqs, r);
      sidecars = add(sidecars, r);
      initMax = max(initMax, sidecars);
    } else initMax = max(initMax, add(r, sidecars));
  }
  const out = add(max(reqs, initMax), parseResources(spec.overhead));
  cache.set(pod, out);
  return out;
}

export function nodeCondition(node: KObject, type: string): string | undefined {
  return ((node.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []).find(
    (c) => c.type === type,
  )?.status;
}

/**
 * The node's taints plus the ones the node lifecycle controller would add (TaintNodesByCondition):
 * not-ready / unreachable while Ready is False / Unknown, and unschedulable while cordoned.
 */
export function effectiveTaints(node: KObject): Taint[] {
  const spec = (node.spec ?? {}) as { taints?: Taint[]; unschedulable?: boolean };
  const taints = [...(spec.taints ?? [])];
  const ready = nodeCondition(node, 'Ready');
  if (ready === 'False') taints.push({ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' });
  else if (ready !== 'True') taints.push({ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' });
  if (spec.unschedulable) taints.push({ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' });
  return taints;
}

export function hostPorts(pod: KObject): string[] {
  const out: string[] = [];
  for (const c of podSpec(pod).containers ?? []) {
    for (const p of c.ports ?? [])
      if (p.hostPort) out.push(`${p.protocol ?? 'TCP'}/${p.hostIP || '0.0.0.0'}/${p.hostPort}`);
  }
  return out;
}

export function portsConflict(wanted: readonly string[], used: ReadonlySet<string>): boolean {
  for (const w of wanted) {
    const [proto, ip, port] = w.split('/');
    for (const u of used) {
      const [uproto, uip, uport] = u.split('/');
      if (proto === uproto && port === uport && (ip === uip || ip === '0.0.0.0' || uip === '0.0.0.0')) return true;
    }
  }
  return false;
}

/** A node as the scheduler sees it during one pass; `use` adds a pod it just bound. */
export class NodeInfo {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly taints: Taint[];
  readonly allocatable: Resources;
  used: Resources = {};
  readonly pods: KObject[] = [];
  readonly ports = new Set<string>();

  constructor(readonly node: KObject) {
    this.name = node.metadata.name!;
    this.labels = node.metadata.labels ?? {};
    this.taints = effectiveTaints(node);
    this.allocatable = safeResources(
      (node.status as { allocatable?: Record<string, string> } | undefined)?.allocatable,
    );
  }

  use(pod: KObject): void {
    this.pods.push(pod);
    if (isTerminal(pod)) return;
    let req: Resources = {};
    try {
      req = podRequests(pod);
    } catch {
      // A bound pod with unparseable requests still takes a pod slot; its requests count as zero.
    }
    this.used = add(this.used, { ...req, pods: 1 });
    for (const p of hostPorts(pod)) this.ports.add(p);
  }
}

/** A node whose allocatable does not parse offers nothing (the real API server would have rejected it). */
function safeResources(list: Record<string, string> | undefined): Resources {
  try {
    return parseResources(list);
  } catch {
    return {};
  }
}
