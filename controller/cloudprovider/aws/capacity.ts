// Capacity, overhead and allocatable of one instance type (spec/aws-provider.md §1, Karpenter
// pkg/providers/instancetype/types.go). This is the provider's thin seam onto the formulas: the shapes
// (InstanceFacts = engine/catalog's Ec2InstanceInfo, CapacitySettings) and `instanceResources` match the
// catalog's, which should replace this file's body once engine/catalog is merged.
import { resourceValue, type Resources } from '../../../engine/index.ts';
import type { AmiFamily, BlockDeviceMapping, KubeletConfiguration } from './nodeclass-types.ts';

export interface InstanceFacts {
  readonly name: string;
  readonly vcpu: number;
  readonly memoryMiB: number;
  readonly arch: 'x86_64' | 'arm64';
  /** MaximumNetworkInterfaces of the default network card. */
  readonly maxENIs?: number;
  readonly ipv4PerENI?: number;
  /** vpc.amazonaws.com/pod-eni (VPC-limits branch interfaces when trunking-compatible). */
  readonly podENIs?: number;
  readonly efaMax?: number;
  readonly gpus?: readonly { readonly count: number; readonly name?: string; readonly manufacturer?: string; readonly memoryMiB?: number }[];
  readonly neuronDevices?: readonly { readonly count: number; readonly name?: string; readonly coresPerDevice: number }[];
  readonly inferenceAccelerators?: readonly { readonly count: number; readonly name?: string; readonly manufacturer?: string }[];
  readonly instanceStorage?: { readonly totalSizeGB: number; readonly nvme: boolean };
  readonly cpuManufacturer?: string;
  readonly sustainedClockSpeedMhz?: number;
  readonly hypervisor?: string;
  readonly encryptionInTransitSupported?: boolean;
  readonly ebsBandwidthMbps?: number;
  readonly networkBandwidthMbps?: number;
  readonly bareMetal?: boolean;
}

export interface CapacitySettings {
  readonly vmMemoryOverheadPercent: number;
  readonly reservedENIs: number;
  readonly amiFamily: AmiFamily;
  readonly kubelet?: KubeletConfiguration;
  readonly blockDeviceMappings?: readonly BlockDeviceMapping[];
  readonly instanceStorePolicy?: 'RAID0';
  /** Interfaces of type efa-only declared on network card 0 (spec.networkInterfaces). */
  readonly efaOnlyInterfacesOnCard0?: number;
  /** Count of efa-only interfaces in spec.networkInterfaces, when the list is set. */
  readonly efaInterfaces?: number;
}

export interface InstanceResources {
  readonly capacity: Resources;
  readonly overhead: Resources;
  readonly allocatable: Resources;
}

const MiB = 2 ** 20;
const GiB = 2 ** 30;

interface FamilyTraits {
  readonly ephemeralDevice?: string;
  readonly defaultEphemeralBytes: number;
  readonly eniLimitedDensity: boolean;
  readonly eniLimitedMemoryOverhead: boolean;
  readonly podsPerCore: boolean;
}

const TRAITS: Readonly<Record<AmiFamily, FamilyTraits>> = {
  AL2: { ephemeralDevice: '/dev/xvda', defaultEphemeralBytes: 20 * GiB, eniLimitedDensity: true, eniLimitedMemoryOverhead: true, podsPerCore: true },
  AL2023: { ephemeralDevice: '/dev/xvda', defaultEphemeralBytes: 20 * GiB, eniLimitedDensity: true, eniLimitedMemoryOverhead: true, podsPerCore: true },
  Custom: { defaultEphemeralBytes: 20 * GiB, eniLimitedDensity: true, eniLimitedMemoryOverhead: true, podsPerCore: true },
  Bottlerocket: { ephemeralDevice: '/dev/xvdb', defaultEphemeralBytes: 20 * GiB, eniLimitedDensity: true, eniLimitedMemoryOverhead: false, podsPerCore: false },
  Windows2019: { ephemeralDevice: '/dev/sda1', defaultEphemeralBytes: 50 * GiB, eniLimitedDensity: false, eniLimitedMemoryOverhead: false, podsPerCore: true },
  Windows2022: { ephemeralDevice: '/dev/sda1', defaultEphemeralBytes: 50 * GiB, eniLimitedDensity: false, eniLimitedMemoryOverhead: false, podsPerCore: true },
  Windows2025: { ephemeralDevice: '/dev/sda1', defaultEphemeralBytes: 50 * GiB, eniLimitedDensity: false, eniLimitedMemoryOverhead: false, podsPerCore: true },
};

