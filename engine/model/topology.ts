// Topology (docs/karpenter/scheduling.md §3): spread constraints, pod affinity and anti-affinity, and the inverse
// anti-affinity of pods that already carry required anti-affinity. A group is one constraint shared by all
// pods that declare it identically; it counts selected pods per domain. Both solvers start from these groups
// and counts (the encoder writes them into the wasm solver's input); the reference solver then updates them
// as it places pods. Written for clarity: it scans, where the wasm solver keeps counters.
import type {
  InstanceType,
  NodePool,
  Pod,
  PodAffinityTerm,
  PreferencePolicy,
  Requirement,
  Requirements,
  Taint,
  TopologySpreadConstraint,
} from '../domain/types.ts';
import { HOSTNAME_LABEL } from '../scheduling/labels.ts';
import { isActive, selectorMatches, strictPodRequirements } from '../scheduling/pods.ts';
import {
  add,
  allows,
  fromLabels,
  fromSelector,
  get,
  has,
  intersect,
  operatorOf,
  req,
} from '../scheduling/requirements.ts';
import { toleratesAll } from '../scheduling/taints.ts';
import { selectorWithLabelKeys, stableKey, TopologyGroup, type NodeFilter, type Placement } from './groups.ts';
import { cacheSlot, type ModelCaches } from './caches.ts';
import { podsOf } from './running.ts';
import { templateRequirements } from './templates.ts';

export { TopologyGroup, type Placement } from './groups.ts';

/** A node that exists before the solve, for domain discovery and counting. */
export interface TopologyNode {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly pods: readonly Pod[];
}

interface TopologyInput {
  readonly nodePools: readonly NodePool[];
  readonly instanceTypes: ReadonlyMap<string, readonly InstanceType[]>;
  readonly nodes: readonly TopologyNode[];
  /** Pods being scheduled: their groups are created, and they are excluded from counting. */
  readonly pending: readonly Pod[];
  /**
   * When `pending` holds one representative per pod class: every pod being scheduled. Only consulted (as a
   * set of uids, built on first use) when nodes carry pods.
   */
  readonly excluded?: readonly Pod[];
  readonly policy: PreferencePolicy;
  readonly namespaceLabels?: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /**
   * The relaxation chain of a pending pod (itself first). Groups of every version are created up front,
   * so a group a relaxed version introduces (relaxing a required term changes a spread constraint's node
   * filter) counts placements from the start of the solve, in both solvers alike.
   */
  readonly versionsOf?: (pod: Pod) => readonly Pod[];
  /**
   * A pod that declares the same topology as `pod` (same namespace, labels, node selector, affinity,
   * tolerations and spread constraints; requests may differ), or `pod` itself. The groups a pod declares
   * are worked out once per shape instead of once per pod object (engine/abi/classes.ts PodShapes).
   */
  readonly shapeOf?: (pod: Pod) => Pod;
  /** Where the per-object work (running pods, template requirements) is remembered. */
  readonly caches?: ModelCaches;
}

function hostnameOf(node: TopologyNode): string {
  return node.labels[HOSTNAME_LABEL] ?? node.name;
}

function nodeDomain(node: TopologyNode, key: string): string | undefined {
  return key === HOSTNAME_LABEL ? hostnameOf(node) : node.labels[key];
}

/**
 * Whether the pod declares any group: spread constraints or pod (anti-)affinity terms. Most pods declare none,
 * and a solve asks for thousands of pod shapes, each in a Topology of its own.
 */
function declaresTopology(pod: Pod): boolean {
  return pod.topologySpreadConstraints.length > 0 || !!pod.affinity?.podAffinity || !!pod.affinity?.podAntiAffinity;
}

const NO_GROUP_IDS: { readonly owned: readonly string[]; readonly inverseOwned: readonly string[] } = Object.freeze({
  owned: Object.freeze([]),
  inverseOwned: Object.freeze([]),
});

