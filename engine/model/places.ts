// The places a pod can go: an existing (or in-flight) node, whose size is fixed, and a new NodeClaim, which
// keeps every instance type that can still hold its pods. The encoder reads their starting state; the
// reference solver places pods on them and explanations ask them why a pod does not fit.
import type {
  DaemonSet,
  HostPort,
  InstanceType,
  Labels,
  Pod,
  Requirement,
  Requirements,
  Resources,
  StateNode,
  Taint,
} from '../domain/types.ts';
import { add as addResources, fits, firstExceeded, subtract } from '../domain/resources.ts';
import { HOSTNAME_LABEL } from '../scheduling/labels.ts';
import { isTerminal, strictPodRequirements } from '../scheduling/pods.ts';
import {
  add,
  compatible,
  fromLabels,
  fromSelector,
  req,
  requirements as requirementsOf,
} from '../scheduling/requirements.ts';
import { firstUntolerated, formatTaint, isKnownEphemeralTaint, toleratesAll } from '../scheduling/taints.ts';
import type { DaemonGroup, Template } from './templates.ts';
import { minValuesNotMet } from '../scheduling/minvalues.ts';
import { filterInstanceTypes, minValuesUnmet, minValuesUnmetKeys } from './templates.ts';
import type { Topology } from './topology.ts';
import { checkReservations, type ReservationManager, type ReservedOfferingMode } from './reservations.ts';
import { allocateForNewNode, type DeviceAllocator, type DeviceRef, type Pick, type PodDra } from '../dra/allocator.ts';
import { cacheSlot, type ModelCaches } from './caches.ts';

export type AddResult =
  | {
      ok: true;
      requirements: Requirements;
      instanceTypes?: InstanceType[];
      reservations?: ReadonlySet<string>;
      picks?: Pick[];
      draDrivers?: Map<string, Set<string>>;
    }
  | { ok: false; reason: string; reservedOffering?: true };

/** The reservation manager a solve's NodeClaims share, and how strictly they keep reserved capacity (§2.15). */
export interface Reservations {
  readonly manager: ReservationManager;
  readonly mode: ReservedOfferingMode;
}

/** The device allocation simulation of a solve (IgnoreDRARequests=false), see engine/dra/allocator.ts. */
export interface DraContext {
  readonly allocator: DeviceAllocator;
  claimsOf(pod: Pod): PodDra;
  /** An in-flight node that publishes nothing yet: the devices its instance type will publish. */
  expectedDevices(node: StateNode): DeviceRef[];
}

export function hostPortsConflict(a: readonly HostPort[], b: readonly HostPort[]): HostPort | undefined {
  for (const x of a) {
    for (const y of b) {
      if (x.port !== y.port || x.protocol !== y.protocol) continue;
      const unspec = (ip: string) => ip === '' || ip === '0.0.0.0' || ip === '::';
      if (x.ip === y.ip || unspec(x.ip) || unspec(y.ip)) return x;
    }
  }
  return undefined;
}

/** Taints that apply to scheduling on a node: ephemeral and startup taints are ignored until initialized. */
function effectiveTaints(node: StateNode): Taint[] {
  if (node.initialized) return [...node.taints];
  return node.taints.filter(
    (t) => !isKnownEphemeralTaint(t) && !node.startupTaints.some((s) => s.key === t.key && s.effect === t.effect),
  );
}

function volumeAlternatives(pod: Pod): ReadonlyArray<Requirements | undefined> {
  const alts = pod.volumeRequirements;
  if (!alts?.length) return [undefined];
  return alts.map((a) => add(new Map(), ...a.map(fromSelector)));
}

/** What an existing node offers before a solve places anything: a function of the node and the daemonsets only. */
interface NodeStart {
  readonly daemonSets: readonly DaemonSet[];
  readonly hostname: string;
  readonly requirements: Requirements;
  readonly remaining: Readonly<Record<string, number>>;
  readonly taints: readonly Taint[];
  readonly hostPorts: readonly HostPort[];
}

// Snapshots are immutable and a disruption call simulates the same node objects over and over (only the
// candidates change): the starting state is computed once per node object and daemonset list.
const NODE_START = cacheSlot<StateNode, NodeStart>('node start');

export function nodeStart(node: StateNode, daemonSets: readonly DaemonSet[], caches?: ModelCaches): NodeStart {
  const cached = caches?.get(NODE_START, node);
  if (cached && cached.daemonSets === daemonSets) return cached;
  const shared = caches?.memo(LABEL_REQUIREMENTS, LABEL_REQUIREMENTS, () => new LabelRequirements());
  const start = computeNodeStart(node, daemonSets, shared);
  caches?.set(NODE_START, node, start);
  return start;
}

