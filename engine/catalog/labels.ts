// The requirements (labels) of one EC2 instance type, as Karpenter's computeRequirements builds them
// (docs/karpenter/aws-provider.md §2; Karpenter pkg/providers/instancetype/types.go). Every AWS well-known label is
// defined: `In [value]` when the fact applies, `DoesNotExist` when it does not (GPU labels on a type without
// GPUs, windows-build on Linux) or when no source knows it. zone-id is added only when the caller knows the
// zone ids, as Karpenter does.
import type { Requirement, Requirements } from '../domain/types.ts';
import {
  ARCH_LABEL,
  CAPACITY_TYPE_LABEL,
  INSTANCE_TYPE_LABEL,
  OS_LABEL,
  REGION_LABEL,
  WINDOWS_BUILD_LABEL,
  ZONE_ID_LABEL,
  ZONE_LABEL,
} from '../scheduling/labels.ts';
import { req, requirementKey, requirements } from '../scheduling/requirements.ts';
import { amiFamilyTraits } from './amifamily.ts';
import type { AmiFamily, Ec2InstanceInfo } from './types.ts';

const AWS = 'karpenter.k8s.aws/';
export const INSTANCE_CATEGORY_LABEL = `${AWS}instance-category`;
export const INSTANCE_FAMILY_LABEL = `${AWS}instance-family`;
export const INSTANCE_GENERATION_LABEL = `${AWS}instance-generation`;
export const INSTANCE_SIZE_LABEL = `${AWS}instance-size`;
export const INSTANCE_CAPABILITY_FLEX_LABEL = `${AWS}instance-capability-flex`;
const INSTANCE_CPU_LABEL = `${AWS}instance-cpu`;
const INSTANCE_CPU_MANUFACTURER_LABEL = `${AWS}instance-cpu-manufacturer`;
const INSTANCE_CPU_SUSTAINED_CLOCK_SPEED_LABEL = `${AWS}instance-cpu-sustained-clock-speed-mhz`;
const INSTANCE_MEMORY_LABEL = `${AWS}instance-memory`;
const INSTANCE_EBS_BANDWIDTH_LABEL = `${AWS}instance-ebs-bandwidth`;
export const INSTANCE_NETWORK_BANDWIDTH_LABEL = `${AWS}instance-network-bandwidth`;
export const INSTANCE_HYPERVISOR_LABEL = `${AWS}instance-hypervisor`;
const INSTANCE_ENCRYPTION_IN_TRANSIT_LABEL = `${AWS}instance-encryption-in-transit-supported`;
export const INSTANCE_LOCAL_NVME_LABEL = `${AWS}instance-local-nvme`;
export const INSTANCE_GPU_NAME_LABEL = `${AWS}instance-gpu-name`;
const INSTANCE_GPU_MANUFACTURER_LABEL = `${AWS}instance-gpu-manufacturer`;
export const INSTANCE_GPU_COUNT_LABEL = `${AWS}instance-gpu-count`;
const INSTANCE_GPU_MEMORY_LABEL = `${AWS}instance-gpu-memory`;
export const INSTANCE_ACCELERATOR_NAME_LABEL = `${AWS}instance-accelerator-name`;
const INSTANCE_ACCELERATOR_MANUFACTURER_LABEL = `${AWS}instance-accelerator-manufacturer`;
export const INSTANCE_ACCELERATOR_COUNT_LABEL = `${AWS}instance-accelerator-count`;
export const INSTANCE_TENANCY_LABEL = `${AWS}instance-tenancy`;
export const CAPACITY_RESERVATION_ID_LABEL = `${AWS}capacity-reservation-id`;
export const CAPACITY_RESERVATION_TYPE_LABEL = `${AWS}capacity-reservation-type`;
export const CAPACITY_RESERVATION_INTERRUPTIBLE_LABEL = `${AWS}capacity-reservation-interruptible`;

/** Karpenter's instance-type name scheme: group 1 is the category, group 3 the generation. */
const NAME_SCHEME = /^([a-z]+)(-[0-9]+tb)?([0-9]+).*\./;

/** Karpenter's lowerKabobCase: spaces to dashes, then lower case. */
export function lowerKebab(s: string): string {
  return s.replaceAll(' ', '-').toLowerCase();
}

/** EC2 architecture names to Kubernetes ones; anything else is kept as written (it will match nothing). */
export function kubeArch(arch: string): string {
  return arch === 'x86_64' ? 'amd64' : arch === 'arm64' ? 'arm64' : arch;
}

/** Where the instance type is offered, and under which node class. */
interface InstanceLabelContext {
  readonly region?: string;
  /** Zones the type is offered in (that the node class can use). */
  readonly zones: readonly string[];
  /** Zone ids for those zones, when known (e.g. from subnets); omitted otherwise. */
  readonly zoneIds?: readonly string[];
  /** Capacity types among on-demand and spot that the type supports. */
  readonly capacityTypes: readonly string[];
  readonly amiFamily?: AmiFamily;
}

const defined = (key: string, value: string | number | boolean | undefined): Requirement =>
  value === undefined ? req(key, false, []) : req(key, false, [String(value)]);

function nameLabels(name: string): Requirement[] {
  const scheme = NAME_SCHEME.exec(name);
  const parts = name.split('.');
  const two = parts.length === 2;
  return [
    defined(INSTANCE_CATEGORY_LABEL, scheme?.[1]),
    defined(INSTANCE_GENERATION_LABEL, scheme?.[3]),
    defined(INSTANCE_FAMILY_LABEL, two ? parts[0] : undefined),
    defined(INSTANCE_SIZE_LABEL, two ? parts[1] : undefined),
    defined(INSTANCE_CAPABILITY_FLEX_LABEL, String(parts[0]!.includes('-flex'))),
  ];
}

