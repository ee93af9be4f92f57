// The EC2NodeClass (karpenter.k8s.aws/v1) as the AWS provider reads it: field names exactly as in the CRD of
// Karpenter v1.14.1 (spec/aws-provider.md §5). This is a structural stand-in until engine/api's parser exports
// its typed spec; it declares only what the provider reads, so the engine's type can replace it by an import.
// Quantities stay as written in YAML ("100Gi"); the provider parses them where it needs numbers.

export type AmiFamily = 'AL2' | 'AL2023' | 'Bottlerocket' | 'Windows2019' | 'Windows2022' | 'Windows2025' | 'Custom';

export interface SubnetSelectorTerm {
  readonly tags?: Readonly<Record<string, string>>;
  readonly id?: string;
}

export interface SecurityGroupSelectorTerm {
  readonly tags?: Readonly<Record<string, string>>;
  readonly id?: string;
  readonly name?: string;
}

export interface AmiSelectorTerm {
  readonly alias?: string;
  readonly tags?: Readonly<Record<string, string>>;
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

export interface BlockDevice {
  readonly deleteOnTermination?: boolean;
  readonly encrypted?: boolean;
  readonly iops?: number;
  readonly kmsKeyID?: string;
  readonly snapshotID?: string;
  readonly throughput?: number;
  readonly volumeInitializationRate?: number;
  /** A quantity as written: "100Gi". */
  readonly volumeSize?: string;
  readonly volumeType?: string;
}

export interface BlockDeviceMapping {
  readonly deviceName?: string;
  readonly rootVolume?: boolean;
  readonly ebs?: BlockDevice;
}

export interface MetadataOptions {
  readonly httpEndpoint?: 'enabled' | 'disabled';
  readonly httpProtocolIPv6?: 'enabled' | 'disabled';
  readonly httpPutResponseHopLimit?: number;
  readonly httpTokens?: 'required' | 'optional';
}

export interface NetworkInterface {
  readonly networkCardIndex?: number;
  readonly deviceIndex?: number;
  readonly interfaceType?: 'interface' | 'efa-only';
}

export interface EC2NodeClassSpec {
  readonly subnetSelectorTerms: readonly SubnetSelectorTerm[];
  readonly securityGroupSelectorTerms: readonly SecurityGroupSelectorTerm[];
  readonly amiSelectorTerms: readonly AmiSelectorTerm[];
  readonly amiFamily?: AmiFamily;
  readonly capacityReservationSelectorTerms?: readonly Readonly<Record<string, unknown>>[];
  readonly placementGroupSelector?: { readonly name?: string; readonly id?: string };
  readonly role?: string;
  readonly instanceProfile?: string;
  readonly userData?: string;
  readonly tags?: Readonly<Record<string, string>>;
  readonly kubelet?: KubeletConfiguration;
  readonly blockDeviceMappings?: readonly BlockDeviceMapping[];
  readonly instanceStorePolicy?: 'RAID0';
  readonly networkInterfaces?: readonly NetworkInterface[];
  readonly associatePublicIPAddress?: boolean;
  readonly ipPrefixCount?: number;
  readonly detailedMonitoring?: boolean;
  readonly metadataOptions?: MetadataOptions;
  readonly connectionTracking?: Readonly<Record<string, number>>;
  readonly context?: string;
  readonly cpuOptions?: { readonly nestedVirtualization?: 'enabled' | 'disabled' };
}

export interface SelectorRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';
  readonly values?: readonly string[];
}

export interface SubnetStatus {
  readonly id: string;
  readonly zone: string;
  readonly zoneID?: string;
}

export interface SecurityGroupStatus {
  readonly id: string;
  readonly name?: string;
}

export interface AmiStatus {
  readonly id: string;
  readonly name?: string;
  readonly deprecated?: boolean;
  readonly requirements: readonly SelectorRequirement[];
}

/** metav1.Condition as written to status.conditions. */
export interface Condition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration?: number;
  /** RFC 3339. */
  readonly lastTransitionTime: string;
}

export interface EC2NodeClassStatus {
  readonly subnets?: readonly SubnetStatus[];
  readonly securityGroups?: readonly SecurityGroupStatus[];
  readonly amis?: readonly AmiStatus[];
  readonly instanceProfile?: string;
  readonly conditions?: readonly Condition[];
}

export interface EC2NodeClass {
  readonly metadata: {
    readonly name: string;
    readonly uid?: string;
    readonly generation?: number;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly deletionTimestamp?: string;
  };
  readonly spec: EC2NodeClassSpec;
  readonly status?: EC2NodeClassStatus;
}
