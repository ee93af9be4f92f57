// The reference provisioning solver: Karpenter's scheduling algorithm (spec/scheduling.md §2), written
// to be read, not to be fast. It is the oracle the wasm solver is tested against and the "Karpenter"
// baseline in benchmarks. Deterministic tie rules where upstream iterates Go maps are documented in
// docs/solver.md.
import type { Pod, Requirements, StateNode } from '../../domain/types.ts';
import { formatResourceValue, NODES, type Resources } from '../../domain/resources.ts';
import { WELL_KNOWN_LABELS } from '../../scheduling/labels.ts';
import { compareQueueOrder, isActive, optsOutOfKarpenter, podRequirements, podValidationError } from '../../scheduling/pods.ts';
import type { PodError, ProvisionInput, ProvisionPlan } from '../types.ts';
import { finalizeClaim } from './finalize.ts';
import { ExistingNode, resetHostnames, SimNodeClaim, type DraContext, type Reservations } from './nodes.ts';
import { ReservationManager } from './reservations.ts';
import { EMPTY_DRA } from '../../domain/dra.ts';
import { DeviceAllocator, hasDRA, type PodDra } from '../../dra/allocator.ts';
import { draRoute, ignoresDRA, withDraErrors } from '../dra.ts';
import { relax } from './preferences.ts';
import { buildTemplate, provisioningPools, type Template } from './templates.ts';
import { Topology, type TopologyNode } from './topology.ts';

// A node's active pods, once per pods array: snapshots are immutable, and a disruption call simulates the same
// nodes again and again (a candidate is a copy marked for deletion, with the same pods array).
const activePods = new WeakMap<readonly Pod[], readonly Pod[]>();

/** A node as topology sees it. */
function topologyNode(n: StateNode): TopologyNode {
  let pods = activePods.get(n.pods);
  if (!pods) activePods.set(n.pods, (pods = n.pods.filter(isActive)));
  return { name: n.name, labels: n.labels, taints: n.taints, pods };
}

type Attempt = { ok: true } | { ok: false; reason: string; perNodePool?: Record<string, string>; reservedOffering?: true };

export class ReferenceScheduler {
  readonly wellKnown: ReadonlySet<string>;
  readonly templates: Template[];
  readonly existing: ExistingNode[];
  readonly claims: SimNodeClaim[] = [];
  readonly topology: Topology;
  private readonly remaining = new Map<string, Record<string, number>>();
  private readonly strictMinValues: boolean;
  private readonly anyPreferNoSchedule: boolean;
  private claimSeq = 0;
  /** Reserved capacity shared by the NodeClaims of this solve (§2.15). */
  readonly reservations: Reservations;
  /** The device allocation simulation, when IgnoreDRARequests is off and some pod uses DRA. */
  readonly dra: DraContext | undefined;
  /** Relaxation chains by pod object: encoding, topology and the bound ask for the same chains. */
  private readonly chains = new WeakMap<Pod, Pod[]>();