export const isWindows = (f: AmiFamily): boolean => f.startsWith('Windows');

/** usableENIs × (IPv4PerENI − 1) + 2, or 0 when no ENI is usable; undefined when the facts are missing. */
export function eniLimitedPods(info: InstanceFacts, reservedENIs: number, efaOnCard0 = 0): number | undefined {
  if (info.maxENIs === undefined || info.ipv4PerENI === undefined) return undefined;
  const usable = Math.max(info.maxENIs - reservedENIs - efaOnCard0, 0);
  return usable === 0 ? 0 : usable * (info.ipv4PerENI - 1) + 2;
}

export function podCapacity(info: InstanceFacts, s: CapacitySettings): number {
  const t = TRAITS[s.amiFamily];
  let pods = s.kubelet?.maxPods ?? (t.eniLimitedDensity ? eniLimitedPods(info, s.reservedENIs, s.efaOnlyInterfacesOnCard0) ?? 110 : 110);
  const perCore = s.kubelet?.podsPerCore ?? 0;
  if (perCore > 0 && t.podsPerCore) pods = Math.min(perCore * info.vcpu, pods);
  return pods;
}

export function memoryCapacity(info: InstanceFacts, vmMemoryOverheadPercent: number): number {
  let mib = info.memoryMiB;
  if (info.arch === 'arm64') mib -= 64; // Graviton CMA reservation
  const overheadMiB = Math.ceil((mib * MiB * vmMemoryOverheadPercent) / 1024 / 1024);
  return (mib - overheadMiB) * MiB;
}

const quantityBytes = (q: string | undefined): number | undefined => (q === undefined ? undefined : resourceValue('memory', q));

export function ephemeralStorageCapacity(info: InstanceFacts, s: CapacitySettings): number {
  const t = TRAITS[s.amiFamily];
  const bdms = s.blockDeviceMappings ?? [];
  if (s.instanceStorePolicy === 'RAID0' && info.instanceStorage) return info.instanceStorage.totalSizeGB * 1e9;
  const root = bdms.find((b) => b.rootVolume && b.ebs?.volumeSize !== undefined);
  if (root) return quantityBytes(root.ebs?.volumeSize) ?? t.defaultEphemeralBytes;
  if (s.amiFamily === 'Custom') return bdms.length ? quantityBytes(bdms[bdms.length - 1]?.ebs?.volumeSize) ?? 20 * GiB : 20 * GiB;
  const dev = bdms.find((b) => b.deviceName === t.ephemeralDevice && b.ebs?.volumeSize !== undefined);
  return dev ? quantityBytes(dev.ebs?.volumeSize) ?? t.defaultEphemeralBytes : t.defaultEphemeralBytes;
}

const GPU_RESOURCE: Readonly<Record<string, string>> = { nvidia: 'nvidia.com/gpu', amd: 'amd.com/gpu', habana: 'habana.ai/gaudi' };

function extendedResources(info: InstanceFacts, s: CapacitySettings): Record<string, number> {
  const out: Record<string, number> = {};
  const add = (k: string, v: number) => (out[k] = (out[k] ?? 0) + v);
  if (info.podENIs !== undefined) add('vpc.amazonaws.com/pod-eni', info.podENIs);
  for (const g of info.gpus ?? []) {
    const r = GPU_RESOURCE[(g.manufacturer ?? '').toLowerCase()];
    if (r) add(r, g.count);
  }
  for (const d of info.neuronDevices ?? []) {
    add('aws.amazon.com/neuron', d.count);
    add('aws.amazon.com/neuroncore', d.count * d.coresPerDevice);
  }
  add('vpc.amazonaws.com/efa', s.efaInterfaces ?? info.efaMax ?? 0);
  if (isWindows(s.amiFamily) && info.ipv4PerENI !== undefined) add('vpc.amazonaws.com/PrivateIPv4Address', info.ipv4PerENI - 1);
  return out;
}

