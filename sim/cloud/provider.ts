// The simulated cloud: Karpenter's CloudProvider over the real EC2 catalog and prices of one region.
// create() answers at once with a pending instance (as CreateFleet does) and boots it after `launchMs` of
// clock time by handing it to the simulated kubelet, which registers the Node. Scenarios inject capacity
// errors per offering (blockCapacity) and interruptions (interrupt); failed offerings go to the 3-minute
// unavailable-offerings cache that getInstanceTypes applies. Capacity reservations of the simulated account
// (network.ts) that a node class's status lists become reserved offerings (gate ReservedCapacity) priced like
// the AWS provider's (on-demand / 10,000,000) with the reservation's free count; a launch into one takes an
// instance from it and termination gives it back.
import {
  CAPACITY_RESERVATION_ID_LABEL,
  CAPACITY_RESERVATION_INTERRUPTIBLE_LABEL,
  CAPACITY_RESERVATION_TYPE_LABEL,
  ec2InstanceTypes,
  formatResourceValue,
  INSTANCE_TYPE_LABEL,
  nonZero,
  reqs,
  singleValueLabels,
  type Offering,
  type EC2NodeClass,
  type InstanceType,
  type NodePool,
  type Resources,
} from '../../engine/index.ts';
import type { Clock, Timer } from '../../controller/operator/clock.ts';
import {
  InsufficientCapacityError,
  NodeClaimNotFoundError,
  NodeClassNotReadyError,
  type CloudProvider,
  type DriftQuery,
  type RepairPolicy,
  type NodeClassProvider,
  type DriftReason,
  type Instance,
  type InterruptionEvent,
  type LaunchRequest,
  type UnavailableOffering,
} from '../../controller/cloudprovider/types.ts';
import { AWS_REPAIR_POLICIES } from '../../controller/cloudprovider/aws/repair.ts';
import { UnavailableOfferings } from './ice.ts';
import { SimInterruptions } from './interruptions.ts';
import { simImageId, type SimCapacityReservation, type SimNetwork } from './network.ts';
import { simNodeClasses } from './nodeclass-status.ts';
import {
  capacitySettingsOf,
  NODECLASS_HASH_ANNOTATION,
  NODECLASS_HASH_VERSION,
  NODECLASS_HASH_VERSION_ANNOTATION,
  nodeClassHash,
} from './nodeclass.ts';
import { selectOfferings, type Candidate } from './offerings.ts';

/** What the provider needs of the simulated kubelets (sim/cluster/kubelet.ts implements it). */
export interface SimKubeletPort {
  registerInstance(spec: {
    providerID: string;
    nodeName: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    taints?: readonly { key: string; value?: string; effect: string }[];
    startupTaints?: readonly { key: string; value?: string; effect: string }[];
    capacity: Record<string, string>;
    allocatable: Record<string, string>;
  }): void;
  terminateInstance(providerID: string): void;
}

type SimInterruptionKind =
  | 'spotInterruption'
  | 'scheduledChange'
  | 'rebalanceRecommendation'
  | 'capacityReservationInterruption'
  | 'stateChange';

/** An offering (or a set of them: omitted fields match all) that has no capacity. */
interface CapacityRule {
  readonly instanceType?: string;
  readonly zone?: string;
  readonly capacityType?: string;
}

interface SimCloudOptions {
  readonly clock: Clock;
  readonly kubelet: SimKubeletPort;
  /** Default ap-northeast-2, the guide's region. */
  readonly region?: string;
  /** The node class by name (from cluster state); without it every launch is refused as not ready. */
  readonly nodeClass: (name: string) => EC2NodeClass | undefined;
  /** Zones the node class's subnets cover (default: every zone of the region). */
  readonly zonesOf?: (nc: EC2NodeClass) => readonly string[];
  /** CreateFleet to instance running (default 2 s); the kubelet adds its own boot-to-registration delay. */
  readonly launchMs?: number;
  /** Terminate call to the instance being gone (default 5 s). */
  readonly terminateMs?: number;
  /** Spot interruption warning to reclaim (default 2 min, as EC2 gives). */
  readonly spotReclaimMs?: number;
  /** The simulated account: with it the provider resolves EC2NodeClass status (nodeClasses). */
  readonly network?: SimNetwork;
  /** Feature gate ReservedCapacity (default on): reservations are resolved and offered. */
  readonly reservedCapacity?: boolean;
}

