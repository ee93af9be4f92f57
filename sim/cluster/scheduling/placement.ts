// Filters that look beyond one node: required inter-pod affinity and anti-affinity (any topology key, in
// both directions: the incoming pod's terms and existing pods' anti-affinity against it) and topology
// spread constraints with whenUnsatisfiable: DoNotSchedule. Each is prepared once per pod per pass
// (domain counts) and then checked per node in O(constraints).
import { matchesLabelSelector, type KObject } from '../../apiserver/index.ts';
import { matchesNodeAffinity } from './filters.ts';
import { isTerminal, podSpec, type NodeInfo, type PodAffinityTerm, type TopologySpreadConstraint } from './nodes.ts';

const REASON_ANTI = "node(s) didn't match pod anti-affinity rules";
const REASON_EXISTING_ANTI = "node(s) didn't satisfy existing pods anti-affinity rules";
const REASON_AFFINITY = "node(s) didn't match pod affinity rules";
const REASON_SPREAD = "node(s) didn't match pod topology spread constraints";
const REASON_SPREAD_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)";

/** Whether `other` is selected by `term`, written on a pod in namespace `ownerNs`. */
function termSelects(term: PodAffinityTerm, ownerNs: string, other: KObject): boolean {
  const ns = other.metadata.namespace ?? '';
  const inNs =
    term.namespaceSelector && Object.keys(term.namespaceSelector).length === 0
      ? true
      : term.namespaces?.length
        ? term.namespaces.includes(ns)
        : ns === ownerNs;
  return inNs && matchesLabelSelector(term.labelSelector, other.metadata.labels);
}

interface Placed {
  pod: KObject;
  node: NodeInfo;
}

type NodeCheck = (info: NodeInfo) => string | undefined;

const antiTermsOf = (p: KObject): PodAffinityTerm[] =>
  podSpec(p).affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
const counts = (p: KObject): boolean => !isTerminal(p) && !p.metadata.deletionTimestamp;
const none: NodeCheck = () => undefined;

/**
 * The placement of pods during one scheduling pass. Most pods have no inter-pod constraints, and most
 * clusters have few pods with required anti-affinity, so check() is O(1) for them; the full placement
 * list is only walked for pods that have constraints.
 */
export class Placement {
  private readonly placed: Placed[] = [];
  private readonly antiHolders: Placed[] = [];

  constructor(private readonly nodes: readonly NodeInfo[]) {
    for (const node of nodes) for (const pod of node.pods) this.add(pod, node);
  }

  /** Records a pod bound during the pass. */
  add(pod: KObject, node: NodeInfo): void {
    if (!counts(pod)) return;
    this.placed.push({ pod, node });
    if (antiTermsOf(pod).length) this.antiHolders.push({ pod, node });
  }

  check(pod: KObject): NodeCheck {
    const spec = podSpec(pod);
    const hasOwn =
      antiTermsOf(pod).length ||
      spec.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.length ||
      (spec.topologySpreadConstraints ?? []).some((c) => c.whenUnsatisfiable === 'DoNotSchedule');
    if (!hasOwn && !this.antiHolders.length) return none;
    return placementCheck(pod, this.nodes, this.placed, this.antiHolders);
  }
}

/** Prepares the inter-pod and spread checks for `pod` against the current placement. */
function placementCheck(
  pod: KObject,
  nodes: readonly NodeInfo[],
  all: readonly Placed[],
  antiHolders: readonly Placed[],
): NodeCheck {
  const spec = podSpec(pod);
  const ns = pod.metadata.namespace ?? '';
  const affTerms = spec.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
  const spread = (spec.topologySpreadConstraints ?? []).filter((c) => c.whenUnsatisfiable === 'DoNotSchedule');
  const checks: NodeCheck[] = [
    ...antiTermsOf(pod).map((term) => ownAntiAffinity(term, ns, all)),
    ...existingAntiAffinity(pod, antiHolders),
    ...affTerms.map((term) => ownAffinity(term, ns, pod, all)),
    ...spread.map((c) => topologySpread(c, ns, pod, nodes, all)),
  ];
  return (n) => {
    for (const check of checks) {
      const reason = check(n);
      if (reason) return reason;
    }
    return undefined;
  };
}

