// DescribeInstanceTypes records -> the engine's Ec2InstanceInfo, the one input of its capacity and label
// formulas (engine/catalog allocatable.ts, labels.ts). This is the provider's only adapter onto them: the
// field meanings are those documented on Ec2InstanceInfo. Facts that DescribeInstanceTypes does not carry
// (VPC-limits branch interfaces, Karpenter's baseline bandwidth table) come from a lookup; catalog.ts builds
// one from the engine's committed catalog.
import type { InstanceTypeInfo } from '@aws-sdk/client-ec2';
import { lowerKebab, type Ec2InstanceInfo } from '../../../../engine/index.ts';

export type ExtraFacts = Pick<Ec2InstanceInfo, 'podENIs' | 'networkBandwidthMbps' | 'vpcIPv4PerInterface'>;

export type ExtraFactsLookup = (instanceType: string) => ExtraFacts | undefined;

/** MaximumNetworkInterfaces of the default network card: the VPC CNI uses only that card (p5.48xlarge: 2, not 64). */
function defaultCardENIs(info: InstanceTypeInfo): number | undefined {
  const n = info.NetworkInfo;
  if (!n) return undefined;
  const idx = n.DefaultNetworkCardIndex ?? 0;
  const card = n.NetworkCards?.find((c) => (c.NetworkCardIndex ?? 0) === idx);
  return card?.MaximumNetworkInterfaces ?? n.MaximumNetworkInterfaces;
}

/** Drops undefined fields: Ec2InstanceInfo's optional facts are absent when unknown, never undefined. */
function known<T extends object>(o: Record<string, unknown>): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o as T;
}

const nonEmpty = <T>(list: T[] | undefined): T[] | undefined => (list?.length ? list : undefined);

// GPU and accelerator names stay as EC2 writes them ("Radeon Pro V520", "AMD"): the engine's formulas compare
// manufacturers case-insensitively and its labels lower-kebab the names.
function devices(info: InstanceTypeInfo): Pick<Ec2InstanceInfo, 'gpus' | 'neuronDevices' | 'inferenceAccelerators'> {
  const gpus = info.GpuInfo?.Gpus?.map((g) =>
    known<NonNullable<Ec2InstanceInfo['gpus']>[number]>({
      count: g.Count ?? 0,
      name: g.Name,
      manufacturer: g.Manufacturer,
      memoryMiB: g.MemoryInfo?.SizeInMiB,
    }),
  );
  const neuronDevices = info.NeuronInfo?.NeuronDevices?.map((d) =>
    known<NonNullable<Ec2InstanceInfo['neuronDevices']>[number]>({
      count: d.Count ?? 0,
      name: d.Name,
      coresPerDevice: d.CoreInfo?.Count ?? 0,
    }),
  );
  const inferenceAccelerators = info.InferenceAcceleratorInfo?.Accelerators?.map((a) =>
    known<NonNullable<Ec2InstanceInfo['inferenceAccelerators']>[number]>({
      count: a.Count ?? 0,
      name: a.Name,
      manufacturer: a.Manufacturer,
    }),
  );
  return known({
    gpus: nonEmpty(gpus),
    neuronDevices: nonEmpty(neuronDevices),
    inferenceAccelerators: nonEmpty(inferenceAccelerators),
  });
}

/** The facts, or `{ skip }` with the reason when the record lacks what every formula needs. */
export function factsFromInstanceTypeInfo(
  info: InstanceTypeInfo,
  extra?: ExtraFacts,
): Ec2InstanceInfo | { readonly skip: string } {
  const name = info.InstanceType;
  const vcpu = info.VCpuInfo?.DefaultVCpus;
  const memoryMiB = info.MemoryInfo?.SizeInMiB;
  const arch = info.ProcessorInfo?.SupportedArchitectures?.[0];
  if (!name) return { skip: 'a DescribeInstanceTypes record has no InstanceType' };
  if (vcpu === undefined || memoryMiB === undefined)
    return { skip: `${name}: no VCpuInfo.DefaultVCpus or MemoryInfo.SizeInMiB` };
  if (arch !== 'x86_64' && arch !== 'arm64')
    return { skip: `${name}: architecture ${String(arch)} is not x86_64 or arm64` };
  const p = info.ProcessorInfo;
  const n = info.NetworkInfo;
  const ebs = info.EbsInfo;
  const storage = info.InstanceStorageInfo;
  return known<Ec2InstanceInfo>({
    name,
    vcpu,
    memoryMiB,
    arch,
    maxENIs: defaultCardENIs(info),
    ipv4PerENI: n?.Ipv4AddressesPerInterface,
    efaMax: n?.EfaInfo?.MaximumEfaInterfaces,
    ...devices(info),
    instanceStorage:
      storage?.TotalSizeInGB !== undefined
        ? { totalSizeGB: storage.TotalSizeInGB, nvme: storage.NvmeSupport !== 'unsupported' }
        : undefined,
    cpuManufacturer: p?.Manufacturer ? lowerKebab(p.Manufacturer) : undefined,
    sustainedClockSpeedMhz:
      p?.SustainedClockSpeedInGhz !== undefined ? Math.round(p.SustainedClockSpeedInGhz * 1000) : undefined,
    // Karpenter labels bare metal (no Hypervisor in the record) with an empty hypervisor.
    hypervisor: info.Hypervisor ?? (info.BareMetal ? '' : undefined),
    encryptionInTransitSupported: n?.EncryptionInTransitSupported,
    ebsBandwidthMbps: ebs?.EbsOptimizedSupport === 'default' ? ebs.EbsOptimizedInfo?.MaximumBandwidthInMbps : undefined,
    podENIs: extra?.podENIs,
    vpcIPv4PerInterface: extra?.vpcIPv4PerInterface,
    networkBandwidthMbps: extra?.networkBandwidthMbps,
  });
}

/** SupportedUsageClasses ∩ {on-demand, spot} (capacity-block is not offered through this path). */
export function capacityTypesOf(info: InstanceTypeInfo): Array<'on-demand' | 'spot'> {
  const classes = info.SupportedUsageClasses ?? [];
  return (['on-demand', 'spot'] as const).filter((c) => classes.includes(c));
}