const RESERVATION_LABELS = [
  CAPACITY_RESERVATION_ID_LABEL,
  CAPACITY_RESERVATION_TYPE_LABEL,
  CAPACITY_RESERVATION_INTERRUPTIBLE_LABEL,
];

/** A candidate that could not launch, as CreateFleet reports it. */
const unavailable = (c: Candidate, code: string): UnavailableOffering => ({
  instanceType: c.type.name,
  zone: c.offering.zone,
  capacityType: c.offering.capacityType,
  code,
});

interface SimInstance {
  instance: Instance;
  nodeName: string;
  price: number;
  /** The NodeClaim it was launched for: the simulator's own knowledge (drills check one instance per NodeClaim). */
  readonly launchedFor: string;
  timer?: Timer;
  /** The reservation it was launched into, until its termination gives the instance back. */
  reservation?: SimCapacityReservation;
}

export class SimCloudProvider implements CloudProvider {
  readonly name = 'sim';
  readonly region: string;
  readonly ice: UnavailableOfferings;
  readonly interruptions: SimInterruptions;
  readonly nodeClasses?: NodeClassProvider;
  private readonly instances = new Map<string, SimInstance>();
  private readonly rules: CapacityRule[] = [];
  private seq = 0;
  private rotation = 0;

  constructor(private readonly opts: SimCloudOptions) {
    this.region = opts.region ?? 'ap-northeast-2';
    this.ice = new UnavailableOfferings(opts.clock);
    this.interruptions = new SimInterruptions({
      clock: opts.clock,
      // What Karpenter's interruption controller does with its unavailable-offerings cache: the interrupted
      // spot offering (or reserved capacity) is not offered again for the cache's 3 minutes.
      onUnavailable: (_event, c) => {
        if (c.instanceType && c.zone && c.capacityType) this.ice.mark(c.capacityType, c.instanceType, c.zone);
      },
    });
    if (opts.network) this.nodeClasses = simNodeClasses(opts.network, opts.clock, opts.reservedCapacity ?? true);
  }