  /**
   * `pods` are the pods to schedule; `representatives`, when given, is one pod per class of identical pods
   * (the wasm encoder passes it so that per-pod work is not repeated for thousands of replicas), and
   * `shapeOf` maps a pod to one of the same topology shape (see TopologyInput.shapeOf).
   */
  constructor(private readonly input: ProvisionInput, pods: readonly Pod[], representatives?: readonly Pod[], shapeOf?: (pod: Pod) => Pod) {
    this.wellKnown = input.wellKnownLabels ?? WELL_KNOWN_LABELS;
    this.strictMinValues = input.options.minValuesPolicy === 'Strict';
    const pools = provisioningPools(input.nodePools);
    this.templates = pools
      .map((p) => buildTemplate(p, input.instanceTypes.get(p.name) ?? [], input.daemonSets, this.wellKnown, this.strictMinValues))
      .filter((t) => t.instanceTypes.length > 0);
    this.reservations = {
      manager: new ReservationManager(pools.map((p) => input.instanceTypes.get(p.name) ?? [])),
      mode: input.reservedOfferingMode ?? 'Strict',
    };
    this.anyPreferNoSchedule = pools.some((p) => p.template.taints.some((t) => t.effect === 'PreferNoSchedule'));
    const active = input.nodes.filter((n) => !n.markedForDeletion && !n.deleting);
    this.existing = [...active]
      .sort((a, b) => Number(b.initialized) - Number(a.initialized) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((n) => new ExistingNode(n, input.daemonSets));
    for (const p of pools) this.remaining.set(p.name, remainingLimits(p.limits, active.filter((n) => n.nodePoolName === p.name)));
    this.topology = new Topology({
      nodePools: pools,
      instanceTypes: input.instanceTypes,
      nodes: input.nodes.map(topologyNode),
      pending: representatives ?? pods,
      ...(representatives ? { excluded: pods } : {}),
      policy: input.options.preferencePolicy,
      versionsOf: (pod) => this.versions(pod),
      ...(shapeOf ? { shapeOf } : {}),
    });
    for (const e of this.existing) this.topology.registerHostname(e.hostname);
    if (!ignoresDRA(input) && pods.some(hasDRA)) {
      const allocator = new DeviceAllocator(input.dra ?? EMPTY_DRA);
      const cache = new Map<string, PodDra>();
      const publishing = new Set((input.dra?.resourceSlices ?? []).flatMap((sl) => (sl.nodeName !== undefined ? [sl.nodeName] : [])));
      this.dra = {
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
          let d = cache.get(pod.uid);
          if (!d) {
            if (!hasDRA(pod)) d = { kind: 'none' };
            else {
              const r = allocator.podClaims(pod);
              d = r.ok ? { kind: 'claims', claims: r.claims } : { kind: 'error', reason: `DRA: ${r.reason}` };
            }
            cache.set(pod.uid, d);
          }
          return d;
        },
      };
    }
  }

  /** The pod and its successive relaxations (§2.17). */
  versions(pod: Pod): readonly Pod[] {
    let out = this.chains.get(pod);
    if (out) return out;
    out = [pod];
    this.chains.set(pod, out);
    for (let p = relax(pod, this.input.options.preferencePolicy, this.anyPreferNoSchedule); p; p = relax(p, this.input.options.preferencePolicy, this.anyPreferNoSchedule)) out.push(p);
    return out;
  }

  remainingLimits(pool: string): Readonly<Record<string, number>> | undefined {
    return this.remaining.get(pool);
  }

  /**
   * Why a pod cannot be placed, per NodePool, judged against this scheduler's current state without changing
   * it: the specific constraint that fails on a new NodeClaim from each pool (taint, requirement, resources,
   * offerings, limits, topology), relaxing preferences as scheduling would.
   */
  explain(pod: Pod): { reason: string; perNodePool?: Record<string, string> } {
    if (this.templates.length === 0) return { reason: 'nodepool requirements filtered out all available instance types' };
    const perNodePool: Record<string, string> = {};
    const fitsAlone: string[] = [];
    for (const tmpl of this.templates) {
      const pool = tmpl.pool.name;
      const remaining = this.remaining.get(pool)!;
      if (remaining[NODES] !== undefined && remaining[NODES] <= 0) {
        perNodePool[pool] = `node limit of nodepool ${pool} reached (${tmpl.pool.limits[NODES]} nodes)`;
        continue;
      }
      const its = tmpl.instanceTypes.filter((it) => withinLimits(it.capacity, remaining));
      if (!its.length) {
        perNodePool[pool] = `all instance types exceed the limits of nodepool ${pool} (${describeLimits(remaining)})`;
        continue;
      }
      let last = '';
      let ok = false;
      for (const p of this.versions(pod)) {
        const claim = new SimNodeClaim(tmpl, its, -1, this.reservations);
        const r = claim.canAdd(p, podRequirements(p, this.input.options.preferencePolicy), this.topology, this.wellKnown, this.strictMinValues, this.dra);
        if (r.ok) { ok = true; break; }
        if (!last) last = r.reason;
      }
      if (ok) fitsAlone.push(pool);
      else perNodePool[pool] = last;
    }
    if (fitsAlone.length) {
      return { reason: `fits a new node from nodepool ${fitsAlone.join(', ')} on its own, but not together with the other pods of this batch (NodePool limits or topology constraints ran out)`, perNodePool };
    }
    return { reason: Object.entries(perNodePool).map(([p, e]) => `nodepool ${p}: ${e}`).join('; '), perNodePool };
  }