/** What the nodes' running pods bring: their namespaces (in order of first appearance) and required anti-affinity. */
interface NodesRunning {
  readonly namespaces: readonly string[];
  readonly antiAffinity: ReadonlyArray<{ readonly node: TopologyNode; readonly pod: Pod }>;
}

// Per node list: a solve over a node table's list (./nodetable.ts) gets the same array as the last one.
const NODES_RUNNING = cacheSlot<readonly TopologyNode[], NodesRunning>('running pods by node list');

function runningOf(nodes: readonly TopologyNode[], caches: ModelCaches | undefined): NodesRunning {
  const scan = (): NodesRunning => {
    const namespaces = new Set<string>();
    const antiAffinity: Array<{ node: TopologyNode; pod: Pod }> = [];
    for (const node of nodes) {
      const r = podsOf(node.pods, caches);
      for (const x of r.namespaces) namespaces.add(x);
      for (const pod of r.antiAffinity) antiAffinity.push({ node, pod });
    }
    return { namespaces: [...namespaces], antiAffinity };
  };
  return caches ? caches.memo(NODES_RUNNING, nodes, scan) : scan();
}

export class Topology {
  readonly groups = new Map<string, TopologyGroup>();
  readonly inverse = new Map<string, TopologyGroup>();
  /** key -> domain -> taint sets of the NodePools offering it. */
  private readonly universe = new Map<string, Map<string, Array<readonly Taint[]>>>();
  private excludedUids?: ReadonlySet<string>;
  private readonly idsByPod = new WeakMap<
    Pod,
    { readonly owned: readonly string[]; readonly inverseOwned: readonly string[] }
  >();
  private readonly allNamespaces: readonly string[];
  private readonly declaredByPod = new WeakMap<Pod, ReadonlyArray<{ group: TopologyGroup; filter?: NodeFilter }>>();

  constructor(private readonly input: TopologyInput) {
    const running = runningOf(input.nodes, input.caches);
    const ns = new Set<string>([...(input.namespaceLabels?.keys() ?? [])]);
    for (const x of running.namespaces) ns.add(x);
    for (const p of input.pending) ns.add(p.namespace);
    this.allNamespaces = [...ns];
    // Inverse groups from pods already running with required anti-affinity.
    for (const { node, pod } of running.antiAffinity) {
      if (!isActive(pod) || this.excluded.has(pod.uid)) continue;
      for (const term of pod.affinity!.podAntiAffinity!.required!) {
        const g = this.inverseGroupFor(pod, term);
        const d = nodeDomain(node, g.key);
        if (d !== undefined) g.increment(d);
      }
    }
    // A pending pod owns no group yet (uids are unique): update() has nothing to remove for the first.
    const seen = new Set<string>();
    for (const pod of input.pending) {
      for (const v of input.versionsOf?.(pod) ?? [pod]) this.groupIds(v);
      if (seen.has(pod.uid)) this.update(pod);
      else this.own(pod);
      seen.add(pod.uid);
    }
  }

  private get excluded(): ReadonlySet<string> {
    return (this.excludedUids ??= new Set((this.input.excluded ?? this.input.pending).map((p) => p.uid)));
  }

  /** The ids of the groups the pod declares, creating them if needed, in group creation order. */
  groupIds(pod: Pod): { readonly owned: readonly string[]; readonly inverseOwned: readonly string[] } {
    if (!declaresTopology(pod)) return NO_GROUP_IDS;
    const shape = this.input.shapeOf?.(pod) ?? pod;
    let ids = this.idsByPod.get(shape);
    if (ids) return ids;
    ids = this.computeGroupIds(shape);
    this.idsByPod.set(shape, ids);
    return ids;
  }

