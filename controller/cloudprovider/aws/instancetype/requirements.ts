// An instance type's labels as requirements (spec/aws-provider.md §2, Karpenter computeRequirements). Every
// well-known key is defined: a key without a value is DoesNotExist, so a pod selecting on it cannot match.
// Like capacity.ts, this should give way to engine/catalog's label functions at merge.
import { reqs, type Requirement, type Requirements } from '../../../../engine/index.ts';
import type { InstanceFacts } from '../capacity.ts';
import type { AmiFamily } from '../nodeclass-types.ts';
import * as keys from '../settings.ts';

const A = 'karpenter.k8s.aws/';
const WINDOWS_BUILD: Readonly<Partial<Record<AmiFamily, string>>> = {
  Windows2019: '10.0.17763',
  Windows2022: '10.0.20348',
  Windows2025: '10.0.26100',
};

export const kubeArch = (arch: string): string => (arch === 'x86_64' ? 'amd64' : arch);

const NAME_RE = /^([a-z]+)(-[0-9]+tb)?([0-9]+).*\./;

/**
 * The labels derived from the type's own facts; undefined = DoesNotExist. An empty string is a real value:
 * Karpenter labels bare-metal types `instance-hypervisor: ""`.
 */
export function typeLabels(info: InstanceFacts): Record<string, string | undefined> {
  const dot = info.name.indexOf('.');
  const family = dot < 0 ? info.name : info.name.slice(0, dot);
  const m = NAME_RE.exec(info.name);
  const str = (v: number | string | boolean | undefined) => (v === undefined ? undefined : String(v));
  const gpu = info.gpus?.length === 1 ? info.gpus[0] : undefined;
  const neuron = info.neuronDevices?.length === 1 ? info.neuronDevices[0] : undefined;
  const inf = info.inferenceAccelerators?.length === 1 ? info.inferenceAccelerators[0] : undefined;
  const acc = inf ?? (neuron ? { ...neuron, manufacturer: 'aws' } : undefined);
  return {
    [keys.INSTANCE_TYPE_LABEL]: info.name,
    [keys.ARCH_LABEL]: kubeArch(info.arch),
    [`${A}instance-category`]: m?.[1],
    [`${A}instance-generation`]: m?.[3],
    [`${A}instance-family`]: family,
    [`${A}instance-size`]: dot < 0 ? undefined : info.name.slice(dot + 1),
    [`${A}instance-capability-flex`]: String(family.includes('-flex')),
    [`${A}instance-cpu`]: String(info.vcpu),
    [`${A}instance-cpu-manufacturer`]: str(info.cpuManufacturer),
    [`${A}instance-cpu-sustained-clock-speed-mhz`]: str(info.sustainedClockSpeedMhz),
    [`${A}instance-memory`]: String(info.memoryMiB),
    [`${A}instance-ebs-bandwidth`]: str(info.ebsBandwidthMbps),
    [`${A}instance-network-bandwidth`]: str(info.networkBandwidthMbps),
    [`${A}instance-hypervisor`]: str(info.hypervisor),
    [`${A}instance-encryption-in-transit-supported`]: str(info.encryptionInTransitSupported),
    [`${A}instance-local-nvme`]: info.instanceStorage?.nvme ? String(info.instanceStorage.totalSizeGB) : undefined,
    [`${A}instance-gpu-name`]: str(gpu?.name),
    [`${A}instance-gpu-manufacturer`]: str(gpu?.manufacturer),
    [keys.GPU_COUNT_LABEL]: gpu && gpu.count > 0 ? String(gpu.count) : undefined,
    [`${A}instance-gpu-memory`]: str(gpu?.memoryMiB),
    [`${A}instance-accelerator-name`]: str(acc?.name),
    [`${A}instance-accelerator-manufacturer`]: str(acc?.manufacturer),
    [keys.ACCELERATOR_COUNT_LABEL]: acc && acc.count > 0 ? String(acc.count) : undefined,
  };
}

export interface RequirementContext {
  readonly region: string;
  readonly amiFamily: AmiFamily;
  /** Zones with an offering, and their zone IDs. */
  readonly zones: readonly string[];
  readonly zoneIds: readonly string[];
  readonly capacityTypes: readonly string[];
}

const inOrAbsent = (key: string, value: string | undefined): Requirement => reqs.req(key, false, value === undefined ? [] : [value]);

export function instanceTypeRequirements(info: InstanceFacts, ctx: RequirementContext): Requirements {
  const windows = WINDOWS_BUILD[ctx.amiFamily];
  const list: Requirement[] = Object.entries(typeLabels(info)).map(([k, v]) => inOrAbsent(k, v));
  list.push(
    reqs.req(keys.OS_LABEL, false, [windows ? 'windows' : 'linux']),
    inOrAbsent(keys.WINDOWS_BUILD_LABEL, windows),
    reqs.req(keys.ZONE_LABEL, false, ctx.zones),
    reqs.req(keys.ZONE_ID_LABEL, false, ctx.zoneIds),
    reqs.req(keys.REGION_LABEL, false, [ctx.region]),
    reqs.req(keys.CAPACITY_TYPE_LABEL, false, ctx.capacityTypes),
    reqs.req(keys.TENANCY_LABEL, false, ['default', 'dedicated']),
    reqs.req(`${A}capacity-reservation-id`, false, []),
    reqs.req(`${A}capacity-reservation-type`, false, []),
    reqs.req(`${A}capacity-reservation-interruptible`, false, []),
  );
  return reqs.requirements(...list);
}