  async create(req: LaunchRequest): Promise<Instance> {
    const nc = this.opts.nodeClass(req.nodeClassName);
    if (!nc) throw new NodeClassNotReadyError(`EC2NodeClass ${req.nodeClassName} not found`);
    if (!nc.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True'))
      throw new NodeClassNotReadyError(`EC2NodeClass ${req.nodeClassName} is not ready`);
    const own = this.typesFor(nc);
    const sel = selectOfferings(req.overlay ? req.overlay(own) : own, req, (ct, it, z) =>
      this.ice.isUnavailable(ct, it, z),
    );
    if (!sel.ok) throw new InsufficientCapacityError(`launching nodeclaim ${req.nodeClaimName}: ${sel.reason}`);
    const failed: UnavailableOffering[] = [];
    for (const c of this.spreadTies(sel.candidates)) {
      const reservation = this.reservationOf(c);
      if (reservation && reservation.available <= 0) {
        failed.push(unavailable(c, 'ReservationCapacityExceeded'));
        continue;
      }
      if (this.blocked(c)) {
        failed.push(unavailable(c, 'InsufficientInstanceCapacity'));
        this.ice.mark(c.offering.capacityType, c.type.name, c.offering.zone);
        continue;
      }
      return this.launch(req, nc, c, billedPrice(own, c), reservation);
    }
    throw new InsufficientCapacityError(
      `launching nodeclaim ${req.nodeClaimName}: all ${failed.length} ${sel.capacityType} offerings had insufficient capacity`,
      failed,
    );
  }

  async delete(providerID: string): Promise<void> {
    const inst = this.live(providerID);
    if (inst.instance.state === 'shutting-down') return;
    this.terminate(inst, this.opts.terminateMs ?? 5_000);
  }

  async get(providerID: string): Promise<Instance> {
    return this.live(providerID).instance;
  }

  async list(): Promise<Instance[]> {
    return [...this.instances.values()].filter((i) => i.instance.state !== 'terminated').map((i) => i.instance);
  }

  async getInstanceTypes(nodePool: NodePool): Promise<InstanceType[]> {
    const nc = this.opts.nodeClass(nodePool.template.nodeClassRef.name);
    const types = nc ? this.typesFor(nc) : [];
    if (!this.ice.entries().length) return types;
    return types.map((it) => {
      if (!it.offerings.some((o) => o.available && this.ice.isUnavailable(o.capacityType, it.name, o.zone))) return it;
      return {
        ...it,
        offerings: it.offerings.map((o) =>
          o.available && this.ice.isUnavailable(o.capacityType, it.name, o.zone) ? { ...o, available: false } : o,
        ),
      };
    });
  }

  async isDrifted(q: DriftQuery): Promise<DriftReason | undefined> {
    const nc = this.opts.nodeClass(q.nodeClassName);
    const launched = q.annotations[NODECLASS_HASH_ANNOTATION];
    if (!nc || !launched || q.annotations[NODECLASS_HASH_VERSION_ANNOTATION] !== NODECLASS_HASH_VERSION)
      return undefined;
    return launched === nodeClassHash(nc) ? undefined : 'NodeClassDrift';
  }

  /** The simulated cloud is EC2: the AWS provider's repair policies. */
  repairPolicies(): readonly RepairPolicy[] {
    return AWS_REPAIR_POLICIES;
  }

  // ---- simulator controls -------------------------------------------------------------------------

  /** Offerings matching the rule fail with InsufficientInstanceCapacity until unblocked. */
  blockCapacity(rule: CapacityRule): void {
    this.rules.push(rule);
  }

  unblockCapacity(): void {
    this.rules.length = 0;
  }

  /**
   * Sends an interruption for a running instance, as EC2 (through EventBridge) would. A spot interruption
   * reclaims the instance after the 2-minute warning; a state change to stopping/stopped/shutting-down/
   * terminated happens to the instance now (its node goes NotReady). The controller's handling marks the
   * offering unavailable (markUnavailable above).
   */
  interrupt(
    providerID: string,
    kind: SimInterruptionKind = 'spotInterruption',
    opts: { state?: string } = {},
  ): InterruptionEvent {
    const inst = this.live(providerID);
    const base = {
      id: `sim-interruption-${++this.seq}`,
      instanceIds: [providerID.split('/').pop()!],
      time: this.opts.clock.now(),
    };
    const event: InterruptionEvent =
      kind === 'stateChange' ? { ...base, kind, state: opts.state ?? 'terminated' } : { ...base, kind };
    if (kind === 'spotInterruption') {
      inst.timer?.cancel();
      inst.timer = this.opts.clock.setTimer(this.opts.spotReclaimMs ?? 120_000, () => {
        if (inst.instance.state !== 'terminated' && inst.instance.state !== 'shutting-down') this.terminate(inst, 0);
      });
    }
    if (event.kind === 'stateChange' && ['stopping', 'stopped', 'shutting-down', 'terminated'].includes(event.state)) {
      this.terminate(
        inst,
        event.state === 'terminated' || event.state === 'stopped' ? 0 : (this.opts.terminateMs ?? 5_000),
      );
    }
    this.interruptions.push(event);
    return event;
  }

  /** Every instance ever launched, with its node name, price and NodeClaim (for the simulator's tables and drills). */
  all(): ReadonlyArray<{
    readonly instance: Instance;
    readonly nodeName: string;
    readonly price: number;
    readonly launchedFor: string;
  }> {
    return [...this.instances.values()];
  }

  priceOf(providerID: string): number | undefined {
    return this.instances.get(providerID)?.price;
  }

  // ---- internals ----------------------------------------------------------------------------------

  private typesFor(nc: EC2NodeClass): InstanceType[] {
    const zones = this.opts.zonesOf?.(nc);
    const types = ec2InstanceTypes({
      region: this.region,
      ...(zones && zones.length ? { zones } : {}),
      settings: capacitySettingsOf(nc),
    });
    // The AWS provider's node-class compatibility check (docs/karpenter/aws-provider.md §3): no a1 with AL2023.
    const compatible = nc.amiFamily === 'AL2023' ? types.filter((t) => !t.name.startsWith('a1.')) : types;
    const reservations = this.reservationsOf(nc, zones);
    if (!reservations.length) return compatible;
    return compatible.map((it) =>
      this.withReservations(
        it,
        reservations.filter((r) => r.instanceType === it.name),
      ),
    );
  }

  /** The account's reservations the node class's status lists, in zones it can launch into. */
  private reservationsOf(nc: EC2NodeClass, zones: readonly string[] | undefined): SimCapacityReservation[] {
    if (!(this.opts.reservedCapacity ?? true) || !this.opts.network || !nc.status.capacityReservations.length)
      return [];
    const listed = new Set(nc.status.capacityReservations.map((r) => r.id));
    return this.opts.network.capacityReservations.filter(
      (r) => listed.has(r.id) && (!zones?.length || zones.includes(r.zone)),
    );
  }

  private withReservations(it: InstanceType, reservations: readonly SimCapacityReservation[]): InstanceType {
    const onDemand = it.offerings.find((o) => o.capacityType === 'on-demand');
    if (!reservations.length || !onDemand) return it;
    const reserved = reservations.map(
      (r): Offering => ({
        zone: r.zone,
        ...(it.offerings.find((o) => o.zone === r.zone)?.zoneId
          ? { zoneId: it.offerings.find((o) => o.zone === r.zone)!.zoneId! }
          : {}),
        capacityType: 'reserved',
        price: onDemand.price / 10_000_000,
        available: r.available > 0,
        reservationId: r.id,
        reservationCapacity: r.available,
      }),
    );
    const requirements = new Map(it.requirements);
    for (const k of RESERVATION_LABELS) requirements.delete(k);
    const values = (f: (r: SimCapacityReservation) => string) => [...new Set(reservations.map(f))].sort();
    const ct = it.requirements.get('karpenter.sh/capacity-type');
    if (ct && !ct.complement)
      requirements.set(ct.key, reqs.req(ct.key, false, [...new Set([...ct.values, 'reserved'])]));
    return {
      ...it,
      requirements: reqs.add(
        requirements,
        reqs.req(
          CAPACITY_RESERVATION_ID_LABEL,
          false,
          values((r) => r.id),
        ),
        reqs.req(
          CAPACITY_RESERVATION_TYPE_LABEL,
          false,
          values((r) => r.reservationType),
        ),
        reqs.req(CAPACITY_RESERVATION_INTERRUPTIBLE_LABEL, false, ['false']),
      ),
      offerings: [...it.offerings, ...reserved],
    };
  }

  private blocked(c: Candidate): boolean {
    return this.rules.some(
      (r) =>
        (!r.instanceType || r.instanceType === c.type.name) &&
        (!r.zone || r.zone === c.offering.zone) &&
        (!r.capacityType || r.capacityType === c.offering.capacityType),
    );
  }

  /** The cheapest type's equally priced zones take turns, so identical launches spread over zones. */
  private spreadTies(candidates: readonly Candidate[]): Candidate[] {
    const head = candidates[0];
    if (!head) return [];
    const ties = candidates.filter((c) => c.type === head.type && c.offering.price === head.offering.price);
    const k = this.rotation++ % ties.length;
    const rotated = [...ties.slice(k), ...ties.slice(0, k)];
    return [...rotated, ...candidates.filter((c) => !ties.includes(c))];
  }

  /** The capacity reservation a reserved offering launches into (undefined for other offerings). */
  private reservationOf(c: Candidate): SimCapacityReservation | undefined {
    if (c.offering.capacityType !== 'reserved') return undefined;
    const id = c.offering.reservationId;
    const r = this.opts.network?.capacityReservations.find((x) => x.id === id);
    if (!r)
      throw new Error(
        `simulated cloud: instance type ${c.type.name}'s reserved offering in ${c.offering.zone} names capacity reservation ${id ?? '(none)'} (offering.reservationId), which the simulated network does not hold`,
      );
    return r;
  }

  /** Starts an instance of candidate c (taking a place in its reservation); its kubelet registers it launchMs later. */
  private launch(
    req: LaunchRequest,
    nc: EC2NodeClass,
    c: Candidate,
    price: number,
    reservation: SimCapacityReservation | undefined,
  ): Instance {
    const n = ++this.seq;
    const id = `i-0${(0x5e0000000000000 + n * 7919).toString(16).padStart(16, '0')}`;
    const providerID = `aws:///${c.offering.zone}/${id}`;
    const labels = this.instanceLabels(req, c, reservation);
    if (reservation) reservation.available--;
    const instance: Instance = {
      providerID,
      instanceType: c.type.name,
      zone: c.offering.zone,
      capacityType: c.offering.capacityType,
      imageID: simImageId(nc.amiFamily, labels['kubernetes.io/arch'] ?? 'amd64'),
      capacity: nonZero(c.type.capacity),
      allocatable: nonZero(c.type.allocatable),
      labels,
      annotations: {
        [NODECLASS_HASH_ANNOTATION]: nodeClassHash(nc),
        [NODECLASS_HASH_VERSION_ANNOTATION]: NODECLASS_HASH_VERSION,
      },
      // As on AWS, a launch carries the NodePool's tag, not the NodeClaim's (Karpenter tags the instance with
      // its NodeClaim only after registration, so identical launches can share one CreateFleet).
      launchTime: this.opts.clock.now(),
      nodePoolName: req.nodePoolName,
      state: 'pending',
    };
    const sim: SimInstance = {
      instance,
      nodeName: `ip-10-0-${(n >> 8) & 255}-${n & 255}.${this.region}.compute.internal`,
      price,
      launchedFor: req.nodeClaimName,
      ...(reservation ? { reservation } : {}),
    };
    this.instances.set(providerID, sim);
    sim.timer = this.opts.clock.setTimer(this.opts.launchMs ?? 2_000, () => this.boot(sim, req, c));
    return instance;
  }

  /** The labels an instance of candidate c starts with: its type's, where it runs, its pool's, and its own
   * reservation's (a type with reservations lists all their ids; the instance has only its own). */
  private instanceLabels(
    req: LaunchRequest,
    c: Candidate,
    reservation: SimCapacityReservation | undefined,
  ): Record<string, string> {
    const labels: Record<string, string> = {
      ...singleValueLabels(c.type.requirements),
      [INSTANCE_TYPE_LABEL]: c.type.name,
      'topology.kubernetes.io/zone': c.offering.zone,
      'topology.kubernetes.io/region': this.region,
      'karpenter.sh/capacity-type': c.offering.capacityType,
      'karpenter.k8s.aws/instance-tenancy': 'default',
      'karpenter.sh/nodepool': req.nodePoolName,
      ...(c.offering.zoneId ? { 'topology.k8s.aws/zone-id': c.offering.zoneId } : {}),
    };
    for (const k of RESERVATION_LABELS) delete labels[k];
    if (reservation) {
      labels[CAPACITY_RESERVATION_ID_LABEL] = reservation.id;
      labels[CAPACITY_RESERVATION_TYPE_LABEL] = reservation.reservationType;
      labels[CAPACITY_RESERVATION_INTERRUPTIBLE_LABEL] = 'false';
    }
    return labels;
  }

  /** The instance is running: its kubelet registers the Node, with the NodeClaim's labels and taints. */
  private boot(sim: SimInstance, req: LaunchRequest, c: Candidate): void {
    sim.timer = undefined;
    sim.instance = { ...sim.instance, state: 'running' };
    this.opts.kubelet.registerInstance({
      providerID: sim.instance.providerID,
      nodeName: sim.nodeName,
      labels: { ...sim.instance.labels, ...req.labels },
      taints: req.taints,
      startupTaints: req.startupTaints,
      capacity: quantities(c.type.capacity),
      allocatable: quantities(c.type.allocatable),
    });
  }

  private terminate(inst: SimInstance, afterMs: number): void {
    inst.timer?.cancel();
    if (inst.reservation) {
      inst.reservation.available = Math.min(inst.reservation.total, inst.reservation.available + 1);
      delete inst.reservation;
    }
    inst.instance = { ...inst.instance, state: 'shutting-down' };
    this.opts.kubelet.terminateInstance(inst.instance.providerID);
    const gone = (): void => {
      inst.timer = undefined;
      inst.instance = { ...inst.instance, state: 'terminated' };
    };
    if (afterMs <= 0) gone();
    else inst.timer = this.opts.clock.setTimer(afterMs, gone);
  }

  private live(providerID: string): SimInstance {
    const inst = this.instances.get(providerID);
    if (!inst || inst.instance.state === 'terminated')
      throw new NodeClaimNotFoundError(`instance ${providerID} not found`);
    return inst;
  }
}

function quantities(r: Resources): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(nonZero(r))) out[k] = formatResourceValue(k, v);
  return out;
}

export type { Resources };

/**
 * What the cloud bills for the candidate: its offering's price in the provider's own catalog. A NodeOverlay's
 * price steers the choice (the launch sees the overlaid catalog) but does not change EC2's bill.
 */
function billedPrice(own: readonly InstanceType[], c: Candidate): number {
  const o = c.offering;
  const base = own
    .find((t) => t.name === c.type.name)
    ?.offerings.find(
      (x) => x.zone === o.zone && x.capacityType === o.capacityType && x.reservationId === o.reservationId,
    );
  return base?.price ?? o.price;
}
