// What an AMI family changes in capacity, overhead and labels (Karpenter pkg/providers/amifamily: each
// family's FeatureFlags, EphemeralBlockDevice and DefaultBlockDeviceMappings; docs/karpenter/aws-provider.md §1-§2).
import type { AmiFamily } from './types.ts';
import { AMI_FAMILIES } from './types.ts';

const GiB = 2 ** 30;

/** What an AMI family changes (amifamily FeatureFlags, EphemeralBlockDevice, DefaultBlockDeviceMappings). */
interface AmiFamilyTraits {
  readonly supportsENILimitedPodDensity: boolean;
  readonly podsPerCoreEnabled: boolean;
  readonly usesENILimitedMemoryOverhead: boolean;
  /** The device whose mapping sizes ephemeral storage; undefined for Custom. */
  readonly ephemeralDevice?: string;
  /** Size of the family's default ephemeral volume. */
  readonly defaultEphemeralBytes: number;
  readonly windowsBuild?: string;
}

const LINUX_DEFAULTS = {
  supportsENILimitedPodDensity: true,
  podsPerCoreEnabled: true,
  usesENILimitedMemoryOverhead: true,
};
const windows = (build: string): AmiFamilyTraits => ({
  supportsENILimitedPodDensity: false,
  podsPerCoreEnabled: true,
  usesENILimitedMemoryOverhead: false,
  ephemeralDevice: '/dev/sda1',
  defaultEphemeralBytes: 50 * GiB,
  windowsBuild: build,
});

const TRAITS: Readonly<Record<AmiFamily, AmiFamilyTraits>> = {
  AL2: { ...LINUX_DEFAULTS, ephemeralDevice: '/dev/xvda', defaultEphemeralBytes: 20 * GiB },
  AL2023: { ...LINUX_DEFAULTS, ephemeralDevice: '/dev/xvda', defaultEphemeralBytes: 20 * GiB },
  // Bottlerocket's /dev/xvda is its 4Gi OS volume; pods use the /dev/xvdb data volume.
  Bottlerocket: {
    supportsENILimitedPodDensity: true,
    podsPerCoreEnabled: false,
    usesENILimitedMemoryOverhead: false,
    ephemeralDevice: '/dev/xvdb',
    defaultEphemeralBytes: 20 * GiB,
  },
  Windows2019: windows('10.0.17763'),
  Windows2022: windows('10.0.20348'),
  Windows2025: windows('10.0.26100'),
  Custom: { ...LINUX_DEFAULTS, defaultEphemeralBytes: 20 * GiB },
};

export function amiFamilyTraits(family: AmiFamily): AmiFamilyTraits {
  const t = TRAITS[family];
  if (!t) throw new Error(`amiFamily: "${String(family)}" is not one of ${AMI_FAMILIES.join(', ')}`);
  return t;
}