  private computeGroupIds(pod: Pod): { owned: string[]; inverseOwned: string[] } {
    const owned = new Set<string>();
    for (const { group, filter } of this.declared(pod)) owned.add(this.getOrCreate(this.groups, group, filter).id);
    const inverseOwned = new Set<string>();
    for (const term of pod.affinity?.podAntiAffinity?.required ?? [])
      inverseOwned.add(this.inverseGroupFor(pod, term).id);
    return {
      owned: [...this.groups.keys()].filter((id) => owned.has(id)),
      inverseOwned: [...this.inverse.keys()].filter((id) => inverseOwned.has(id)),
    };
  }

  /**
   * The domain universe of one key (§3.2), computed the first time a group on that key needs it: every value
   * the key takes in a NodePool's requirements intersected with each of its instance types', plus every `In`
   * value of the NodePool itself, each with the NodePool's taints.
   */
  private universeOf(key: string): Map<string, Array<readonly Taint[]>> {
    let m = this.universe.get(key);
    if (m) return m;
    m = new Map();
    this.universe.set(key, m);
    const addDomain = (value: string, taints: readonly Taint[]) => {
      let sets = m!.get(value);
      if (!sets) m!.set(value, (sets = []));
      sets.push(taints);
    };
    for (const pool of this.input.nodePools) {
      // Static pools (spec.replicas) are not the scheduler's: their domains are not places to put pods (Karpenter's NewScheduler drops them).
      if (pool.replicas !== undefined) continue;
      const rb = templateRequirements(pool, this.input.caches).get(key);
      const taints = pool.template.taints;
      for (const it of this.input.instanceTypes.get(pool.name) ?? []) {
        const ri = it.requirements.get(key);
        const r = rb && ri ? intersect(rb, ri) : (rb ?? ri);
        if (r) for (const v of r.values) addDomain(v, taints);
      }
      if (rb && !rb.complement) for (const v of rb.values) addDomain(v, taints);
    }
    return m;
  }

  private namespacesFor(pod: Pod, term: PodAffinityTerm): ReadonlySet<string> | 'all' {
    if (term.namespaceSelector) {
      const sel = term.namespaceSelector;
      if (!sel.matchLabels && !sel.matchExpressions?.length) return 'all';
      const out = new Set(term.namespaces ?? []);
      for (const ns of this.allNamespaces)
        if (selectorMatches(sel, this.input.namespaceLabels?.get(ns) ?? {})) out.add(ns);
      return out;
    }
    return new Set(term.namespaces?.length ? term.namespaces : [pod.namespace]);
  }

  private nodeFilterFor(pod: Pod, tsc: TopologySpreadConstraint): NodeFilter {
    const honorAffinity = (tsc.nodeAffinityPolicy ?? 'Honor') === 'Honor';
    const alternatives: Requirements[] = [];
    if (honorAffinity) {
      const base = fromLabels(pod.nodeSelector);
      const terms = pod.affinity?.nodeAffinity?.required ?? [];
      if (terms.length === 0) alternatives.push(base);
      for (const t of terms) alternatives.push(add(base, ...t.matchExpressions.map(fromSelector)));
    }
    return { alternatives, honorTaints: tsc.nodeTaintsPolicy === 'Honor', tolerations: pod.tolerations };
  }

  private getOrCreate(map: Map<string, TopologyGroup>, g: TopologyGroup, filterTaints?: NodeFilter): TopologyGroup {
    const existing = map.get(g.id);
    if (existing) return existing;
    map.set(g.id, g);
    this.initDomains(g, filterTaints);
    return g;
  }

  /** Domains from the universe and existing nodes, then counts from the cluster's pods (§3.2). */
  private initDomains(g: TopologyGroup, filter?: NodeFilter): void {
    for (const [domain, taintSets] of this.universeOf(g.key)) {
      if (filter?.honorTaints && !taintSets.some((ts) => toleratesAll(filter.tolerations, ts))) continue;
      g.register(domain);
    }
    for (const node of this.input.nodes) {
      const d = nodeDomain(node, g.key);
      if (d === undefined) continue;
      const placement = {
        requirements: add(fromLabels(node.labels), req(HOSTNAME_LABEL, false, [hostnameOf(node)])),
        taints: node.taints,
      };
      if (g.type === 'spread' && !g.counts(placement)) continue;
      g.register(d);
      if (g.inverse) continue;
      for (const pod of node.pods) {
        if (!isActive(pod) || this.excluded.has(pod.uid) || !g.selects(pod)) continue;
        g.increment(d);
      }
    }
  }