  /** Runs the queue (§2.4) and returns the errors of pods left unplaced. */
  run(pods: readonly Pod[]): Map<string, Attempt & { ok: false }> {
    const queue = [...pods].sort(compareQueueOrder);
    const lastLen = new Map<string, number>();
    const errors = new Map<string, Attempt & { ok: false }>();
    while (queue.length) {
      const head = queue[0]!;
      if (lastLen.get(head.uid) === queue.length) break;
      queue.shift();
      const r = this.trySchedule(head);
      if (r.ok) {
        errors.delete(head.uid);
        continue;
      }
      errors.set(head.uid, r);
      this.topology.update(head);
      queue.push(head);
      lastLen.set(head.uid, queue.length);
    }
    return errors;
  }

  /** One visit: schedule, relaxing one preference at a time until it fits or nothing is left (§2.5). */
  private trySchedule(original: Pod): Attempt {
    // A DRA error (claims that cannot be evaluated) defers the pod without relaxation (§2.5).
    const dra = this.dra?.claimsOf(original);
    if (dra?.kind === 'error') return { ok: false, reason: dra.reason };
    let pod = original;
    for (;;) {
      const r = this.add(pod);
      if (r.ok) return r;
      // Waiting for reserved capacity is not a reason to relax preferences (§2.5).
      if (r.reservedOffering) return r;
      const relaxed = relax(pod, this.input.options.preferencePolicy, this.anyPreferNoSchedule);
      if (!relaxed) return r;
      pod = relaxed;
      this.topology.update(pod);
    }
  }

  private add(pod: Pod): Attempt {
    const reqs: Requirements = podRequirements(pod, this.input.options.preferencePolicy);
    const moved = this.input.consolidation?.movedPods.has(pod.uid) ?? false;
    let lastExisting: string | undefined;
    for (const node of this.existing) {
      if (moved && this.input.consolidation!.blockedDestinations.has(node.node.name)) continue;
      const r = node.canAdd(pod, reqs, this.topology, this.dra);
      if (!r.ok) {
        lastExisting = r.reason;
        continue;
      }
      node.add(pod, r.requirements);
      if (r.picks) this.dra!.allocator.commit(r.picks);
      this.topology.record(pod, { requirements: r.requirements, taints: node.taints });
      return { ok: true };
    }
    const inflight = [...this.claims].sort((a, b) => a.pods.length - b.pods.length || a.seq - b.seq);
    for (const claim of inflight) {
      const r = claim.canAdd(pod, reqs, this.topology, this.wellKnown, this.strictMinValues, this.dra);
      if (!r.ok) continue;
      claim.add(pod, r.requirements, r.instanceTypes!, { ...(r.reservations ? { reservations: r.reservations } : {}), ...(r.draDrivers ? { draDrivers: r.draDrivers } : {}) });
      if (r.picks) this.dra!.allocator.commit(r.picks);
      this.topology.record(pod, { requirements: r.requirements, taints: claim.template.pool.template.taints });
      return { ok: true };
    }
    if (this.templates.length === 0) return { ok: false, reason: 'nodepool requirements filtered out all available instance types' };
    const perNodePool: Record<string, string> = {};
    for (const tmpl of this.templates) {
      const pool = tmpl.pool.name;
      const remaining = this.remaining.get(pool)!;
      if (remaining[NODES] !== undefined && remaining[NODES] <= 0) {
        perNodePool[pool] = 'node limits have been exhausted';
        continue;
      }
      const its = tmpl.instanceTypes.filter((it) => withinLimits(it.capacity, remaining));
      if (!its.length) {
        perNodePool[pool] = `all available instance types exceed limits for nodepool ${describeLimits(remaining)}`;
        continue;
      }
      const claim = new SimNodeClaim(tmpl, its, this.claimSeq, this.reservations);
      const r = claim.canAdd(pod, reqs, this.topology, this.wellKnown, this.strictMinValues, this.dra);
      if (!r.ok) {
        perNodePool[pool] = r.reason;
        // Reserved capacity contended here: no fallback to lower-weight NodePools (§2.6).
        if (r.reservedOffering) return { ok: false, reason: `nodepool ${pool}: ${r.reason}`, perNodePool, reservedOffering: true };
        continue;
      }
      this.claimSeq++;
      claim.add(pod, r.requirements, r.instanceTypes!, { ...(r.reservations ? { reservations: r.reservations } : {}), ...(r.draDrivers ? { draDrivers: r.draDrivers } : {}) });
      if (r.picks) this.dra!.allocator.commit(r.picks);
      this.claims.push(claim);
      subtractMaxCapacity(remaining, claim);
      this.topology.registerHostname(claim.hostname);
      this.topology.record(pod, { requirements: r.requirements, taints: tmpl.pool.template.taints });
      return { ok: true };
    }
    const reason = Object.entries(perNodePool).map(([p, e]) => `nodepool ${p}: ${e}`).join('; ');
    void lastExisting;
    return { ok: false, reason, perNodePool };
  }
}

