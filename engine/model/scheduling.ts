// The scheduling model of one solve: what both solvers start from, built once from a ProvisionInput. The
// NodePools that provision and their templates (instance types filtered, daemonset overhead grouped), the
// existing and in-flight nodes with the room they have, NodePool limits left, reserved capacity, the topology
// groups with their initial counts, each pod's relaxation chain and (IgnoreDRARequests off) the device
// allocation simulation. The encoder writes it into the wasm solver's input; the reference solver runs its
// search over it. It also answers why a pod fits nowhere, for both.
import { EMPTY_DRA } from '../domain/dra.ts';
import { NODES } from '../domain/resources.ts';
import type { Pod, StateNode } from '../domain/types.ts';
import { DeviceAllocator, hasDRA, type PodDra } from '../dra/allocator.ts';
import { WELL_KNOWN_LABELS } from '../scheduling/labels.ts';
import { isActive, podRequirements } from '../scheduling/pods.ts';
import { cacheSlot, ModelCaches } from './caches.ts';
import { ignoresDRA } from './dra.ts';
import { describeLimits, remainingLimits, withinLimits } from './limits.ts';
import { type NodeTable, nodeTable } from './nodetable.ts';
import {
  ExistingNode,
  nodeStart,
  placeholderHostname,
  SimNodeClaim,
  type DraContext,
  type Reservations,
} from './places.ts';
import { relax } from './relax.ts';
import { ReservationManager } from './reservations.ts';
import { buildTemplate, provisioningPools, type Template } from './templates.ts';
import { Topology, type TopologyNode } from './topology.ts';
import type { ProvisionInput } from './types.ts';

// A node's active pods, once per pods array: snapshots are immutable, and a disruption call simulates the same
// nodes again and again (a candidate is a copy marked for deletion, with the same pods array).
const ACTIVE_PODS = cacheSlot<readonly Pod[], readonly Pod[]>('active pods');
/**
 * A pod's relaxation chain, kept across solves: relax() is a function of the pod, the preference policy and whether
 * some NodePool has a PreferNoSchedule taint, so the next solve over the same pod reuses the same relaxed pods (and
 * what is remembered of them: their classes, their topology groups) instead of building new ones.
 */
const RELAXATION_CHAINS = cacheSlot<
  Pod,
  { readonly policy: string; readonly anyPreferNoSchedule: boolean; readonly chain: Pod[] }
>('relaxation chains');

/** Why a pod fits no new NodeClaim: one line, and the failure in each NodePool. */
interface PodExplanation {
  readonly reason: string;
  readonly perNodePool?: Record<string, string>;
}

interface ModelPods {
  /** The pods to schedule. */
  readonly pods: readonly Pod[];
  /**
   * One pod per class of identical pods, when the caller has them (the wasm encoder), so that per-pod work is
   * not repeated for thousands of replicas.
   */
  readonly representatives?: readonly Pod[];
  /** A pod of the same topology shape (see TopologyInput.shapeOf). */
  readonly shapeOf?: (pod: Pod) => Pod;
  /** Keep the nodes' part in a node table of the caches (./nodetable.ts); default true. The model is the same. */
  readonly nodeTable?: boolean;
}

/** The positions of the list's active nodes (not deleting, not marked), in the table's order. */
function activePositions(table: NodeTable, nodes: readonly StateNode[]): Int32Array {
  const out = new Int32Array(nodes.length);
  let k = 0;
  for (const i of table.order) {
    const n = nodes[i]!;
    if (!n.markedForDeletion && !n.deleting) out[k++] = i;
  }
  return out.slice(0, k);
}

/** The existing nodes at those positions, each from the start the table keeps for its position. */
function existingFrom(
  table: NodeTable,
  at: Int32Array,
  nodes: readonly StateNode[],
  caches: ModelCaches,
): ExistingNode[] {
  const out: ExistingNode[] = new Array(at.length);
  const startOf = (n: StateNode) => nodeStart(n, table.daemonSets, caches);
  for (let j = 0; j < at.length; j++) {
    const i = at[j]!;
    out[j] = new ExistingNode(nodes[i]!, table.daemonSets, caches, table.at('start', i, startOf));
  }
  return out;
}

