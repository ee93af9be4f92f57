// Capacity, overhead and allocatable of one EC2 instance type, as Karpenter's AWS provider computes them
// (docs/karpenter/aws-provider.md §1; Karpenter pkg/providers/instancetype/types.go). Pure functions over an
// Ec2InstanceInfo and the node-class settings, reused by the AWS provider for live DescribeInstanceTypes
// results. Units are those of domain/resources.ts: cpu in millicores, memory and storage in bytes.
//
// Floating-point steps are written in the same order as Karpenter's Go code, so IEEE rounding gives the
// same integers (for example ceil(bytes × percent / 1024 / 1024) for the VM overhead).
import { CPU, EPHEMERAL_STORAGE, MEMORY, PODS, resourceValue, type Resources } from '../domain/resources.ts';
import { amiFamilyTraits } from './amifamily.ts';
import type { AmiFamily, CapacitySettings, Ec2InstanceInfo, KubeletSettings } from './types.ts';

const MiB = 2 ** 20;
const GiB = 2 ** 30;

export const POD_ENI = 'vpc.amazonaws.com/pod-eni';
export const EFA = 'vpc.amazonaws.com/efa';
export const NVIDIA_GPU = 'nvidia.com/gpu';
export const AMD_GPU = 'amd.com/gpu';
export const HABANA_GAUDI = 'habana.ai/gaudi';
export const AWS_NEURON = 'aws.amazon.com/neuron';
export const AWS_NEURON_CORE = 'aws.amazon.com/neuroncore';
export const PRIVATE_IPV4_ADDRESS = 'vpc.amazonaws.com/PrivateIPv4Address';

const DEFAULT_VM_MEMORY_OVERHEAD_PERCENT = 0.075;

/** Settings with every default applied and every field checked. */
export interface ResolvedCapacitySettings {
  readonly vmMemoryOverheadPercent: number;
  readonly reservedENIs: number;
  readonly amiFamily: AmiFamily;
  readonly kubelet: KubeletSettings;
  readonly blockDeviceMappings: NonNullable<CapacitySettings['blockDeviceMappings']>;
  readonly instanceStorePolicy?: 'RAID0';
}

function checkCount(field: string, v: number | undefined): void {
  if (v !== undefined && !(Number.isInteger(v) && v >= 0))
    throw new Error(`${field}: ${v} must be a non-negative integer`);
}

export function resolveCapacitySettings(s: CapacitySettings = {}): ResolvedCapacitySettings {
  const pct = s.vmMemoryOverheadPercent ?? DEFAULT_VM_MEMORY_OVERHEAD_PERCENT;
  if (!Number.isFinite(pct) || pct < 0 || pct >= 1)
    throw new Error(`vmMemoryOverheadPercent: ${pct} must be a number in [0, 1)`);
  checkCount('reservedENIs', s.reservedENIs);
  const kubelet = s.kubelet ?? {};
  checkCount('kubelet.maxPods', kubelet.maxPods);
  checkCount('kubelet.podsPerCore', kubelet.podsPerCore);
  const amiFamily = s.amiFamily ?? 'AL2023';
  amiFamilyTraits(amiFamily);
  if (s.instanceStorePolicy !== undefined && s.instanceStorePolicy !== 'RAID0') {
    throw new Error(`instanceStorePolicy: "${String(s.instanceStorePolicy)}" must be RAID0 or unset`);
  }
  const out = {
    vmMemoryOverheadPercent: pct,
    reservedENIs: s.reservedENIs ?? 0,
    amiFamily,
    kubelet,
    blockDeviceMappings: s.blockDeviceMappings ?? [],
  };
  return s.instanceStorePolicy ? { ...out, instanceStorePolicy: s.instanceStorePolicy } : out;
}

// ---------------------------------------------------------------------------------------------------
// Capacity

/** Whether the ENI-limited pod count can be computed with this many reserved ENIs. */
export function hasEniLimitedPods(info: Ec2InstanceInfo, reservedENIs = 0): boolean {
  if (info.maxENIs !== undefined && info.ipv4PerENI !== undefined) return true;
  return info.eniLimitedPods !== undefined && reservedENIs === 0;
}

