// AMI aliases (family@version) -> the SSM public parameters that name EKS-optimized images, with the
// requirements each image serves (docs/karpenter/aws-provider.md §5 "AMIs, by alias"; Karpenter amifamily/*.go).
import {
  amiFamilyTraits,
  ARCH_LABEL,
  INSTANCE_ACCELERATOR_COUNT_LABEL,
  INSTANCE_GPU_COUNT_LABEL,
  kubeArch,
  OS_LABEL,
  WINDOWS_BUILD_LABEL,
  type AMIFamily,
  type EC2NodeClassStatus,
} from '../../../../engine/index.ts';

/** One status.amis[].requirements entry (the engine's status type). */
export type AmiRequirement = NonNullable<EC2NodeClassStatus['amis'][number]['requirements']>[number];

export type Variant = 'standard' | 'nvidia' | 'neuron';
type Ec2Arch = 'x86_64' | 'arm64';

interface AliasParameter {
  readonly path: string;
  readonly arch: Ec2Arch;
  /** The variants the image serves (the AL2 "-gpu" image serves both nvidia and neuron). */
  readonly variants: readonly Variant[];
}

interface Alias {
  readonly family: 'al2' | 'al2023' | 'bottlerocket' | 'windows2019' | 'windows2022' | 'windows2025';
  readonly version: string;
}

// The alias families; the engine's parser maps them to spec.amiFamily values (EC2NodeClass.amiFamily).
const ALIAS_FAMILIES: readonly string[] = [
  'al2',
  'al2023',
  'bottlerocket',
  'windows2019',
  'windows2022',
  'windows2025',
] satisfies Alias['family'][];

export function parseAlias(alias: string): Alias {
  const m = /^([a-z0-9]+)@(.+)$/.exec(alias.trim().toLowerCase());
  if (!m || !ALIAS_FAMILIES.includes(m[1]!)) {
    throw new Error(
      `spec.amiSelectorTerms[0].alias: "${alias}" must be family@version with family one of ${ALIAS_FAMILIES.join(', ')}`,
    );
  }
  const family = m[1] as Alias['family'];
  if (family.startsWith('windows') && m[2] !== 'latest')
    throw new Error(`spec.amiSelectorTerms[0].alias: "${alias}": windows aliases support only @latest`);
  return { family, version: m[2]! };
}

function minor(k8s: string): number {
  const m = /^1\.(\d+)/.exec(k8s);
  if (!m) throw new Error(`kubernetes version "${k8s}" is not of the form 1.N`);
  return Number(m[1]);
}

/** The SSM parameters to read for an alias at a Kubernetes version ("1.31"). Throws on unsupported pairs. */
export function aliasParameters(a: Alias, k8s: string): AliasParameter[] {
  const latest = a.version === 'latest';
  switch (a.family) {
    case 'al2023': {
      const combos: Array<[Ec2Arch, Variant]> = [
        ['x86_64', 'standard'],
        ['x86_64', 'nvidia'],
        ['x86_64', 'neuron'],
        ['arm64', 'standard'],
        ['arm64', 'nvidia'],
      ];
      return combos.map(([arch, variant]) => {
        const name = latest ? 'recommended' : `amazon-eks-node-al2023-${arch}-${variant}-${k8s}-${a.version}`;
        return {
          path: `/aws/service/eks/optimized-ami/${k8s}/amazon-linux-2023/${arch}/${variant}/${name}/image_id`,
          arch,
          variants: [variant],
        };
      });
    }
    case 'al2': {
      if (minor(k8s) >= 33)
        throw new Error(
          `alias al2@${a.version}: Amazon Linux 2 AMIs are not published for Kubernetes ${k8s} (>= 1.33); use al2023`,
        );
      const images: Array<[string, string, Ec2Arch, Variant[]]> = [
        ['amazon-linux-2', 'amazon-eks-node', 'x86_64', ['standard']],
        ['amazon-linux-2-arm64', 'amazon-eks-arm64-node', 'arm64', ['standard']],
        ['amazon-linux-2-gpu', 'amazon-eks-gpu-node', 'x86_64', ['nvidia', 'neuron']],
      ];
      return images.map(([dir, prefix, arch, variants]) => ({
        path: `/aws/service/eks/optimized-ami/${k8s}/${dir}/${latest ? 'recommended' : `${prefix}-${k8s}-${a.version}`}/image_id`,
        arch,
        variants,
      }));
    }
    case 'bottlerocket': {
      const version = latest ? 'latest' : a.version.replace(/^v/, '');
      const combos: Array<[string, Ec2Arch, Variant]> = [
        ['', 'x86_64', 'standard'],
        ['', 'arm64', 'standard'],
        ['-nvidia', 'x86_64', 'nvidia'],
        ['-nvidia', 'arm64', 'nvidia'],
      ];
      return combos.map(([suffix, arch, variant]) => ({
        path: `/aws/service/bottlerocket/aws-k8s-${k8s}${suffix}/${arch}/${version}/image_id`,
        arch,
        variants: [variant],
      }));
    }
    default: {
      const year = a.family.slice('windows'.length);
      if (year === '2025' && minor(k8s) < 35)
        throw new Error(
          `alias ${a.family}@latest: Windows Server 2025 EKS AMIs require Kubernetes >= 1.35 (cluster is ${k8s})`,
        );
      return [
        {
          path: `/aws/service/ami-windows-latest/Windows_Server-${year}-English-Core-EKS_Optimized-${k8s}/image_id`,
          arch: 'x86_64',
          variants: ['standard'],
        },
      ];
    }
  }
}

/** The requirement set of one (image, variant): arch, plus the variant's GPU / accelerator constraint. */
export function variantRequirements(arch: string, variant: Variant | undefined, family?: AMIFamily): AmiRequirement[] {
  const out: AmiRequirement[] = [{ key: ARCH_LABEL, operator: 'In', values: [kubeArch(arch)] }];
  if (variant === 'standard') {
    out.push(
      { key: INSTANCE_GPU_COUNT_LABEL, operator: 'DoesNotExist' },
      { key: INSTANCE_ACCELERATOR_COUNT_LABEL, operator: 'DoesNotExist' },
    );
  } else if (variant === 'nvidia') {
    out.push({ key: INSTANCE_GPU_COUNT_LABEL, operator: 'Exists' });
  } else if (variant === 'neuron') {
    out.push({ key: INSTANCE_ACCELERATOR_COUNT_LABEL, operator: 'Exists' });
  }
  const build = family ? amiFamilyTraits(family).windowsBuild : undefined;
  if (build)
    out.push(
      { key: OS_LABEL, operator: 'In', values: ['windows'] },
      { key: WINDOWS_BUILD_LABEL, operator: 'In', values: [build] },
    );
  return out;
}