/**
 * The requirements `key In [value]` of node labels, one object for each label and value whichever node carries
 * it. Made per node, a node's 30 labels were 30 requirements with a set each, about 7 KiB a node that NODE_START
 * keeps for the node's life (35 MiB at 5,000 nodes); requirements are never written to once made. The hostname,
 * which no two nodes share, is not kept; the table starts afresh once it holds more than MAX_SHARED (labels
 * of nodes long gone).
 */
class LabelRequirements {
  private static readonly MAX_SHARED = 20_000;
  private readonly byKey = new Map<string, Map<string, Requirement>>();
  private size = 0;

  /** The labels' requirements, then `last` added to them (a node's own hostname), in one map. */
  of(labels: Labels, last: Requirement): Requirements {
    if (this.size > LabelRequirements.MAX_SHARED) {
      this.byKey.clear();
      this.size = 0;
    }
    const list: Requirement[] = [];
    for (const k in labels) {
      const v = labels[k]!;
      if (k === HOSTNAME_LABEL) {
        list.push(req(k, false, [v]));
        continue;
      }
      let values = this.byKey.get(k);
      if (!values) this.byKey.set(k, (values = new Map()));
      let r = values.get(v);
      if (!r) {
        values.set(v, (r = req(k, false, [v])));
        this.size++;
      }
      list.push(r);
    }
    list.push(last);
    return requirementsOf(...list);
  }
}

// The table of shared label requirements: one per ModelCaches, keyed by the slot itself.
const LABEL_REQUIREMENTS = cacheSlot<object, LabelRequirements>('label requirements');

function computeNodeStart(node: StateNode, daemonSets: readonly DaemonSet[], shared?: LabelRequirements): NodeStart {
  const hostname = node.labels[HOSTNAME_LABEL] ?? node.name;
  const own = req(HOSTNAME_LABEL, false, [hostname]);
  const requirements = shared ? shared.of(node.labels, own) : add(fromLabels(node.labels), own);
  const hostPorts: HostPort[] = [];
  const bound = node.pods.filter((p) => !isTerminal(p));
  // One record for the whole sum (as subtract() would, key by key), not a copy per pod.
  let remaining: Resources = { ...node.allocatable };
  const sum = remaining as Record<string, number>;
  for (const p of bound) {
    for (const k in p.requests) sum[k] = (sum[k] ?? 0) - p.requests[k]!;
    if (p.hostPorts.length) hostPorts.push(...p.hostPorts);
  }
  // Daemonset pods still to come: compatible daemonsets without a pod on this node yet.
  for (const ds of daemonSets) {
    const has = bound.some(
      (p) => p.owner?.kind === 'DaemonSet' && p.owner.name === ds.name && p.namespace === ds.namespace,
    );
    if (has) continue;
    if (!toleratesAll(ds.pod.tolerations, node.taints)) continue;
    if (compatible(requirements, strictPodRequirements(ds.pod)) !== undefined) continue;
    remaining = subtract(remaining, ds.pod.requests);
  }
  const clamped: Record<string, number> = { ...remaining };
  for (const k of Object.keys(clamped)) if (clamped[k]! < 0) clamped[k] = 0;
  return { daemonSets, hostname, requirements, remaining: clamped, taints: effectiveTaints(node), hostPorts };
}

export class ExistingNode {
  readonly hostname: string;
  requirements: Requirements;
  remaining: Readonly<Record<string, number>>;
  readonly taints: readonly Taint[];
  hostPorts: readonly HostPort[];
  readonly added: Pod[] = [];

  /** `start`: the node's nodeStart when the caller has it (a node table's). */
  constructor(
    readonly node: StateNode,
    daemonSets: readonly DaemonSet[],
    caches?: ModelCaches,
    start: NodeStart = nodeStart(node, daemonSets, caches),
  ) {
    this.hostname = start.hostname;
    // The start state is shared, not copied (the encoder builds thousands of these per solve and reads
    // them only): a solve replaces requirements, remaining and host ports on add() and never writes into them.
    this.requirements = start.requirements;
    this.remaining = start.remaining;
    this.taints = start.taints;
    this.hostPorts = start.hostPorts;
  }