/**
 * Whether podCapacity and kubeReserved can be computed: they need the ENI-limited count (with the configured
 * reservedENIs for pod density, with 0 for AL2/AL2023/Custom kube-reserved memory) only where the family uses it.
 */
export function canComputePods(info: Ec2InstanceInfo, s: ResolvedCapacitySettings): boolean {
  const traits = amiFamilyTraits(s.amiFamily);
  if (traits.usesENILimitedMemoryOverhead && !hasEniLimitedPods(info, 0)) return false;
  if (
    s.kubelet.maxPods === undefined &&
    traits.supportsENILimitedPodDensity &&
    !hasEniLimitedPods(info, s.reservedENIs)
  )
    return false;
  return true;
}

/** usableENIs × (IPv4PerENI − 1) + 2 with usableENIs = max(defaultCardENIs − reservedENIs, 0); 0 if none is usable. */
export function eniLimitedPods(info: Ec2InstanceInfo, reservedENIs = 0): number {
  if (info.maxENIs !== undefined && info.ipv4PerENI !== undefined) {
    const usable = Math.max(info.maxENIs - reservedENIs, 0);
    return usable === 0 ? 0 : usable * (info.ipv4PerENI - 1) + 2;
  }
  if (info.eniLimitedPods !== undefined && reservedENIs === 0) return info.eniLimitedPods;
  const why =
    info.eniLimitedPods !== undefined
      ? `reservedENIs ${reservedENIs} needs them`
      : 'no ENI-limited pod count is known either';
  throw new Error(`instance type ${info.name}: maxENIs and ipv4PerENI are unknown and ${why}`);
}

/** maxPods > ENI-limited (families that support it) > 110, then capped by podsPerCore × vCPUs where honoured. */
function podCapacity(info: Ec2InstanceInfo, s: ResolvedCapacitySettings): number {
  const traits = amiFamilyTraits(s.amiFamily);
  let count: number;
  if (s.kubelet.maxPods !== undefined) count = s.kubelet.maxPods;
  else if (traits.supportsENILimitedPodDensity) count = eniLimitedPods(info, s.reservedENIs);
  else count = 110;
  const perCore = s.kubelet.podsPerCore ?? 0;
  if (perCore > 0 && traits.podsPerCoreEnabled) count = Math.min(perCore * info.vcpu, count);
  return count;
}

/** Bytes: SizeInMiB, minus 64 MiB on arm64 (Graviton CMA), minus ceil(remaining × percent) MiB of VM overhead. */
export function memoryCapacity(
  info: Ec2InstanceInfo,
  vmMemoryOverheadPercent = DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
): number {
  const mib = info.arch === 'arm64' ? info.memoryMiB - 64 : info.memoryMiB;
  const bytes = mib * MiB;
  const overheadMiB = Math.ceil((bytes * vmMemoryOverheadPercent) / 1024 / 1024);
  return bytes - overheadMiB * MiB;
}

function volumeBytes(field: string, size: string): number {
  try {
    return resourceValue(EPHEMERAL_STORAGE, size);
  } catch (e) {
    throw new Error(`${field}: ${(e as Error).message}`, { cause: e });
  }
}

/** Bytes of ephemeral storage: RAID0 instance store > rootVolume mapping > family device mapping > default. */
function ephemeralStorageCapacity(info: Ec2InstanceInfo, s: ResolvedCapacitySettings): number {
  if (s.instanceStorePolicy === 'RAID0' && info.instanceStorage) return info.instanceStorage.totalSizeGB * 1e9;
  const traits = amiFamilyTraits(s.amiFamily);
  const bdms = s.blockDeviceMappings;
  if (bdms.length > 0) {
    const rootIdx = bdms.findIndex((b) => b.rootVolume);
    const root = bdms[rootIdx];
    if (root?.volumeSize !== undefined)
      return volumeBytes(`blockDeviceMappings[${rootIdx}].ebs.volumeSize`, root.volumeSize);
    if (s.amiFamily === 'Custom') {
      const last = bdms[bdms.length - 1]!;
      return last.volumeSize !== undefined
        ? volumeBytes(`blockDeviceMappings[${bdms.length - 1}].ebs.volumeSize`, last.volumeSize)
        : traits.defaultEphemeralBytes;
    }
    const idx = bdms.findIndex((b) => b.deviceName === traits.ephemeralDevice);
    const dev = bdms[idx];
    if (dev?.volumeSize !== undefined) return volumeBytes(`blockDeviceMappings[${idx}].ebs.volumeSize`, dev.volumeSize);
  }
  return traits.defaultEphemeralBytes;
}