export class SchedulingModel {
  readonly caches: ModelCaches;
  readonly wellKnown: ReadonlySet<string>;
  readonly strictMinValues: boolean;
  /** Some provisioning NodePool has a PreferNoSchedule taint (the last relaxation step tolerates them). */
  readonly anyPreferNoSchedule: boolean;
  /** One per provisioning NodePool with instance types left, in scheduling order. */
  readonly templates: readonly Template[];
  /** Active (not deleting, not marked) existing and in-flight nodes, initialized first, then by name. */
  readonly existing: readonly ExistingNode[];
  /**
   * With caches: the input's nodes kept by position for the next solve over the same list (./nodetable.ts), and
   * each existing node's position in it.
   */
  readonly nodeTable: NodeTable | undefined;
  readonly existingAt: Int32Array | undefined;
  readonly topology: Topology;
  /** Reserved capacity shared by the NodeClaims of this solve (§2.15). */
  readonly reservations: Reservations;
  /** The device allocation simulation, when IgnoreDRARequests is off and some pod uses DRA. */
  readonly dra: DraContext | undefined;
  /** NodePool limits left: the reference solver takes from them as it plans NodeClaims. */
  private readonly remaining = new Map<string, Record<string, number>>();
  /** Relaxation chains by pod object: encoding, topology and the bound ask for the same chains. */
  private readonly chains = new WeakMap<Pod, Pod[]>();
  private hostnames = 0;

  constructor(
    readonly input: ProvisionInput,
    pods: ModelPods,
  ) {
    this.caches = input.caches ?? new ModelCaches();
    this.wellKnown = input.wellKnownLabels ?? WELL_KNOWN_LABELS;
    this.strictMinValues = input.options.minValuesPolicy === 'Strict';
    const pools = provisioningPools(input.nodePools);
    this.templates = pools
      .map((p) =>
        buildTemplate(
          p,
          input.instanceTypes.get(p.name) ?? [],
          input.daemonSets,
          this.wellKnown,
          this.strictMinValues,
          this.caches,
        ),
      )
      .filter((t) => t.instanceTypes.length > 0);
    this.reservations = {
      manager: new ReservationManager(
        pools.map((p) => input.instanceTypes.get(p.name) ?? []),
        this.caches,
      ),
      mode: input.reservedOfferingMode ?? 'Strict',
    };
    this.anyPreferNoSchedule = pools.some((p) => p.template.taints.some((t) => t.effect === 'PreferNoSchedule'));
    const active = input.nodes.filter((n) => !n.markedForDeletion && !n.deleting);
    this.nodeTable =
      input.caches && pods.nodeTable !== false ? nodeTable(input.nodes, input.daemonSets, input.caches) : undefined;
    if (this.nodeTable) {
      const at = activePositions(this.nodeTable, input.nodes);
      this.existingAt = at;
      this.existing = existingFrom(this.nodeTable, at, input.nodes, this.caches);
    } else {
      this.existingAt = undefined;
      this.existing = [...active]
        .sort(
          (a, b) => Number(b.initialized) - Number(a.initialized) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
        )
        .map((n) => new ExistingNode(n, input.daemonSets, this.caches));
    }
    for (const p of pools)
      this.remaining.set(
        p.name,
        remainingLimits(
          p.limits,
          active.filter((n) => n.nodePoolName === p.name),
        ),
      );
    this.topology = this.buildTopology(pools, pods);
    for (const e of this.existing) this.topology.registerHostname(e.hostname);
    this.dra = !ignoresDRA(input) && pods.pods.some(hasDRA) ? draContext(input) : undefined;
  }

  private buildTopology(pools: ReturnType<typeof provisioningPools>, pods: ModelPods): Topology {
    return new Topology({
      nodePools: pools,
      instanceTypes: this.input.instanceTypes,
      nodes: this.nodeTable?.topologyNodes ?? this.input.nodes.map((n) => this.topologyNode(n)),
      pending: pods.representatives ?? pods.pods,
      ...(pods.representatives ? { excluded: pods.pods } : {}),
      policy: this.input.options.preferencePolicy,
      versionsOf: (pod) => this.versions(pod),
      ...(pods.shapeOf ? { shapeOf: pods.shapeOf } : {}),
      caches: this.caches,
    });
  }

  /** A node as topology sees it. */
  private topologyNode(n: StateNode): TopologyNode {
    const pods = this.caches.memo(ACTIVE_PODS, n.pods, () => n.pods.filter(isActive));
    return { name: n.name, labels: n.labels, taints: n.taints, pods };
  }

  /** The pod and its successive relaxations (§2.17). */
  versions(pod: Pod): readonly Pod[] {
    let out = this.chains.get(pod);
    if (out) return out;
    const policy = this.input.options.preferencePolicy;
    const kept = this.caches.get(RELAXATION_CHAINS, pod);
    if (kept && kept.policy === policy && kept.anyPreferNoSchedule === this.anyPreferNoSchedule) out = kept.chain;
    else {
      out = [pod];
      for (let p = this.relax(pod); p; p = this.relax(p)) out.push(p);
      // A pod with nothing to relax (most pods) is its own chain: asking relax() again costs a few field reads,
      // and keeping [pod] in the caches cost an entry for every pod of the cluster that ever led its class.
      if (out.length > 1)
        this.caches.set(RELAXATION_CHAINS, pod, { policy, anyPreferNoSchedule: this.anyPreferNoSchedule, chain: out });
    }
    this.chains.set(pod, out);
    return out;
  }