  private inverseGroupFor(pod: Pod, term: PodAffinityTerm): TopologyGroup {
    const namespaces = this.namespacesFor(pod, term);
    const selector = selectorWithLabelKeys(term.labelSelector, term.matchLabelKeys, pod.labels);
    const id = `inverse|${term.topologyKey}|${namespaces === 'all' ? '*' : [...namespaces].sort().join(',')}|${stableKey(selector)}`;
    const g = new TopologyGroup(
      id,
      'anti-affinity',
      term.topologyKey,
      namespaces,
      selector,
      Number.MAX_SAFE_INTEGER,
      undefined,
      undefined,
      true,
    );
    return this.getOrCreate(this.inverse, g);
  }

  /**
   * The groups a pod declares under the policy (§3.2 "Which constraints create groups"). The same for a pod
   * object for the life of this Topology (policy, namespaces and NodePools are fixed): computed once, since
   * building the group ids is most of the work and both groupIds() and update() ask.
   */
  private declared(pod: Pod): ReadonlyArray<{ group: TopologyGroup; filter?: NodeFilter }> {
    if (!declaresTopology(pod)) return [];
    const shape = this.input.shapeOf?.(pod) ?? pod;
    let d = this.declaredByPod.get(shape);
    if (!d) this.declaredByPod.set(shape, (d = this.computeDeclared(shape)));
    return d;
  }

  private computeDeclared(pod: Pod): Array<{ group: TopologyGroup; filter?: NodeFilter }> {
    const out: Array<{ group: TopologyGroup; filter?: NodeFilter }> = [];
    const respect = this.input.policy === 'Respect';
    for (const tsc of pod.topologySpreadConstraints) {
      if (tsc.whenUnsatisfiable === 'ScheduleAnyway' && !respect) continue;
      const selector = selectorWithLabelKeys(tsc.labelSelector, tsc.matchLabelKeys, pod.labels);
      const filter = this.nodeFilterFor(pod, tsc);
      const filterId = `${filter.alternatives.map((a) => JSON.stringify([...a.values()].map((r) => [r.key, r.complement, [...r.values].sort(), r.gte, r.lte]))).join('|')}#${filter.honorTaints ? JSON.stringify(pod.tolerations) : ''}`;
      const id = `spread|${tsc.topologyKey}|${pod.namespace}|${tsc.maxSkew}|${tsc.minDomains ?? ''}|${filterId}|${stableKey(selector)}`;
      out.push({
        group: new TopologyGroup(
          id,
          'spread',
          tsc.topologyKey,
          new Set([pod.namespace]),
          selector,
          tsc.maxSkew,
          tsc.minDomains,
          filter,
          false,
        ),
        filter,
      });
    }
    const terms = (
      type: 'affinity' | 'anti-affinity',
      required: readonly PodAffinityTerm[],
      preferred: readonly PodAffinityTerm[],
    ) => {
      for (const term of [...required, ...(respect ? preferred : [])]) {
        const namespaces = this.namespacesFor(pod, term);
        const selector = selectorWithLabelKeys(term.labelSelector, term.matchLabelKeys, pod.labels);
        const id = `${type}|${term.topologyKey}|${namespaces === 'all' ? '*' : [...namespaces].sort().join(',')}|${stableKey(selector)}`;
        out.push({
          group: new TopologyGroup(
            id,
            type,
            term.topologyKey,
            namespaces,
            selector,
            Number.MAX_SAFE_INTEGER,
            undefined,
            undefined,
            false,
          ),
        });
      }
    };
    const a = pod.affinity;
    terms(
      'affinity',
      a?.podAffinity?.required ?? [],
      (a?.podAffinity?.preferred ?? []).map((w) => w.podAffinityTerm),
    );
    terms(
      'anti-affinity',
      a?.podAntiAffinity?.required ?? [],
      (a?.podAntiAffinity?.preferred ?? []).map((w) => w.podAffinityTerm),
    );
    return out;
  }