function gpuCount(info: Ec2InstanceInfo, manufacturer: string): number {
  let n = 0;
  for (const g of info.gpus ?? []) if (g.manufacturer?.toLowerCase() === manufacturer) n += g.count;
  return n;
}

/** Extended resources with non-zero values (Karpenter drops zeros when it writes a NodeClaim). */
export function extendedResources(info: Ec2InstanceInfo, amiFamily: AmiFamily = 'AL2023'): Record<string, number> {
  const neuron = info.neuronDevices ?? [];
  const all: Record<string, number> = {
    [POD_ENI]: info.podENIs ?? 0,
    [NVIDIA_GPU]: gpuCount(info, 'nvidia'),
    [AMD_GPU]: gpuCount(info, 'amd'),
    [AWS_NEURON]: neuron.reduce((n, d) => n + d.count, 0),
    [AWS_NEURON_CORE]: neuron.reduce((n, d) => n + d.count * d.coresPerDevice, 0),
    [HABANA_GAUDI]: gpuCount(info, 'habana'),
    [EFA]: info.efaMax ?? 0,
  };
  // Windows nodes advertise their secondary IPv4 addresses (the VPC resource controller), amd64 only (Karpenter
  // gives arm64 no OS under a Windows AMI family): the VPC limits table's IPv4PerInterface - 1, and 0 for a type
  // the table lacks, whatever DescribeInstanceTypes says (aws/karpenter-provider-aws v1.14.1
  // pkg/providers/instancetype/types.go privateIPv4Address).
  if (amiFamilyTraits(amiFamily).windowsBuild && info.arch === 'x86_64')
    all[PRIVATE_IPV4_ADDRESS] = info.vpcIPv4PerInterface !== undefined ? info.vpcIPv4PerInterface - 1 : 0;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(all)) if (v !== 0) out[k] = v;
  return out;
}

function instanceCapacity(info: Ec2InstanceInfo, s: ResolvedCapacitySettings): Record<string, number> {
  return {
    [CPU]: info.vcpu * 1000,
    [MEMORY]: memoryCapacity(info, s.vmMemoryOverheadPercent),
    [EPHEMERAL_STORAGE]: ephemeralStorageCapacity(info, s),
    [PODS]: podCapacity(info, s),
    ...extendedResources(info, s.amiFamily),
  };
}

// ---------------------------------------------------------------------------------------------------
// Overhead

const CPU_BANDS: readonly (readonly [start: number, end: number, fraction: number])[] = [
  [0, 1000, 0.06],
  [1000, 2000, 0.01],
  [2000, 4000, 0.005],
  [4000, 2 ** 31, 0.0025],
];

/** Default kube-reserved cpu (millicores): a banded percentage, each band truncated to whole millicores. */
export function kubeReservedCpu(millicores: number): number {
  let total = 0;
  for (const [start, end, fraction] of CPU_BANDS) {
    if (millicores < start) continue;
    const width = millicores < end ? millicores - start : end - start;
    total += Math.trunc(width * fraction);
  }
  return total;
}

const RESERVED_KEYS: ReadonlySet<string> = new Set([CPU, MEMORY, EPHEMERAL_STORAGE, 'pid']);

function parseReserved(field: string, list: Readonly<Record<string, string>> | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(list ?? {})) {
    if (!RESERVED_KEYS.has(k))
      throw new Error(`${field}.${k}: unknown key (valid: cpu, memory, ephemeral-storage, pid)`);
    try {
      out[k] = resourceValue(k, v);
    } catch (e) {
      throw new Error(`${field}.${k}: ${(e as Error).message}`, { cause: e });
    }
  }
  return out;
}