  /** The pod with its next soft constraint relaxed, or undefined (§2.17). */
  relax(pod: Pod): Pod | undefined {
    return relax(pod, this.input.options.preferencePolicy, this.anyPreferNoSchedule);
  }

  /** What is left of the pool's limits (live: the reference solver takes from it). */
  remainingLimits(pool: string): Record<string, number> | undefined {
    return this.remaining.get(pool);
  }

  /** A NodeClaim from the template with these instance types, under the next placeholder hostname. */
  newClaim(tmpl: Template, instanceTypes: SimNodeClaim['instanceTypes'], seq: number): SimNodeClaim {
    return new SimNodeClaim(tmpl, instanceTypes, seq, placeholderHostname(this.hostnames++), this.reservations);
  }

  /**
   * Why a pod cannot be placed, per NodePool, judged against the current state without changing it: the
   * specific constraint that fails on a new NodeClaim from each pool (taint, requirement, resources,
   * offerings, limits, topology), relaxing preferences as scheduling would.
   */
  explain(pod: Pod): PodExplanation {
    if (this.templates.length === 0)
      return { reason: 'nodepool requirements filtered out all available instance types' };
    const perNodePool: Record<string, string> = {};
    const fitsAlone: string[] = [];
    for (const tmpl of this.templates) {
      const failure = this.newClaimFailure(tmpl, pod);
      if (failure === undefined) fitsAlone.push(tmpl.pool.name);
      else perNodePool[tmpl.pool.name] = failure;
    }
    if (fitsAlone.length) {
      return {
        reason: `fits a new node from nodepool ${fitsAlone.join(', ')} on its own, but not together with the other pods of this batch (NodePool limits or topology constraints ran out)`,
        perNodePool,
      };
    }
    // Karpenter joins the NodePools' errors with "; " and names a NodePool as "(NodePool=name)".
    return {
      reason: Object.entries(perNodePool)
        .map(([p, e]) => `${e} (NodePool=${p})`)
        .join('; '),
      perNodePool,
    };
  }

  /** Why no version of the pod fits a new NodeClaim of the template, or undefined when one does. */
  private newClaimFailure(tmpl: Template, pod: Pod): string | undefined {
    const pool = tmpl.pool.name;
    const remaining = this.remaining.get(pool)!;
    if (remaining[NODES] !== undefined && remaining[NODES] <= 0)
      return `node limits have been exhausted for nodepool, limit ${tmpl.pool.limits[NODES]} nodes`;
    const its = tmpl.instanceTypes.filter((it) => withinLimits(it.capacity, remaining));
    if (!its.length) return `all available instance types exceed limits for nodepool, ${describeLimits(remaining)}`;
    let first = '';
    for (const p of this.versions(pod)) {
      const claim = this.newClaim(tmpl, its, -1);
      const r = claim.canAdd(
        p,
        podRequirements(p, this.input.options.preferencePolicy),
        this.topology,
        this.wellKnown,
        this.strictMinValues,
        this.dra,
      );
      if (r.ok) return undefined;
      if (!first) first = r.reason;
    }
    return first;
  }
}

/** The device allocation simulation of a solve (IgnoreDRARequests=false; engine/dra/allocator.ts). */
function draContext(input: ProvisionInput): DraContext {
  const allocator = new DeviceAllocator(input.dra ?? EMPTY_DRA);
  const claims = new Map<string, PodDra>();
  const publishing = new Set(
    (input.dra?.resourceSlices ?? []).flatMap((sl) => (sl.nodeName !== undefined ? [sl.nodeName] : [])),
  );
  return {
    allocator,
    // Until a launched node initializes (which waits for its drivers' pools), its instance type's device
    // templates stand for what it will publish, so later batches do not launch more nodes for the same devices.
    expectedDevices(node) {
      if (node.initialized || publishing.has(node.name)) return [];
      const type = node.labels['node.kubernetes.io/instance-type'];
      const it = (input.instanceTypes.get(node.nodePoolName ?? '') ?? []).find((t) => t.name === type);
      return it ? allocator.templateDevices(it, node.name) : [];
    },
    claimsOf(pod) {
      let d = claims.get(pod.uid);
      if (!d) {
        if (!hasDRA(pod)) d = { kind: 'none' };
        else {
          const r = allocator.podClaims(pod);
          d = r.ok ? { kind: 'claims', claims: r.claims } : { kind: 'error', reason: `DRA: ${r.reason}` };
        }
        claims.set(pod.uid, d);
      }
      return d;
    },
  };
}