  canAdd(pod: Pod, podReqs: Requirements, topology: Topology, dra?: DraContext): AddResult {
    const t = firstUntolerated(pod.tolerations, this.taints);
    if (t) return { ok: false, reason: `did not tolerate taint (taint=${formatTaint(t)})` };
    const port = hostPortsConflict(pod.hostPorts, this.hostPorts);
    if (port) return { ok: false, reason: `host port ${port.port}/${port.protocol} is in use` };
    if (!fits(pod.requests, this.remaining))
      return { ok: false, reason: `exceeds node resources (${firstExceeded(pod.requests, this.remaining)})` };
    const incompatible = compatible(this.requirements, podReqs);
    if (incompatible) return { ok: false, reason: `incompatible requirements, ${incompatible}` };
    let last = 'incompatible volume requirements';
    for (const alt of volumeAlternatives(pod)) {
      let reqs = this.requirements;
      if (alt) {
        const e = compatible(reqs, alt);
        if (e) {
          last = `incompatible volume requirements, ${e}`;
          continue;
        }
        reqs = add(reqs, ...alt.values());
      }
      const topo = topology.addRequirements(pod, strictPodRequirements(pod), {
        requirements: reqs,
        taints: this.taints,
      });
      if (!topo.ok) {
        last = topo.reason;
        continue;
      }
      const out = add(topo.requirements, ...podReqs.values());
      const claims = dra?.claimsOf(pod);
      if (claims?.kind === 'error') return { ok: false, reason: claims.reason };
      if (claims?.kind === 'claims') {
        const candidates = [
          ...dra!.expectedDevices(this.node),
          ...dra!.allocator.reachable(this.node.name, this.requirements),
        ];
        const a = dra!.allocator.allocate(claims.claims, candidates, this.node.name, this.requirements, this.node.name);
        if (!a.ok) {
          last = a.reason;
          continue;
        }
        return { ok: true, requirements: out, picks: a.picks };
      }
      return { ok: true, requirements: out };
    }
    return { ok: false, reason: last };
  }

  add(pod: Pod, requirements: Requirements): void {
    this.added.push(pod);
    this.remaining = subtract(this.remaining, pod.requests);
    this.requirements = requirements;
    if (pod.hostPorts.length) this.hostPorts = [...this.hostPorts, ...pod.hostPorts];
  }
}

/** The placeholder hostname of the n-th NodeClaim a solve tries (names depend only on the solve). */
export const placeholderHostname = (n: number): string => `hostname-placeholder-${String(n).padStart(4, '0')}`;

/** Why one volume alternative fails; `final`: no other alternative can do better. */
type AltFailure = { ok: false; reason: string; reservedOffering?: true; final?: true };

export class SimNodeClaim {
  readonly hostname: string;
  requirements: Requirements;
  instanceTypes: InstanceType[];
  requests: Record<string, number> = {};
  readonly pods: Pod[] = [];
  readonly hostPorts: HostPort[] = [];
  readonly seq: number;
  /** Per instance type: drivers of the node-local (template) devices its pods were allocated. */
  readonly draDrivers = new Map<string, Set<string>>();

  constructor(
    readonly template: Template,
    instanceTypes: InstanceType[],
    seq: number,
    hostname: string,
    readonly reservations?: Reservations,
  ) {
    this.hostname = hostname;
    this.requirements = add(template.requirements, req(HOSTNAME_LABEL, false, [this.hostname]));
    this.instanceTypes = instanceTypes;
    this.seq = seq;
  }

  canAdd(
    pod: Pod,
    podReqs: Requirements,
    topology: Topology,
    wellKnown: ReadonlySet<string>,
    strictMinValues: boolean,
    dra?: DraContext,
  ): AddResult {
    const conflict = this.firstConflict(pod, podReqs, wellKnown);
    if (conflict) return { ok: false, reason: conflict };
    const merged = add(this.requirements, ...podReqs.values());
    let last = 'incompatible volume requirements';
    let reservedOffering = false;
    for (const alt of volumeAlternatives(pod)) {
      const r = this.canAddWith(pod, merged, alt, topology, wellKnown, strictMinValues, dra);
      if (r.ok) return r;
      if (r.final) return { ok: false, reason: r.reason };
      last = r.reason;
      reservedOffering = r.reservedOffering === true;
    }
    return reservedOffering ? { ok: false, reason: last, reservedOffering: true } : { ok: false, reason: last };
  }

  /** Why the pod cannot join whatever its volumes: an untolerated taint, a host port, requirements; else undefined. */
  private firstConflict(pod: Pod, podReqs: Requirements, wellKnown: ReadonlySet<string>): string | undefined {
    const t = firstUntolerated(pod.tolerations, this.template.pool.template.taints);
    if (t) return `did not tolerate taint (taint=${formatTaint(t)})`;
    const port = hostPortsConflict(pod.hostPorts, this.hostPorts);
    if (port) return `host port ${port.port}/${port.protocol} is in use`;
    const incompatible = compatible(this.requirements, podReqs, wellKnown);
    if (incompatible) return `incompatible requirements, ${incompatible}`;
    return undefined;
  }

