// Instances this controller launched, as the seam's Instance (docs/karpenter/aws-provider.md §4.8): get and list through
// DescribeInstances (live states only; list by Karpenter's tags), delete through a batched
// TerminateInstances (only an instance carrying this cluster's tags), and the post-registration tags. An
// instance that is gone is NodeClaimNotFoundError; one that is not this cluster's, InstanceNotOwnedError.
import type { Instance as Ec2Instance } from '@aws-sdk/client-ec2';
import {
  CAPACITY_RESERVATION_ID_LABEL,
  CAPACITY_RESERVATION_INTERRUPTIBLE_LABEL,
  CAPACITY_RESERVATION_TYPE_LABEL,
  CAPACITY_TYPE_LABEL,
  INSTANCE_TENANCY_LABEL,
  INSTANCE_TYPE_LABEL,
  NODEPOOL_LABEL,
  nonZero,
  reqs,
  ZONE_LABEL,
  type InstanceType,
} from '../../../engine/index.ts';
import { InstanceNotOwnedError, NodeClaimNotFoundError, type Instance } from '../types.ts';
import { Batcher } from './batcher.ts';
import { isNotFound } from './errors.ts';
import type { Timers } from './periodic.ts';
import type { Ec2Port, Filter } from './sdk.ts';
import * as k from './settings.ts';

export const ACTIVE_STATES = ['pending', 'running', 'stopping', 'stopped', 'shutting-down'];
const PROVIDER_ID = /^aws:\/\/\/([^/]*)\/(i-[0-9a-zA-Z]+)$/;

/** The instance id of `aws:///<zone>/<id>`; throws naming the value when it is not one. */
export function parseProviderID(providerID: string): string {
  const m = PROVIDER_ID.exec(providerID);
  if (!m) throw new Error(`providerID "${providerID}" is not of the form aws:///<zone>/<instance-id>`);
  return m[2]!;
}

interface InstanceDeps {
  readonly ec2: Ec2Port;
  readonly clusterName: string;
  /** The instance type with the node class's capacity and labels, when known. */
  readonly instanceType?: (nodeClassName: string | undefined, instanceType: string) => InstanceType | undefined;
  readonly timers?: Timers;
  /** Called once per instance launched into a reservation when its termination starts (the count comes back). */
  readonly onReservedTerminated?: (reservationId: string, instanceId: string) => void;
  /** A TerminateInstances call failed for an instance in this zone (karpenter_cloudprovider_instance_termination_failures_total). */
  readonly onTerminateFailed?: (zone: string, zoneId: string) => void;
}

const tagsOf = (i: Ec2Instance): Record<string, string> =>
  Object.fromEntries((i.Tags ?? []).flatMap((t) => (t.Key ? [[t.Key, t.Value ?? '']] : [])));

export function capacityTypeOf(i: Ec2Instance): Instance['capacityType'] {
  if (i.SpotInstanceRequestId || i.InstanceLifecycle === 'spot') return 'spot';
  // Launched into a reservation on purpose: capacity-reservations-only, or a template targeting the reservation
  // (what this provider sends); an instance that merely landed in an open ODCR stays on-demand.
  const spec = i.CapacityReservationSpecification;
  if (
    i.CapacityReservationId &&
    (spec?.CapacityReservationPreference === 'capacity-reservations-only' ||
      spec?.CapacityReservationTarget?.CapacityReservationId === i.CapacityReservationId)
  ) {
    return 'reserved';
  }
  return 'on-demand';
}

/** A type with reservations lists their ids in its requirements; only the instance's own reservation is a label. */
function withoutReservationLabels(labels: Record<string, string>): Record<string, string> {
  for (const key of [
    CAPACITY_RESERVATION_ID_LABEL,
    CAPACITY_RESERVATION_TYPE_LABEL,
    CAPACITY_RESERVATION_INTERRUPTIBLE_LABEL,
  ])
    delete labels[key];
  return labels;
}

export class Instances {
  private readonly terminator: Batcher<string, true>;

  constructor(private readonly deps: InstanceDeps) {
    this.terminator = new Batcher<string, true>({
      idleMs: 100,
      maxMs: 1000,
      maxItems: 500,
      key: () => 'terminate',
      ...(deps.timers ? { timers: deps.timers } : {}),
      exec: (ids) => this.terminate(ids),
    });
  }

  toInstance(i: Ec2Instance): Instance {
    const tags = tagsOf(i);
    const zone = i.Placement?.AvailabilityZone ?? '';
    const typeName = i.InstanceType ?? '';
    const type = this.deps.instanceType?.(tags[k.NODECLASS_TAG], typeName);
    const capacityType = capacityTypeOf(i);
    return {
      providerID: `aws:///${zone}/${i.InstanceId ?? ''}`,
      instanceType: typeName,
      zone,
      capacityType,
      ...(i.ImageId ? { imageID: i.ImageId } : {}),
      capacity: nonZero(type?.capacity ?? {}),
      allocatable: nonZero(type?.allocatable ?? {}),
      labels: {
        ...withoutReservationLabels(
          type ? reqs.singleValueLabels(type.requirements) : { [INSTANCE_TYPE_LABEL]: typeName },
        ),
        [ZONE_LABEL]: zone,
        [CAPACITY_TYPE_LABEL]: capacityType,
        ...(capacityType === 'reserved' && i.CapacityReservationId
          ? { [CAPACITY_RESERVATION_ID_LABEL]: i.CapacityReservationId }
          : {}),
        ...(tags[k.NODEPOOL_TAG] ? { [NODEPOOL_LABEL]: tags[k.NODEPOOL_TAG] } : {}),
        [INSTANCE_TENANCY_LABEL]: i.Placement?.Tenancy ?? 'default',
      },
      annotations: {},
      launchTime: i.LaunchTime ? i.LaunchTime.getTime() : 0,
      ...(tags[k.NODECLAIM_TAG] ? { nodeClaimName: tags[k.NODECLAIM_TAG] } : {}),
      ...(tags[k.NODEPOOL_TAG] ? { nodePoolName: tags[k.NODEPOOL_TAG] } : {}),
      state: (i.State?.Name ?? 'pending') as Instance['state'],
    };
  }

