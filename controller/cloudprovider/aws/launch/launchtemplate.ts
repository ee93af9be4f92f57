// Launch templates (docs/karpenter/aws-provider.md §4.5): one per resolved configuration, named
// `karpenter.k8s.aws/<hash of the template contents>`, looked up by name and created when missing, kept in a
// 1-minute cache refreshed on use; sweep() deletes templates whose entry expired (Karpenter deletes them from
// EC2 on eviction), and deleteAll() removes a deleted node class's templates.
import { createHash } from 'node:crypto';
import type {
  CreateLaunchTemplateCommandInput,
  LaunchTemplateBlockDeviceMappingRequest,
  RequestLaunchTemplateData,
} from '@aws-sdk/client-ec2';
import type { AMIFamily, BlockDeviceMapping, EC2NodeClassSpec } from '../../../../engine/index.ts';
import { isAlreadyExists } from '../errors.ts';
import { canonical } from '../hash.ts';
import type { Ec2Port } from '../sdk.ts';
import { EKS_CLUSTER_NAME_TAG, NODECLASS_TAG, type Clock } from '../settings.ts';
import { TtlCache } from '../ttl-cache.ts';

const LAUNCH_TEMPLATE_TTL_MS = 60_000;
const LAUNCH_TEMPLATE_PREFIX = 'karpenter.k8s.aws/';

export interface TemplateOptions {
  readonly family: AMIFamily;
  readonly spec: EC2NodeClassSpec;
  readonly imageId: string;
  /** Plain text; encoded here. */
  readonly userData: string;
  readonly instanceProfile: string;
  readonly securityGroupIds: readonly string[];
  readonly tags: Readonly<Record<string, string>>;
  readonly capacityType: 'on-demand' | 'spot' | 'reserved';
  /** Feature gate ReservedCapacity: templates then say which reservation to use (or none). */
  readonly reservedCapacity?: boolean;
  /** For reserved launches: the reservation this template launches into. */
  readonly reservation?: {
    readonly id: string;
    readonly reservationType: 'default' | 'capacity-block';
    readonly interruptible: boolean;
  };
}

interface TemplateRef {
  readonly id?: string;
  readonly name: string;
}

const GiB = 2 ** 30;

/** Default volumes per family (Karpenter DefaultBlockDeviceMappings): 20Gi gp3 encrypted roots; Bottlerocket 4Gi OS + 20Gi data. */
function defaultBlockDevices(family: AMIFamily): BlockDeviceMapping[] {
  const device = (deviceName: string, gi: number): BlockDeviceMapping => ({
    deviceName,
    rootVolume: false,
    ebs: { volumeSize: `${gi}Gi`, volumeSizeBytes: gi * GiB, volumeType: 'gp3', encrypted: true },
  });
  switch (family) {
    case 'AL2':
    case 'AL2023':
      return [device('/dev/xvda', 20)];
    case 'Bottlerocket':
      return [device('/dev/xvda', 4), device('/dev/xvdb', 20)];
    case 'Custom':
      return [];
    default:
      return [device('/dev/sda1', 50)];
  }
}

/** EBS sizes in GiB, from the bytes the engine's parser computed (it refuses sizes EC2 would refuse). */
function blockDevices(list: readonly BlockDeviceMapping[]): LaunchTemplateBlockDeviceMappingRequest[] {
  return list.map((b) => {
    const e = b.ebs ?? {};
    const size = e.volumeSizeBytes !== undefined ? Math.ceil(e.volumeSizeBytes / GiB) : undefined;
    return {
      ...(b.deviceName ? { DeviceName: b.deviceName } : {}),
      Ebs: {
        ...(size !== undefined ? { VolumeSize: size } : {}),
        ...(e.volumeType ? { VolumeType: e.volumeType } : {}),
        ...(e.iops !== undefined ? { Iops: e.iops } : {}),
        ...(e.throughput !== undefined ? { Throughput: e.throughput } : {}),
        ...(e.encrypted !== undefined ? { Encrypted: e.encrypted } : {}),
        ...(e.kmsKeyID ? { KmsKeyId: e.kmsKeyID } : {}),
        ...(e.snapshotID ? { SnapshotId: e.snapshotID } : {}),
        ...(e.deleteOnTermination !== undefined ? { DeleteOnTermination: e.deleteOnTermination } : {}),
        ...(e.volumeInitializationRate !== undefined ? { VolumeInitializationRate: e.volumeInitializationRate } : {}),
      },
    };
  });
}

const tagList = (tags: Readonly<Record<string, string>>) =>
  Object.keys(tags)
    .sort()
    .map((Key) => ({ Key, Value: tags[Key]! }));