/** Defaults (cpu bands, 11 × pods + 255 MiB, 1Gi ephemeral), then kubelet.kubeReserved per key. */
function kubeReserved(info: Ec2InstanceInfo, s: ResolvedCapacitySettings): Record<string, number> {
  const traits = amiFamilyTraits(s.amiFamily);
  // AL2, AL2023 and Custom size memory by the ENI-limited count (reservedENIs 0) whatever maxPods says.
  const pods = traits.usesENILimitedMemoryOverhead ? eniLimitedPods(info, 0) : podCapacity(info, s);
  const defaults = {
    [CPU]: kubeReservedCpu(info.vcpu * 1000),
    [MEMORY]: (11 * pods + 255) * MiB,
    [EPHEMERAL_STORAGE]: GiB,
  };
  return { ...defaults, ...parseReserved('kubelet.kubeReserved', s.kubelet.kubeReserved) };
}

function systemReserved(s: ResolvedCapacitySettings): Record<string, number> {
  return parseReserved('kubelet.systemReserved', s.kubelet.systemReserved);
}

/** An eviction signal: a quantity, or a percentage of capacity rounded up ("100%" disables it: 0). */
function evictionSignal(field: string, resource: string, capacity: number, value: string): number {
  const v = value.trim();
  if (v.endsWith('%')) {
    const text = v.slice(0, -1);
    const p = Number(text);
    if (text === '' || !Number.isFinite(p) || p < 0 || p > 100)
      throw new Error(`${field}: "${value}" is not a percentage in [0%, 100%]`);
    return Math.ceil((capacity / 100) * (p === 100 ? 0 : p));
  }
  try {
    return resourceValue(resource, v);
  } catch (e) {
    throw new Error(`${field}: ${(e as Error).message}`, { cause: e });
  }
}

/** Hard eviction threshold: memory 100Mi and ceil(10% of ephemeral), each overridable by kubelet.evictionHard. */
export function evictionThreshold(
  memoryBytes: number,
  ephemeralBytes: number,
  evictionHard?: Readonly<Record<string, string>>,
): Record<string, number> {
  const out: Record<string, number> = {
    [MEMORY]: 100 * MiB,
    [EPHEMERAL_STORAGE]: Math.ceil((ephemeralBytes / 100) * 10),
  };
  const mem = evictionHard?.['memory.available'];
  if (mem !== undefined)
    out[MEMORY] = evictionSignal('kubelet.evictionHard.memory.available', MEMORY, memoryBytes, mem);
  const fs = evictionHard?.['nodefs.available'];
  if (fs !== undefined)
    out[EPHEMERAL_STORAGE] = evictionSignal(
      'kubelet.evictionHard.nodefs.available',
      EPHEMERAL_STORAGE,
      ephemeralBytes,
      fs,
    );
  return out;
}

export interface InstanceResources {
  readonly capacity: Resources;
  readonly kubeReserved: Resources;
  readonly systemReserved: Resources;
  readonly evictionThreshold: Resources;
  /** kubeReserved + systemReserved + evictionThreshold. */
  readonly overhead: Resources;
  /** capacity − overhead, for the resources capacity has. */
  readonly allocatable: Resources;
}

function allocatableOf(capacity: Resources, overhead: Resources): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(capacity)) out[k] = v - (overhead[k] ?? 0);
  return out;
}

/** Everything at once, for one instance type under one node class (settings resolved and checked here). */
export function instanceResources(info: Ec2InstanceInfo, settings: CapacitySettings = {}): InstanceResources {
  return instanceResourcesWith(info, resolveCapacitySettings(settings));
}

/** instanceResources with settings already resolved (the catalog resolves once per call, not per type). */
export function instanceResourcesWith(info: Ec2InstanceInfo, s: ResolvedCapacitySettings): InstanceResources {
  const capacity = instanceCapacity(info, s);
  const kr = kubeReserved(info, s);
  const sr = systemReserved(s);
  const et = evictionThreshold(capacity[MEMORY]!, capacity[EPHEMERAL_STORAGE]!, s.kubelet.evictionHard);
  const overhead: Record<string, number> = {};
  for (const part of [kr, sr, et]) for (const [k, v] of Object.entries(part)) overhead[k] = (overhead[k] ?? 0) + v;
  return {
    capacity,
    kubeReserved: kr,
    systemReserved: sr,
    evictionThreshold: et,
    overhead,
    allocatable: allocatableOf(capacity, overhead),
  };
}
