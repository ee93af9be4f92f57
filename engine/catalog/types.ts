// Inputs of the EC2 capacity and label formulas: the facts of one instance type (what DescribeInstanceTypes
// plus Karpenter's VPC-limits and bandwidth tables say about it) and the node-class settings that change the
// result. The catalog builds these records from its generated data; the AWS provider builds them from live
// DescribeInstanceTypes output. Optional fields are facts some source may lack: they are left out, never
// guessed.

/** EC2's spelling of the architecture (ProcessorInfo.SupportedArchitectures[0]). */
type Ec2Architecture = 'x86_64' | 'arm64';

/** One GpuInfo.Gpus entry. Manufacturer as EC2 writes it ("NVIDIA", "AMD", "Habana") or lower-kebab. */
export interface GpuDevice {
  readonly count: number;
  readonly name?: string;
  readonly manufacturer?: string;
  readonly memoryMiB?: number;
}

/** One NeuronInfo.NeuronDevices entry (Inferentia, Trainium). */
export interface NeuronDevice {
  readonly count: number;
  readonly name?: string;
  /** NeuronDevices[].CoreInfo.Count. */
  readonly coresPerDevice: number;
}

/** One InferenceAcceleratorInfo.Accelerators entry that is not a Neuron device (for example Qualcomm AI 100). */
export interface InferenceAccelerator {
  readonly count: number;
  readonly name?: string;
  readonly manufacturer?: string;
}

export interface Ec2InstanceInfo {
  readonly name: string;
  /** VCpuInfo.DefaultVCpus. */
  readonly vcpu: number;
  /** MemoryInfo.SizeInMiB. */
  readonly memoryMiB: number;
  readonly arch: Ec2Architecture;
  /** MaximumNetworkInterfaces of the default network card (not the instance total). */
  readonly maxENIs?: number;
  /** NetworkInfo.Ipv4AddressesPerInterface. */
  readonly ipv4PerENI?: number;
  /**
   * The ENI-limited pod count, for the few types whose ENI breakdown no source gives (the docs print it).
   * Used only when maxENIs/ipv4PerENI are absent, and then only with reservedENIs 0.
   */
  readonly eniLimitedPods?: number;
  /** VPC-limits BranchInterface when trunking-compatible, else 0 (vpc.amazonaws.com/pod-eni). */
  readonly podENIs?: number;
  /**
   * IPv4PerInterface of Karpenter's VPC limits table (the AWS provider's zz_generated.vpclimits.go), absent for
   * a type the table lacks: what Windows nodes advertise as vpc.amazonaws.com/PrivateIPv4Address (minus one).
   */
  readonly vpcIPv4PerInterface?: number;
  /** NetworkInfo.EfaInfo.MaximumEfaInterfaces. */
  readonly efaMax?: number;
  readonly gpus?: readonly GpuDevice[];
  readonly neuronDevices?: readonly NeuronDevice[];
  readonly inferenceAccelerators?: readonly InferenceAccelerator[];
  /** InstanceStorageInfo: TotalSizeInGB (AWS decimal GB) and whether NVMe is supported. */
  readonly instanceStorage?: { readonly totalSizeGB: number; readonly nvme: boolean };
  /** Lower-kebab ProcessorInfo.Manufacturer: intel, amd, aws, apple. */
  readonly cpuManufacturer?: string;
  /** round(SustainedClockSpeedInGhz × 1000). */
  readonly sustainedClockSpeedMhz?: number;
  /** "nitro", "xen" or "" (bare metal). */
  readonly hypervisor?: string;
  readonly encryptionInTransitSupported?: boolean;
  /** EbsOptimizedInfo.MaximumBandwidthInMbps, only when EBS optimisation is on by default. */
  readonly ebsBandwidthMbps?: number;
  /** Karpenter's generated baseline bandwidth table. */
  readonly networkBandwidthMbps?: number;
}

/** spec.amiFamily of an EC2NodeClass (the alias families resolve to these). */
export type AmiFamily = 'AL2' | 'AL2023' | 'Bottlerocket' | 'Windows2019' | 'Windows2022' | 'Windows2025' | 'Custom';

export const AMI_FAMILIES: readonly AmiFamily[] = [
  'AL2',
  'AL2023',
  'Bottlerocket',
  'Windows2019',
  'Windows2022',
  'Windows2025',
  'Custom',
];

/** spec.kubelet fields that change capacity or overhead (v1.14.1 shape). Quantities as written in YAML. */
export interface KubeletSettings {
  readonly maxPods?: number;
  readonly podsPerCore?: number;
  /** Keys cpu, memory, ephemeral-storage, pid. */
  readonly kubeReserved?: Readonly<Record<string, string>>;
  readonly systemReserved?: Readonly<Record<string, string>>;
  /** memory.available and nodefs.available change the threshold: "500Mi" or "5%". */
  readonly evictionHard?: Readonly<Record<string, string>>;
}

/** One spec.blockDeviceMappings entry, reduced to what sizing needs. */
interface CapacityBlockDevice {
  readonly deviceName?: string;
  readonly rootVolume?: boolean;
  /** ebs.volumeSize as a quantity ("100Gi"). */
  readonly volumeSize?: string;
}

export interface CapacitySettings {
  /** VM_MEMORY_OVERHEAD_PERCENT; default 0.075. */
  readonly vmMemoryOverheadPercent?: number;
  /** RESERVED_ENIS; default 0. */
  readonly reservedENIs?: number;
  /** Default AL2023. */
  readonly amiFamily?: AmiFamily;
  readonly kubelet?: KubeletSettings;
  readonly blockDeviceMappings?: readonly CapacityBlockDevice[];
  readonly instanceStorePolicy?: 'RAID0';
}
