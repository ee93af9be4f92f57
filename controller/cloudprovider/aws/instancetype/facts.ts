// DescribeInstanceTypes records -> InstanceFacts, the input of the capacity and label formulas. Facts that
// DescribeInstanceTypes does not carry (VPC-limits branch interfaces, Karpenter's baseline bandwidth table)
// come from an optional lookup the catalog provides.
import type { InstanceTypeInfo } from '@aws-sdk/client-ec2';
import type { InstanceFacts } from '../capacity.ts';

export interface ExtraFacts {
  /** vpc.amazonaws.com/pod-eni: VPC-limits BranchInterface when trunking-compatible, else 0. */
  readonly podENIs?: number;
  /** Karpenter's generated baseline bandwidth (label instance-network-bandwidth). */
  readonly networkBandwidthMbps?: number;
}

export type ExtraFactsLookup = (instanceType: string) => ExtraFacts | undefined;

/** Karpenter's label form of EC2 names: lower case, spaces as dashes ("Radeon Pro V520" -> radeon-pro-v520). */
export const lowerKebab = (s: string): string => s.trim().toLowerCase().replace(/\s+/g, '-');

function defaultCardENIs(info: InstanceTypeInfo): number | undefined {
  const n = info.NetworkInfo;
  if (!n) return undefined;
  const idx = n.DefaultNetworkCardIndex ?? 0;
  const card = n.NetworkCards?.find((c) => (c.NetworkCardIndex ?? 0) === idx);
  return card?.MaximumNetworkInterfaces ?? n.MaximumNetworkInterfaces;
}

/** The facts, or `{ skip }` with the reason when the record lacks what every formula needs. */
export function factsFromInstanceTypeInfo(info: InstanceTypeInfo, extra?: ExtraFacts): InstanceFacts | { readonly skip: string } {
  const name = info.InstanceType;
  const vcpu = info.VCpuInfo?.DefaultVCpus;
  const memoryMiB = info.MemoryInfo?.SizeInMiB;
  const arch = info.ProcessorInfo?.SupportedArchitectures?.[0];
  if (!name) return { skip: 'a DescribeInstanceTypes record has no InstanceType' };
  if (vcpu === undefined || memoryMiB === undefined) return { skip: `${name}: no VCpuInfo.DefaultVCpus or MemoryInfo.SizeInMiB` };
  if (arch !== 'x86_64' && arch !== 'arm64') return { skip: `${name}: architecture ${String(arch)} is not x86_64 or arm64` };
  const p = info.ProcessorInfo;
  const n = info.NetworkInfo;
  const ebs = info.EbsInfo;
  const gpus = info.GpuInfo?.Gpus?.map((g) => ({
    count: g.Count ?? 0,
    ...(g.Name ? { name: lowerKebab(g.Name) } : {}),
    ...(g.Manufacturer ? { manufacturer: lowerKebab(g.Manufacturer) } : {}),
    ...(g.MemoryInfo?.SizeInMiB !== undefined ? { memoryMiB: g.MemoryInfo.SizeInMiB } : {}),
  }));
  const neuron = info.NeuronInfo?.NeuronDevices?.map((d) => ({
    count: d.Count ?? 0,
    ...(d.Name ? { name: lowerKebab(d.Name) } : {}),
    coresPerDevice: d.CoreInfo?.Count ?? 0,
  }));
  const accelerators = info.InferenceAcceleratorInfo?.Accelerators?.map((a) => ({
    count: a.Count ?? 0,
    ...(a.Name ? { name: lowerKebab(a.Name) } : {}),
    ...(a.Manufacturer ? { manufacturer: lowerKebab(a.Manufacturer) } : {}),
  }));
  const storage = info.InstanceStorageInfo;
  const maxENIs = defaultCardENIs(info);
  const out: Record<string, unknown> = {
    name,
    vcpu,
    memoryMiB,
    arch,
    maxENIs,
    ipv4PerENI: n?.Ipv4AddressesPerInterface,
    efaMax: n?.EfaInfo?.MaximumEfaInterfaces,
    gpus: gpus?.length ? gpus : undefined,
    neuronDevices: neuron?.length ? neuron : undefined,
    inferenceAccelerators: accelerators?.length ? accelerators : undefined,
    instanceStorage: storage?.TotalSizeInGB !== undefined ? { totalSizeGB: storage.TotalSizeInGB, nvme: storage.NvmeSupport !== 'unsupported' } : undefined,
    cpuManufacturer: p?.Manufacturer ? lowerKebab(p.Manufacturer) : undefined,
    sustainedClockSpeedMhz: p?.SustainedClockSpeedInGhz !== undefined ? Math.round(p.SustainedClockSpeedInGhz * 1000) : undefined,
    hypervisor: info.Hypervisor ?? (info.BareMetal ? '' : undefined),
    encryptionInTransitSupported: n?.EncryptionInTransitSupported,
    ebsBandwidthMbps: ebs?.EbsOptimizedSupport === 'default' ? ebs.EbsOptimizedInfo?.MaximumBandwidthInMbps : undefined,
    bareMetal: info.BareMetal,
    podENIs: extra?.podENIs,
    networkBandwidthMbps: extra?.networkBandwidthMbps,
  };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out as unknown as InstanceFacts;
}

/** SupportedUsageClasses ∩ {on-demand, spot} (capacity-block is not offered through this path). */
export function capacityTypesOf(info: InstanceTypeInfo): Array<'on-demand' | 'spot'> {
  const classes = info.SupportedUsageClasses ?? [];
  return (['on-demand', 'spot'] as const).filter((c) => classes.includes(c));
}