function remainingLimits(limits: Resources, nodes: readonly StateNode[]): Record<string, number> {
  const out: Record<string, number> = { ...limits };
  for (const n of nodes) {
    for (const k of Object.keys(out)) out[k] = out[k]! - (k === NODES ? 1 : (n.capacity[k] ?? 0));
  }
  return out;
}

function withinLimits(capacity: Resources, remaining: Resources): boolean {
  for (const [k, v] of Object.entries(remaining)) {
    if (k === NODES) continue;
    if ((capacity[k] ?? 0) > v) return false;
  }
  return true;
}

function describeLimits(remaining: Resources): string {
  return Object.entries(remaining).filter(([k]) => k !== NODES).map(([k, v]) => `${k} remaining ${formatResourceValue(k, Math.max(v, 0))}`).join(', ');
}

/**
 * A committed NodeClaim pessimistically consumes the largest capacity among its options (§2.13), and one
 * node. (Karpenter's scheduler leaves `nodes` to a check at NodeClaim creation; counting it here keeps a
 * plan within the limit instead of planning NodeClaims that creation would refuse.)
 */
function subtractMaxCapacity(remaining: Record<string, number>, claim: SimNodeClaim): void {
  for (const k of Object.keys(remaining)) {
    if (k === NODES) {
      remaining[k] = remaining[k]! - 1;
      continue;
    }
    let m = 0;
    for (const it of claim.instanceTypes) m = Math.max(m, it.capacity[k] ?? 0);
    remaining[k] = remaining[k]! - m;
  }
}

/** Solves with Karpenter's algorithm. */
export function solveReference(full: ProvisionInput): ProvisionPlan {
  // IgnoreDRARequests (the default): DRA pods get the DRA error, DRA daemon pods add no overhead (solver/dra.ts).
  const route = draRoute(full);
  if (route.kind === 'stripped') return withDraErrors(solveReference(route.input), route.errors);
  const input = full;
  const ignored: PodError[] = [];
  const pods: Pod[] = [];
  for (const p of input.pods) {
    if (optsOutOfKarpenter(p)) continue;
    const invalid = podValidationError(p);
    if (invalid) ignored.push({ uid: p.uid, reason: invalid });
    else pods.push(p);
  }
  resetHostnames();
  const s = new ReferenceScheduler(input, pods);
  const errors = s.run(pods);
  const unschedulable: PodError[] = [];
  for (const [uid, e] of errors) unschedulable.push({ uid, reason: e.reason, ...(e.perNodePool ? { perNodePool: e.perNodePool } : {}), ...(e.reservedOffering ? { reservedOffering: true as const } : {}) });
  const newNodeClaims = [];
  for (const c of s.claims) {
    const f = finalizeClaim(c, input.options, s.wellKnown, c.held);
    if (f.ok) newNodeClaims.push(f.claim);
    else for (const p of c.pods) unschedulable.push({ uid: p.uid, reason: f.reason });
  }
  const existing = new Map<string, string[]>();
  for (const e of s.existing) if (e.added.length) existing.set(e.node.name, e.added.map((p) => p.uid));
  return {
    existing,
    newNodeClaims,
    unschedulable,
    ignored,
    costPerHour: newNodeClaims.reduce((acc, c) => acc + c.price, 0),
  };
}