  /** Re-registers the pod as owner of exactly the groups it declares now (after relaxation too). */
  update(pod: Pod): void {
    for (const g of this.groups.values()) g.owners.delete(pod.uid);
    for (const g of this.inverse.values()) g.owners.delete(pod.uid);
    this.own(pod);
  }

  /** Adds the pod as owner of the groups it declares (creating them if needed). */
  private own(pod: Pod): void {
    for (const { group, filter } of this.declared(pod))
      this.getOrCreate(this.groups, group, filter).owners.add(pod.uid);
    // The inverse groups of its required anti-affinity terms, as groupIds() created them (same ids).
    if ((pod.affinity?.podAntiAffinity?.required?.length ?? 0) > 0)
      for (const id of this.groupIds(pod).inverseOwned) this.inverse.get(id)!.owners.add(pod.uid);
  }

  /** Groups that constrain this pod: its own, and inverse groups whose selector selects it. */
  private matching(pod: Pod): TopologyGroup[] {
    const out: TopologyGroup[] = [];
    for (const g of this.groups.values()) if (g.owners.has(pod.uid)) out.push(g);
    // An inverse group only constrains once one of its owners occupies a domain.
    for (const g of this.inverse.values())
      if (g.selects(pod) && [...g.domains.values()].some((c) => c > 0)) out.push(g);
    return out;
  }

  /**
   * The requirements topology adds to a candidate placement, or an error (§3.3). `podReqs` are the pod's
   * strict requirements; `node` the candidate's merged requirements.
   */
  addRequirements(
    pod: Pod,
    podReqs: Requirements,
    node: Placement,
  ): { ok: true; requirements: Requirements } | { ok: false; reason: string } {
    let reqs = node.requirements;
    for (const g of this.matching(pod)) {
      if (g.type === 'spread' && !g.counts({ requirements: reqs, taints: node.taints })) continue;
      const podDomains = get(podReqs, g.key);
      const nodeDomains = get(reqs, g.key);
      const next = this.nextDomains(g, pod, podDomains, nodeDomains);
      if (operatorOf(next) === 'DoesNotExist' && !next.complement) {
        const what =
          g.type === 'spread' ? 'topology spread' : g.type === 'affinity' ? 'pod affinity' : 'pod anti-affinity';
        return { ok: false, reason: `unsatisfiable topology constraint for ${what}, key=${g.key}` };
      }
      reqs = add(reqs, next);
    }
    return { ok: true, requirements: reqs };
  }

  private nextDomains(g: TopologyGroup, pod: Pod, podDomains: Requirement, nodeDomains: Requirement): Requirement {
    if (g.type === 'spread') return this.nextSpread(g, pod, podDomains, nodeDomains);
    if (g.type === 'affinity') return this.nextAffinity(g, pod, podDomains, nodeDomains);
    return this.nextAnti(g, podDomains, nodeDomains);
  }

  private candidates(g: TopologyGroup, nodeDomains: Requirement): string[] {
    if (!nodeDomains.complement) return [...nodeDomains.values].sort();
    return [...g.domains.keys()].filter((d) => has(nodeDomains, d)).sort();
  }