export function instanceCapacity(info: InstanceFacts, s: CapacitySettings): Record<string, number> {
  return {
    cpu: info.vcpu * 1000,
    memory: memoryCapacity(info, s.vmMemoryOverheadPercent),
    'ephemeral-storage': ephemeralStorageCapacity(info, s),
    pods: podCapacity(info, s),
    ...extendedResources(info, s),
  };
}

/** 6% of the first core, 1% of the second, 0.5% of cores 3-4, 0.25% above; each band truncated. */
export function kubeReservedCpu(millicores: number): number {
  const bands: ReadonlyArray<readonly [number, number, number]> = [[0, 1000, 0.06], [1000, 2000, 0.01], [2000, 4000, 0.005], [4000, Infinity, 0.0025]];
  let out = 0;
  for (const [lo, hi, pct] of bands) if (millicores > lo) out += Math.trunc((Math.min(millicores, hi) - lo) * pct);
  return out;
}

function parseList(list: Readonly<Record<string, string>> | undefined, field: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(list ?? {})) {
    if (k === 'pid') continue; // a kubelet reservation, not a schedulable resource
    try {
      out[k] = resourceValue(k, v);
    } catch (e) {
      throw new Error(`spec.kubelet.${field}.${k}: ${(e as Error).message}`, { cause: e });
    }
  }
  return out;
}

function kubeReserved(info: InstanceFacts, s: CapacitySettings, pods: number): Record<string, number> {
  const t = TRAITS[s.amiFamily];
  const memPods = t.eniLimitedMemoryOverhead ? eniLimitedPods(info, 0) ?? pods : pods;
  return {
    cpu: kubeReservedCpu(info.vcpu * 1000),
    memory: (11 * memPods + 255) * MiB,
    'ephemeral-storage': GiB,
    ...parseList(s.kubelet?.kubeReserved, 'kubeReserved'),
  };
}

/** An eviction signal: an absolute quantity, or a percentage of capacity rounded up ("100%" counts as 0). */
function threshold(value: string | undefined, capacity: number, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(value.trim());
  if (pct) {
    const p = Number(pct[1]);
    return p >= 100 ? 0 : Math.ceil((capacity * p) / 100);
  }
  try {
    return resourceValue('memory', value);
  } catch (e) {
    throw new Error(`spec.kubelet.evictionHard.${field}: ${(e as Error).message}`, { cause: e });
  }
}

export function evictionThreshold(memoryBytes: number, ephemeralBytes: number, evictionHard?: Readonly<Record<string, string>>): Record<string, number> {
  return {
    memory: threshold(evictionHard?.['memory.available'], memoryBytes, 100 * MiB, 'memory.available'),
    'ephemeral-storage': threshold(evictionHard?.['nodefs.available'], ephemeralBytes, Math.ceil(ephemeralBytes * 0.1), 'nodefs.available'),
  };
}

export function instanceResources(info: InstanceFacts, s: CapacitySettings): InstanceResources {
  const capacity = instanceCapacity(info, s);
  const parts = [
    kubeReserved(info, s, capacity.pods ?? 0),
    parseList(s.kubelet?.systemReserved, 'systemReserved'),
    evictionThreshold(capacity.memory ?? 0, capacity['ephemeral-storage'] ?? 0, s.kubelet?.evictionHard),
  ];
  const overhead: Record<string, number> = {};
  for (const p of parts) for (const [k, v] of Object.entries(p)) overhead[k] = (overhead[k] ?? 0) + v;
  const allocatable: Record<string, number> = {};
  for (const [k, v] of Object.entries(capacity)) allocatable[k] = v - (overhead[k] ?? 0);
  return { capacity, overhead, allocatable };
}