/** GPU labels come only from a single GpuInfo entry; accelerator labels from a single Neuron or inference device. */
function deviceLabels(info: Ec2InstanceInfo): Requirement[] {
  const gpu = info.gpus?.length === 1 ? info.gpus[0] : undefined;
  const neuron = info.neuronDevices?.length === 1 ? info.neuronDevices[0] : undefined;
  const inference =
    !info.neuronDevices?.length && info.inferenceAccelerators?.length === 1 ? info.inferenceAccelerators[0] : undefined;
  const accel = neuron ? { name: neuron.name, manufacturer: 'aws', count: neuron.count } : inference;
  const kebab = (s: string | undefined) => (s === undefined ? undefined : lowerKebab(s));
  return [
    defined(INSTANCE_GPU_NAME_LABEL, kebab(gpu?.name)),
    defined(INSTANCE_GPU_MANUFACTURER_LABEL, kebab(gpu?.manufacturer)),
    defined(INSTANCE_GPU_COUNT_LABEL, gpu?.count),
    defined(INSTANCE_GPU_MEMORY_LABEL, gpu?.memoryMiB),
    defined(INSTANCE_ACCELERATOR_NAME_LABEL, kebab(accel?.name)),
    defined(INSTANCE_ACCELERATOR_MANUFACTURER_LABEL, kebab(accel?.manufacturer)),
    defined(INSTANCE_ACCELERATOR_COUNT_LABEL, accel?.count),
  ];
}

/**
 * One object for each requirement of the types' labels with the same content. Of a type's ~30 such requirements
 * only its name's is its own (tenancy, arch, a CPU count, a family are alike from type to type): the AWS
 * catalog's ~1,400 types held ~37,000 requirement objects with a Set each, about 8 MiB, where a few thousand say
 * the same. Bounded by the distinct label values of the instance types the process has seen.
 */
const alike = new Map<string, Requirement>();

function shared(r: Requirement): Requirement {
  const key = requirementKey(r);
  const known = alike.get(key);
  if (known) return known;
  alike.set(key, r);
  return r;
}

/**
 * The labels that depend on the instance type alone (not on region, zones, capacity types or AMI family).
 * Requirements are immutable: the list is the caller's, its requirement objects are shared with every other
 * type that has the same one.
 */
export function ec2TypeRequirements(info: Ec2InstanceInfo): Requirement[] {
  return typeRequirementList(info).map(shared);
}

function typeRequirementList(info: Ec2InstanceInfo): Requirement[] {
  const storage = info.instanceStorage;
  return [
    req(INSTANCE_TYPE_LABEL, false, [info.name]),
    req(ARCH_LABEL, false, [kubeArch(info.arch)]),
    req(INSTANCE_TENANCY_LABEL, false, ['default', 'dedicated']),
    req(CAPACITY_RESERVATION_ID_LABEL, false, []),
    req(CAPACITY_RESERVATION_TYPE_LABEL, false, []),
    req(CAPACITY_RESERVATION_INTERRUPTIBLE_LABEL, false, []),
    defined(INSTANCE_CPU_LABEL, info.vcpu),
    defined(INSTANCE_MEMORY_LABEL, info.memoryMiB),
    defined(
      INSTANCE_CPU_MANUFACTURER_LABEL,
      info.cpuManufacturer === undefined ? undefined : lowerKebab(info.cpuManufacturer),
    ),
    defined(INSTANCE_CPU_SUSTAINED_CLOCK_SPEED_LABEL, info.sustainedClockSpeedMhz),
    defined(INSTANCE_EBS_BANDWIDTH_LABEL, info.ebsBandwidthMbps),
    defined(INSTANCE_NETWORK_BANDWIDTH_LABEL, info.networkBandwidthMbps),
    defined(INSTANCE_HYPERVISOR_LABEL, info.hypervisor),
    defined(INSTANCE_ENCRYPTION_IN_TRANSIT_LABEL, info.encryptionInTransitSupported),
    defined(INSTANCE_LOCAL_NVME_LABEL, storage?.nvme ? storage.totalSizeGB : undefined),
    ...nameLabels(info.name),
    ...deviceLabels(info),
  ];
}

/** The labels that depend on where and how the type is offered: zones, region, capacity types, OS. */
export function ec2ContextRequirements(arch: Ec2InstanceInfo['arch'], ctx: InstanceLabelContext): Requirement[] {
  const traits = amiFamilyTraits(ctx.amiFamily ?? 'AL2023');
  // A Windows node class offers only amd64 types; arm64 ones get an empty OS set and match no pod.
  const os = traits.windowsBuild ? (arch === 'x86_64' ? ['windows'] : []) : ['linux'];
  const rs = [
    req(OS_LABEL, false, os),
    req(ZONE_LABEL, false, ctx.zones),
    defined(REGION_LABEL, ctx.region),
    defined(WINDOWS_BUILD_LABEL, traits.windowsBuild),
    req(CAPACITY_TYPE_LABEL, false, ctx.capacityTypes),
  ];
  if (ctx.zoneIds?.length) rs.push(req(ZONE_ID_LABEL, false, ctx.zoneIds));
  return rs;
}

/** The instance type's requirements (labels): ec2TypeRequirements plus ec2ContextRequirements. */
export function ec2InstanceRequirements(info: Ec2InstanceInfo, ctx: InstanceLabelContext): Requirements {
  return requirements(...ec2TypeRequirements(info), ...ec2ContextRequirements(info.arch, ctx));
}
