// EC2NodeClass (karpenter.k8s.aws/v1) as typed data for the AWS provider, and the NodeClass the engine
// sees (readiness and subnet zones). Parsed after admission, so CRD defaults (metadataOptions) are applied.
import type { NodeClass } from '../domain/types.ts';
import { resourceValue } from '../domain/resources.ts';
import { fail, isRecord, ok, type Result } from './errors.ts';
import { conditionList, type Condition } from './nodeclaim.ts';
import type { AMI_FAMILIES } from './schemas/ec2nodeclass.ts';
import { admit } from './validate.ts';

export type AMIFamily = (typeof AMI_FAMILIES)[number];
type Tags = Readonly<Record<string, string>>;

export interface SubnetSelectorTerm {
  readonly tags?: Tags;
  readonly id?: string;
  readonly cidr?: string;
}
export interface SecurityGroupSelectorTerm {
  readonly tags?: Tags;
  readonly id?: string;
  readonly name?: string;
}
export interface CapacityReservationSelectorTerm {
  readonly tags?: Tags;
  readonly id?: string;
  readonly ownerID?: string;
  readonly instanceMatchCriteria?: 'open' | 'targeted';
}
export interface AMISelectorTerm {
  readonly alias?: string;
  readonly tags?: Tags;
  readonly id?: string;
  readonly name?: string;
  readonly owner?: string;
  readonly ssmParameter?: string;
}
export interface KubeletConfiguration {
  readonly clusterDNS?: readonly string[];
  readonly maxPods?: number;
  readonly podsPerCore?: number;
  readonly systemReserved?: Readonly<Record<string, string>>;
  readonly kubeReserved?: Readonly<Record<string, string>>;
  readonly evictionHard?: Readonly<Record<string, string>>;
  readonly evictionSoft?: Readonly<Record<string, string>>;
  readonly evictionSoftGracePeriod?: Readonly<Record<string, string>>;
  readonly evictionMaxPodGracePeriod?: number;
  readonly imageGCHighThresholdPercent?: number;
  readonly imageGCLowThresholdPercent?: number;
  readonly cpuCFSQuota?: boolean;
}
interface BlockDevice {
  readonly deleteOnTermination?: boolean;
  readonly encrypted?: boolean;
  readonly iops?: number;
  readonly kmsKeyID?: string;
  readonly snapshotID?: string;
  readonly throughput?: number;
  readonly volumeInitializationRate?: number;
  /** As written ("100Gi"); `volumeSizeBytes` is the same in bytes. */
  readonly volumeSize?: string;
  readonly volumeSizeBytes?: number;
  readonly volumeType?: 'standard' | 'io1' | 'io2' | 'gp2' | 'sc1' | 'st1' | 'gp3';
}
export interface BlockDeviceMapping {
  readonly deviceName?: string;
  readonly rootVolume: boolean;
  readonly ebs?: BlockDevice;
}
interface MetadataOptions {
  readonly httpEndpoint: 'enabled' | 'disabled';
  readonly httpProtocolIPv6: 'enabled' | 'disabled';
  readonly httpPutResponseHopLimit: number;
  readonly httpTokens: 'required' | 'optional';
}
interface NetworkInterface {
  readonly networkCardIndex: number;
  readonly deviceIndex: number;
  readonly interfaceType: 'interface' | 'efa-only';
}

export interface EC2NodeClassSpec {
  readonly subnetSelectorTerms: readonly SubnetSelectorTerm[];
  readonly securityGroupSelectorTerms: readonly SecurityGroupSelectorTerm[];
  readonly capacityReservationSelectorTerms: readonly CapacityReservationSelectorTerm[];
  readonly placementGroupSelector?: { readonly name?: string; readonly id?: string };
  readonly associatePublicIPAddress?: boolean;
  readonly ipPrefixCount?: number;
  readonly amiSelectorTerms: readonly AMISelectorTerm[];
  readonly amiFamily?: AMIFamily;
  readonly userData?: string;
  readonly role?: string;
  readonly instanceProfile?: string;
  readonly tags: Tags;
  readonly kubelet?: KubeletConfiguration;
  readonly blockDeviceMappings: readonly BlockDeviceMapping[];
  readonly instanceStorePolicy?: 'RAID0';
  readonly detailedMonitoring?: boolean;
  readonly metadataOptions: MetadataOptions;
  readonly context?: string;
  readonly networkInterfaces: readonly NetworkInterface[];
  readonly connectionTracking?: {
    readonly tcpEstablishedTimeout?: number;
    readonly udpStreamTimeout?: number;
    readonly udpTimeout?: number;
  };
  readonly cpuOptions?: { readonly nestedVirtualization?: 'enabled' | 'disabled' };
}