export function launchTemplateData(o: TemplateOptions): RequestLaunchTemplateData {
  const s = o.spec;
  const m = s.metadataOptions; // CRD defaults applied by the engine's parser
  const groups = [...o.securityGroupIds].sort();
  const publicIp = s.associatePublicIPAddress;
  return {
    ImageId: o.imageId,
    ...(o.userData ? { UserData: Buffer.from(o.userData, 'utf8').toString('base64') } : {}),
    IamInstanceProfile: { Name: o.instanceProfile },
    BlockDeviceMappings: blockDevices(
      s.blockDeviceMappings.length ? s.blockDeviceMappings : defaultBlockDevices(o.family),
    ),
    MetadataOptions: {
      HttpEndpoint: m.httpEndpoint,
      HttpProtocolIpv6: m.httpProtocolIPv6,
      HttpPutResponseHopLimit: m.httpPutResponseHopLimit,
      HttpTokens: m.httpTokens,
      InstanceMetadataTags: 'disabled',
    },
    Monitoring: { Enabled: s.detailedMonitoring ?? false },
    // A public-IP choice needs an explicit primary interface, which then carries the groups.
    ...(publicIp !== undefined
      ? { NetworkInterfaces: [{ DeviceIndex: 0, AssociatePublicIpAddress: publicIp, Groups: groups }] }
      : { SecurityGroupIds: groups }),
    ...capacityReservationData(o),
    TagSpecifications: [
      { ResourceType: 'network-interface', Tags: tagList(o.tags) },
      ...(o.capacityType === 'spot'
        ? [{ ResourceType: 'spot-instances-request' as const, Tags: tagList(o.tags) }]
        : []),
    ],
  };
}

/**
 * With the ReservedCapacity gate on, every template targets capacity explicitly: a reserved launch targets its
 * reservation (EC2 takes a preference or a target, not both), with the capacity-block or interruptible market
 * type for those kinds; any other launch says `none`, so it never consumes an open reservation unasked.
 */
function capacityReservationData(
  o: TemplateOptions,
): Pick<RequestLaunchTemplateData, 'CapacityReservationSpecification' | 'InstanceMarketOptions'> {
  if (!(o.reservedCapacity ?? false)) return {};
  const r = o.reservation;
  if (o.capacityType !== 'reserved' || !r)
    return { CapacityReservationSpecification: { CapacityReservationPreference: 'none' } };
  const market =
    r.reservationType === 'capacity-block'
      ? 'capacity-block'
      : r.interruptible
        ? 'interruptible-capacity-reservation'
        : undefined;
  return {
    CapacityReservationSpecification: { CapacityReservationTarget: { CapacityReservationId: r.id } },
    ...(market ? { InstanceMarketOptions: { MarketType: market } } : {}),
  };
}

/** The template name: a hash of everything the template contains. */
export function launchTemplateName(o: TemplateOptions): string {
  const data = launchTemplateData(o);
  const digest = createHash('sha256')
    .update(canonical({ data, tags: o.tags }))
    .digest();
  return `${LAUNCH_TEMPLATE_PREFIX}${digest.readBigUInt64BE(0).toString(10)}`;
}

export class LaunchTemplates {
  private readonly cache: TtlCache<string, TemplateRef>;

  constructor(
    private readonly ec2: Ec2Port,
    clock: Clock,
    private readonly clusterName: string,
  ) {
    this.cache = new TtlCache(clock, LAUNCH_TEMPLATE_TTL_MS);
  }

  async ensure(o: TemplateOptions): Promise<TemplateRef> {
    const name = launchTemplateName(o);
    const cached = this.cache.get(name);
    if (cached) {
      this.cache.touch(name);
      return cached;
    }
    const found = await this.ec2.describeLaunchTemplate(name);
    let ref: TemplateRef;
    if (found) ref = { name, ...(found.LaunchTemplateId ? { id: found.LaunchTemplateId } : {}) };
    else ref = await this.create(name, o);
    this.cache.set(name, ref);
    return ref;
  }

  private async create(name: string, o: TemplateOptions): Promise<TemplateRef> {
    const input: CreateLaunchTemplateCommandInput = {
      LaunchTemplateName: name,
      LaunchTemplateData: launchTemplateData(o),
      TagSpecifications: [{ ResourceType: 'launch-template', Tags: tagList(o.tags) }],
    };
    try {
      const lt = await this.ec2.createLaunchTemplate(input);
      return { name, ...(lt.LaunchTemplateId ? { id: lt.LaunchTemplateId } : {}) };
    } catch (e) {
      if (isAlreadyExists(e)) return { name }; // created concurrently by another launch
      throw new Error(`creating launch template ${name}`, { cause: e });
    }
  }

  invalidate(name: string): void {
    this.cache.delete(name);
  }

  /** Deletes templates whose cache entry expired; returns their names. */
  async sweep(): Promise<string[]> {
    const expired = this.cache.sweep().map(([name]) => name);
    for (const name of expired) await this.ec2.deleteLaunchTemplate(name);
    return expired;
  }

  /** Deletes every template of a node class (on node-class deletion). */
  async deleteAll(nodeClassName: string): Promise<string[]> {
    const lts = await this.ec2.describeLaunchTemplates([
      { Name: `tag:${NODECLASS_TAG}`, Values: [nodeClassName] },
      { Name: `tag:${EKS_CLUSTER_NAME_TAG}`, Values: [this.clusterName] },
    ]);
    const names = lts.flatMap((lt) => (lt.LaunchTemplateName ? [lt.LaunchTemplateName] : []));
    for (const name of names) {
      await this.ec2.deleteLaunchTemplate(name);
      this.cache.delete(name);
    }
    return names;
  }
}