/** The incoming pod's anti-affinity: domains already holding a selected pod are closed. */
function ownAntiAffinity(term: PodAffinityTerm, ns: string, all: readonly Placed[]): NodeCheck {
  const closed = new Set(
    all
      .filter((p) => termSelects(term, ns, p.pod))
      .map((p) => p.node.labels[term.topologyKey])
      .filter((v) => v !== undefined),
  );
  return (n) =>
    n.labels[term.topologyKey] !== undefined && closed.has(n.labels[term.topologyKey]!) ? REASON_ANTI : undefined;
}

/** Existing pods' anti-affinity against the incoming pod: none, or one check closing every blocked domain. */
function existingAntiAffinity(pod: KObject, antiHolders: readonly Placed[]): NodeCheck[] {
  const blocking: Array<{ key: string; value: string }> = [];
  for (const p of antiHolders) {
    for (const term of antiTermsOf(p.pod)) {
      const v = p.node.labels[term.topologyKey];
      if (v !== undefined && termSelects(term, p.pod.metadata.namespace ?? '', pod))
        blocking.push({ key: term.topologyKey, value: v });
    }
  }
  if (!blocking.length) return [];
  return [(n) => (blocking.some((b) => n.labels[b.key] === b.value) ? REASON_EXISTING_ANTI : undefined)];
}

/**
 * The incoming pod's affinity: the domain must hold a selected pod (unless none exists anywhere and the pod
 * selects itself, so the first replica of a self-affine group can start).
 */
function ownAffinity(term: PodAffinityTerm, ns: string, pod: KObject, all: readonly Placed[]): NodeCheck {
  const selected = all.filter((p) => termSelects(term, ns, p.pod));
  const open = new Set(selected.map((p) => p.node.labels[term.topologyKey]).filter((v) => v !== undefined));
  const first = selected.length === 0 && termSelects(term, ns, pod);
  return (n) => {
    const v = n.labels[term.topologyKey];
    if (v === undefined) return REASON_AFFINITY;
    return first || open.has(v) ? undefined : REASON_AFFINITY;
  };
}

/** Topology spread: skew = pods in the node's domain (+1 for this pod if it matches) - the global minimum. */
function topologySpread(
  c: TopologySpreadConstraint,
  ns: string,
  pod: KObject,
  nodes: readonly NodeInfo[],
  all: readonly Placed[],
): NodeCheck {
  const selector = spreadSelector(c, pod);
  const eligible = nodes.filter(
    (n) =>
      n.labels[c.topologyKey] !== undefined &&
      (c.nodeAffinityPolicy === 'Ignore' || matchesNodeAffinity(pod, n.labels, n.name)),
  );
  const counts = new Map<string, number>();
  for (const n of eligible) counts.set(n.labels[c.topologyKey]!, 0);
  const eligibleNames = new Set(eligible.map((n) => n.name));
  for (const p of all) {
    const v = p.node.labels[c.topologyKey];
    if (
      v !== undefined &&
      eligibleNames.has(p.node.name) &&
      (p.pod.metadata.namespace ?? '') === ns &&
      matchesLabelSelector(selector, p.pod.metadata.labels)
    )
      counts.set(v, counts.get(v)! + 1);
  }
  let min = counts.size ? Math.min(...counts.values()) : 0;
  if (c.minDomains !== undefined && counts.size < c.minDomains) min = 0;
  const self = matchesLabelSelector(selector, pod.metadata.labels) ? 1 : 0;
  return (n) => {
    const v = n.labels[c.topologyKey];
    if (v === undefined) return REASON_SPREAD_LABEL;
    return (counts.get(v) ?? 0) + self - min > c.maxSkew ? REASON_SPREAD : undefined;
  };
}

/** A spread constraint's selector, with its matchLabelKeys filled in from the pod's own labels. */
function spreadSelector(
  c: TopologySpreadConstraint,
  pod: KObject,
): NonNullable<TopologySpreadConstraint['labelSelector']> {
  const selector = { ...(c.labelSelector ?? {}) };
  if (c.matchLabelKeys?.length) {
    selector.matchLabels = { ...(selector.matchLabels ?? {}) };
    for (const k of c.matchLabelKeys) {
      const v = pod.metadata.labels?.[k];
      if (v !== undefined) selector.matchLabels[k] = v;
    }
  }
  return selector;
}
