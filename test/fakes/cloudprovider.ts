// A recording CloudProvider for controller unit tests: every call is recorded with its argument, instances
// live in a map the test can read and change, and any method can be made to fail. Launches pick the offering
// the simulated cloud would (sim/cloud/offerings.ts: the AWS provider's CreateFleet preparation, cheapest
// first) from the real EC2 catalog of one region, or from the instance types the test gives.
import { ec2InstanceTypes, nonZero, singleValueLabels, type InstanceType, type NodePool } from '../../engine/index.ts';
import type { Clock } from '../../controller/operator/clock.ts';
import {
  InsufficientCapacityError,
  NodeClaimNotFoundError,
  type CloudProvider,
  type DriftQuery,
  type DriftReason,
  type Instance,
  type LaunchRequest,
  type RepairPolicy,
} from '../../controller/cloudprovider/types.ts';
import { selectOfferings } from '../../sim/cloud/offerings.ts';

type CloudMethod = 'create' | 'delete' | 'get' | 'list' | 'getInstanceTypes' | 'isDrifted';

interface CloudCall {
  readonly method: CloudMethod;
  /** The request, providerID, NodePool name or drift query. */
  readonly arg?: unknown;
}

export class RecordingCloudProvider implements CloudProvider {
  readonly name = 'fake';
  readonly calls: CloudCall[] = [];
  /** By providerID; terminated instances stay, in state 'terminated'. */
  readonly instances = new Map<string, Instance>();
  /** Drift reasons by providerID (isDrifted answers from here). */
  readonly drift = new Map<string, DriftReason>();
  /** What repairPolicies() answers (none by default: node repair stays off). */
  repair: RepairPolicy[] = [];
  private readonly failures = new Map<CloudMethod, Error[]>();
  private readonly types: InstanceType[];
  private seq = 0;

  constructor(private readonly o: { clock: Clock; region?: string; instanceTypes?: InstanceType[] }) {
    this.types = o.instanceTypes ?? ec2InstanceTypes({ region: o.region ?? 'ap-northeast-2' });
  }

  /** The next call of `method` throws `err` (queued: one error per call). */
  failNext(method: CloudMethod, err: Error): void {
    this.failures.set(method, [...(this.failures.get(method) ?? []), err]);
  }

  /** Calls of one method, in order. */
  callsOf(method: CloudMethod): unknown[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.arg);
  }

  async create(req: LaunchRequest): Promise<Instance> {
    this.record('create', req);
    const sel = selectOfferings(this.types, req, () => false);
    if (!sel.ok) throw new InsufficientCapacityError(`launching nodeclaim ${req.nodeClaimName}: ${sel.reason}`);
    const c = sel.candidates[0]!;
    const n = ++this.seq;
    const providerID = `aws:///${c.offering.zone}/i-fake${String(n).padStart(12, '0')}`;
    const instance: Instance = {
      providerID,
      instanceType: c.type.name,
      zone: c.offering.zone,
      capacityType: c.offering.capacityType,
      imageID: 'ami-0fake',
      capacity: nonZero(c.type.capacity),
      allocatable: nonZero(c.type.allocatable),
      labels: {
        ...singleValueLabels(c.type.requirements),
        'node.kubernetes.io/instance-type': c.type.name,
        'topology.kubernetes.io/zone': c.offering.zone,
        'karpenter.sh/capacity-type': c.offering.capacityType,
      },
      annotations: {},
      launchTime: this.o.clock.now(),
      nodeClaimName: req.nodeClaimName,
      nodePoolName: req.nodePoolName,
      state: 'running',
    };
    this.instances.set(providerID, instance);
    return instance;
  }

  async delete(providerID: string): Promise<void> {
    this.record('delete', providerID);
    const inst = this.live(providerID);
    this.instances.set(providerID, { ...inst, state: 'terminated' });
  }

  async get(providerID: string): Promise<Instance> {
    this.record('get', providerID);
    return this.live(providerID);
  }

  async list(): Promise<Instance[]> {
    this.record('list');
    return [...this.instances.values()].filter((i) => i.state !== 'terminated');
  }

  async getInstanceTypes(nodePool: NodePool): Promise<InstanceType[]> {
    this.record('getInstanceTypes', nodePool.name);
    return this.types;
  }

  async isDrifted(q: DriftQuery): Promise<DriftReason | undefined> {
    this.record('isDrifted', q);
    return this.drift.get(q.providerID);
  }

  repairPolicies(): readonly RepairPolicy[] {
    return this.repair;
  }

  /** Puts a running instance in the cloud (as if launched earlier), for NodeClaims a test writes itself. */
  addInstance(i: Partial<Instance> & Pick<Instance, 'providerID' | 'instanceType' | 'zone'>): Instance {
    const instance: Instance = {
      capacityType: 'on-demand',
      capacity: {},
      allocatable: {},
      labels: {},
      annotations: {},
      launchTime: this.o.clock.now(),
      state: 'running',
      ...i,
    };
    this.instances.set(instance.providerID, instance);
    return instance;
  }

  private record(method: CloudMethod, arg?: unknown): void {
    this.calls.push(arg === undefined ? { method } : { method, arg });
    const err = this.failures.get(method)?.shift();
    if (err) throw err;
  }

  private live(providerID: string): Instance {
    const inst = this.instances.get(providerID);
    if (!inst || inst.state === 'terminated') throw new NodeClaimNotFoundError(`instance ${providerID} not found`);
    return inst;
  }
}