  async get(providerID: string): Promise<Instance> {
    return this.toInstance(await this.describe(providerID));
  }

  /** The raw EC2 record of a live instance (drift reads its subnet and security groups). */
  async describe(providerID: string): Promise<Ec2Instance> {
    const id = parseProviderID(providerID);
    let found: Ec2Instance[];
    try {
      found = await this.deps.ec2.describeInstances({
        instanceIds: [id],
        filters: [{ Name: 'instance-state-name', Values: ACTIVE_STATES }],
      });
    } catch (e) {
      if (isNotFound(e)) throw new NodeClaimNotFoundError(`instance ${id} not found`, { cause: e });
      throw new Error(`describing instance ${id}`, { cause: e });
    }
    const inst = found.find((i) => i.InstanceId === id);
    if (!inst) throw new NodeClaimNotFoundError(`instance ${id} not found (or terminated)`);
    return inst;
  }

  async list(): Promise<Instance[]> {
    const filters: Filter[] = [
      { Name: 'tag-key', Values: [k.NODEPOOL_TAG] },
      { Name: 'tag-key', Values: [k.NODECLASS_TAG] },
      { Name: `tag:${k.EKS_CLUSTER_NAME_TAG}`, Values: [this.deps.clusterName] },
      { Name: 'instance-state-name', Values: ACTIVE_STATES },
    ];
    return (await this.deps.ec2.describeInstances({ filters })).map((i) => this.toInstance(i));
  }

  /**
   * Starts termination; throws NodeClaimNotFoundError once the instance is gone, and InstanceNotOwnedError
   * (terminating nothing) for an instance without this cluster's tags.
   */
  async delete(providerID: string): Promise<void> {
    const inst = await this.describe(providerID);
    const notOwned = this.notOwnedReason(inst);
    if (notOwned)
      throw new InstanceNotOwnedError(`instance ${inst.InstanceId ?? providerID} ${notOwned}; not terminating it`);
    try {
      await this.terminator.add(parseProviderID(providerID));
    } catch (e) {
      if (!(e instanceof NodeClaimNotFoundError))
        this.deps.onTerminateFailed?.(inst.Placement?.AvailabilityZone ?? '', inst.Placement?.AvailabilityZoneId ?? '');
      throw e;
    }
    if (capacityTypeOf(inst) === 'reserved' && inst.CapacityReservationId && inst.InstanceId)
      this.deps.onReservedTerminated?.(inst.CapacityReservationId, inst.InstanceId);
  }

  /**
   * Why an instance is not this cluster's, or undefined when it is: every launch tags it with the cluster
   * (eks:eks-cluster-name, and kubernetes.io/cluster/<name>=owned, which older Karpenter versions set alone)
   * and with its NodePool, and list() finds instances by those same tags.
   */
  private notOwnedReason(i: Ec2Instance): string | undefined {
    const tags = tagsOf(i);
    const cluster = this.deps.clusterName;
    if (tags[k.EKS_CLUSTER_NAME_TAG] !== cluster && tags[k.clusterTag(cluster)] !== 'owned') {
      return `does not carry this cluster's tags (${k.EKS_CLUSTER_NAME_TAG}=${cluster} or ${k.clusterTag(cluster)}=owned)`;
    }
    if (!(k.NODEPOOL_TAG in tags)) return `has no ${k.NODEPOOL_TAG} tag (not launched by Karpenter)`;
    return undefined;
  }

  /** Tags a registered instance (Name, karpenter.sh/nodeclaim, eks:eks-cluster-name). */
  async tag(providerID: string, tags: Record<string, string>): Promise<void> {
    const id = parseProviderID(providerID);
    try {
      await this.deps.ec2.createTags([id], tags);
    } catch (e) {
      if (isNotFound(e)) throw new NodeClaimNotFoundError(`instance ${id} not found`, { cause: e });
      throw new Error(`tagging instance ${id}`, { cause: e });
    }
  }

  /** One TerminateInstances for the batch; if EC2 rejects the batch for an unknown id, each id alone. */
  private async terminate(ids: readonly string[]): Promise<Array<true | Error>> {
    const unique = [...new Set(ids)];
    let terminating: Set<string>;
    try {
      terminating = new Set(
        (await this.deps.ec2.terminateInstances(unique)).flatMap((c) => (c.InstanceId ? [c.InstanceId] : [])),
      );
    } catch (e) {
      if (!isNotFound(e) || unique.length === 1) {
        if (isNotFound(e)) return ids.map((id) => new NodeClaimNotFoundError(`instance ${id} not found`, { cause: e }));
        throw e;
      }
      terminating = new Set();
      for (const id of unique) {
        try {
          if ((await this.deps.ec2.terminateInstances([id])).length) terminating.add(id);
        } catch (inner) {
          if (!isNotFound(inner)) throw inner;
        }
      }
    }
    return ids.map((id) => (terminating.has(id) ? true : new NodeClaimNotFoundError(`instance ${id} not found`)));
  }
}