  private nextSpread(g: TopologyGroup, pod: Pod, podDomains: Requirement, nodeDomains: Requirement): Requirement {
    const self = g.selects(pod) ? 1 : 0;
    const single = !nodeDomains.complement && nodeDomains.values.size === 1;
    if (g.key === HOSTNAME_LABEL && single) {
      const host = [...nodeDomains.values][0]!;
      return (g.domains.get(host) ?? 0) + self <= g.maxSkew ? req(g.key, false, [host]) : req(g.key, false, []);
    }
    let min = Number.MAX_SAFE_INTEGER;
    let eligible = 0;
    for (const [d, c] of g.domains) {
      if (!has(podDomains, d)) continue;
      eligible++;
      if (c < min) min = c;
    }
    if (eligible === 0 || g.key === HOSTNAME_LABEL || (g.minDomains !== undefined && eligible < g.minDomains)) min = 0;
    let best: string | undefined;
    let bestCount = Number.MAX_SAFE_INTEGER;
    for (const d of this.candidates(g, nodeDomains)) {
      const c = (g.domains.get(d) ?? 0) + self;
      if (c - min <= g.maxSkew && c < bestCount) {
        best = d;
        bestCount = c;
      }
    }
    return req(g.key, false, best === undefined ? [] : [best]);
  }

  private nextAffinity(g: TopologyGroup, pod: Pod, podDomains: Requirement, nodeDomains: Requirement): Requirement {
    const self = g.selects(pod);
    const anyInPodDomains = [...g.domains].some(([d, c]) => c > 0 && has(podDomains, d));
    const single = !nodeDomains.complement && nodeDomains.values.size === 1;
    if (g.key === HOSTNAME_LABEL && single) {
      const host = [...nodeDomains.values][0]!;
      if (!has(podDomains, host)) return req(g.key, false, []);
      if ((g.domains.get(host) ?? 0) > 0) return req(g.key, false, [host]);
      return self && !anyInPodDomains ? req(g.key, false, [host]) : req(g.key, false, []);
    }
    const allowed = this.candidates(g, nodeDomains).filter((d) => (g.domains.get(d) ?? 0) > 0 && has(podDomains, d));
    if (allowed.length) return req(g.key, false, allowed);
    if (self && !anyInPodDomains) {
      const first = this.candidates(g, nodeDomains).find((d) => has(podDomains, d));
      return req(g.key, false, first === undefined ? [] : [first]);
    }
    return req(g.key, false, []);
  }

  private nextAnti(g: TopologyGroup, podDomains: Requirement, nodeDomains: Requirement): Requirement {
    const single = !nodeDomains.complement && nodeDomains.values.size === 1;
    if (g.key === HOSTNAME_LABEL && single) {
      const host = [...nodeDomains.values][0]!;
      return (g.domains.get(host) ?? 0) === 0 ? req(g.key, false, [host]) : req(g.key, false, []);
    }
    const allowed = this.candidates(g, nodeDomains).filter((d) => (g.domains.get(d) ?? 0) === 0 && has(podDomains, d));
    return req(g.key, false, allowed);
  }

  /** Records a placement (§3.7). `reqs` are the final requirements of the node the pod went to. */
  record(pod: Pod, placement: Placement): void {
    const podStrict = strictPodRequirements(pod);
    for (const g of this.groups.values()) {
      if (!g.selects(pod)) continue;
      if (g.type === 'spread' && !g.counts(placement)) continue;
      const r = get(placement.requirements, g.key);
      if (g.type === 'anti-affinity') {
        for (const d of this.candidates(g, r)) if (allows(podStrict, g.key, d)) g.increment(d);
      } else if (!r.complement && r.values.size === 1) {
        g.increment([...r.values][0]!);
      }
    }
    for (const g of this.inverse.values()) {
      if (!g.owners.has(pod.uid)) continue;
      const r = get(placement.requirements, g.key);
      for (const d of this.candidates(g, r)) g.increment(d);
    }
  }

  /** New NodeClaims register their placeholder hostname in every hostname group (count 0). */
  registerHostname(hostname: string): void {
    for (const g of this.groups.values()) if (g.key === HOSTNAME_LABEL) g.register(hostname);
    for (const g of this.inverse.values()) if (g.key === HOSTNAME_LABEL) g.register(hostname);
  }
}