  /**
   * Whether the pod can join with one of its volume alternatives (`merged`: the claim's and the pod's
   * requirements): volume topology, spread and affinity, the instance types that still hold it, devices,
   * minValues, reserved capacity. `final`: no other alternative can do better (the pod's DRA claims fail).
   */
  private canAddWith(
    pod: Pod,
    merged: Requirements,
    alt: Requirements | undefined,
    topology: Topology,
    wellKnown: ReadonlySet<string>,
    strictMinValues: boolean,
    dra: DraContext | undefined,
  ): Extract<AddResult, { ok: true }> | AltFailure {
    let reqs = merged;
    if (alt) {
      const e = compatible(reqs, alt, wellKnown);
      if (e) return { ok: false, reason: `incompatible volume requirements, ${e}` };
      reqs = add(reqs, ...alt.values());
    }
    const topo = topology.addRequirements(pod, strictPodRequirements(pod), {
      requirements: reqs,
      taints: this.template.pool.template.taints,
    });
    if (!topo.ok) return { ok: false, reason: topo.reason };
    const total = addResources(this.requests, pod.requests);
    const conflict = (g: DaemonGroup) =>
      g.daemons.some((d) => hostPortsConflict(pod.hostPorts, d.hostPorts) !== undefined);
    const filtered = filterInstanceTypes(this.template, this.instanceTypes, topo.requirements, total, conflict);
    if (!filtered.kept.length) return { ok: false, reason: filtered.reason! };
    const devices = this.withDevices(pod, filtered.kept, topo.requirements, total, conflict, dra);
    if (!devices.ok) return devices;
    const { kept } = devices;
    reqs = devices.reqs;
    if (strictMinValues && minValuesUnmet(reqs, kept))
      return { ok: false, reason: minValuesNotMet(minValuesUnmetKeys(reqs, kept)) };
    const dr = {
      ...(devices.picks ? { picks: devices.picks } : {}),
      ...(devices.draDrivers ? { draDrivers: devices.draDrivers } : {}),
    };
    if (!this.reservations) return { ok: true, requirements: reqs, instanceTypes: kept, ...dr };
    const r = checkReservations(this.reservations.manager, this.reservations.mode, this.hostname, reqs, kept);
    if (!r.ok) return { ok: false, reason: r.reason, reservedOffering: true };
    return { ok: true, requirements: reqs, instanceTypes: kept, reservations: r.held, ...dr };
  }

  /**
   * The DRA instance-type filter (§2.8 step 5): the types whose devices can hold the pod's claims; a device
   * reached through a slice's node selector narrows the requirements, and the types are filtered again
   * against them. Without claims, the types and requirements as they are.
   */
  private withDevices(
    pod: Pod,
    kept: InstanceType[],
    reqs: Requirements,
    total: Record<string, number>,
    conflict: (g: DaemonGroup) => boolean,
    dra: DraContext | undefined,
  ):
    | {
        ok: true;
        kept: InstanceType[];
        reqs: Requirements;
        picks?: Pick[];
        draDrivers?: Map<string, Set<string>>;
      }
    | { ok: false; reason: string; final?: true } {
    const claims = dra?.claimsOf(pod);
    if (claims?.kind === 'error') return { ok: false, reason: claims.reason, final: true };
    if (claims?.kind !== 'claims') return { ok: true, kept, reqs };
    const a = allocateForNewNode(dra!.allocator, claims.claims, kept, reqs, this.hostname);
    if (!a.ok) return { ok: false, reason: a.reason };
    let types = a.kept;
    if (a.requirements !== reqs) {
      const again = filterInstanceTypes(this.template, types, a.requirements, total, conflict);
      if (!again.kept.length) return { ok: false, reason: again.reason! };
      types = again.kept;
    }
    return { ok: true, kept: types, reqs: a.requirements, picks: a.picks, draDrivers: a.driversByType };
  }

  /** The reservation IDs this NodeClaim holds. */
  get held(): ReadonlySet<string> {
    return this.reservations?.manager.heldBy(this.hostname) ?? new Set();
  }

  add(
    pod: Pod,
    requirements: Requirements,
    instanceTypes: InstanceType[],
    extra: { reservations?: ReadonlySet<string>; draDrivers?: ReadonlyMap<string, ReadonlySet<string>> } = {},
  ): void {
    if (this.reservations && extra.reservations) this.reservations.manager.commit(this.hostname, extra.reservations);
    for (const [it, ds] of extra.draDrivers ?? []) {
      let set = this.draDrivers.get(it);
      if (!set) this.draDrivers.set(it, (set = new Set()));
      for (const d of ds) set.add(d);
    }
    this.pods.push(pod);
    this.requirements = requirements;
    this.instanceTypes = instanceTypes;
    this.requests = addResources(this.requests, pod.requests);
    this.hostPorts.push(...pod.hostPorts);
  }
}