export interface EC2NodeClassStatus {
  readonly subnets: readonly { readonly id: string; readonly zone?: string; readonly zoneID?: string }[];
  readonly securityGroups: readonly { readonly id: string; readonly name?: string }[];
  readonly amis: readonly {
    readonly id: string;
    readonly name?: string;
    readonly deprecated?: boolean;
    readonly requirements?: readonly {
      readonly key: string;
      readonly operator: string;
      readonly values?: readonly string[];
    }[];
  }[];
  readonly capacityReservations: readonly Readonly<Record<string, unknown> & { id: string }>[];
  readonly instanceProfile?: string;
  readonly conditions: readonly Condition[];
}

export interface EC2NodeClass {
  readonly name: string;
  readonly uid?: string;
  readonly generation?: number;
  readonly labels: Tags;
  readonly annotations: Tags;
  readonly deleting: boolean;
  readonly spec: EC2NodeClassSpec;
  readonly status: EC2NodeClassStatus;
  /** spec.amiFamily, else the alias's family (validation guarantees one of them). */
  readonly amiFamily: AMIFamily;
  /** The alias term split into family and version, when there is one. */
  readonly alias?: { readonly family: string; readonly version: string };
}

const FAMILY_OF_ALIAS: Readonly<Record<string, AMIFamily>> = {
  al2: 'AL2',
  al2023: 'AL2023',
  bottlerocket: 'Bottlerocket',
  windows2019: 'Windows2019',
  windows2022: 'Windows2022',
  windows2025: 'Windows2025',
};

type Obj = Record<string, unknown>;
const rec = (v: unknown): Obj => (isRecord(v) ? v : {});
const arr = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);

export function parseEC2NodeClass(obj: unknown): Result<EC2NodeClass> {
  const admitted = admit(obj);
  if (!admitted.ok) return fail(admitted.errors);
  const o = admitted.value;
  const meta = rec(o['metadata']);
  const s = rec(o['spec']);
  const st = rec(o['status']);
  const spec = {
    ...s,
    capacityReservationSelectorTerms: arr(s['capacityReservationSelectorTerms']),
    tags: s['tags'] ?? {},
    blockDeviceMappings: arr<Obj>(s['blockDeviceMappings']).map((m) => {
      const ebs = isRecord(m['ebs']) ? m['ebs'] : undefined;
      const bytes = typeof ebs?.['volumeSize'] === 'string' ? resourceValue('storage', ebs['volumeSize']) : undefined;
      return {
        ...m,
        rootVolume: m['rootVolume'] === true,
        ...(ebs ? { ebs: bytes === undefined ? ebs : { ...ebs, volumeSizeBytes: bytes } } : {}),
      };
    }),
    networkInterfaces: arr(s['networkInterfaces']),
  } as unknown as EC2NodeClassSpec;
  const status: EC2NodeClassStatus = {
    subnets: arr(st['subnets']),
    securityGroups: arr(st['securityGroups']),
    amis: arr(st['amis']),
    capacityReservations: arr(st['capacityReservations']),
    ...(typeof st['instanceProfile'] === 'string' ? { instanceProfile: st['instanceProfile'] } : {}),
    conditions: conditionList(st['conditions']),
  };
  const aliasTerm = spec.amiSelectorTerms.find((t) => t.alias !== undefined)?.alias;
  const [family = '', version = ''] = aliasTerm?.split('@') ?? [];
  const nc: Record<string, unknown> = {
    name: String(meta['name'] ?? meta['generateName'] ?? ''),
    labels: meta['labels'] ?? {},
    annotations: meta['annotations'] ?? {},
    deleting: meta['deletionTimestamp'] !== undefined,
    spec,
    status,
    amiFamily: spec.amiFamily ?? FAMILY_OF_ALIAS[family] ?? 'Custom',
  };
  if (aliasTerm !== undefined) nc['alias'] = { family, version };
  if (typeof meta['uid'] === 'string') nc['uid'] = meta['uid'];
  if (typeof meta['generation'] === 'number') nc['generation'] = meta['generation'];
  return ok(nc as unknown as EC2NodeClass);
}

/** The engine's view: ready when Ready=True, zones of the resolved subnets (empty = unknown, no filter). */
export function toNodeClass(nc: EC2NodeClass): NodeClass {
  const zones = [...new Set(nc.status.subnets.flatMap((s) => (s.zone ? [s.zone] : [])))].sort();
  return {
    group: 'karpenter.k8s.aws',
    kind: 'EC2NodeClass',
    name: nc.name,
    ready: nc.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True'),
    zones,
  };
}
