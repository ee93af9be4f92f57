// Label keys and values: syntax (Kubernetes apimachinery validation) and the keys Karpenter v1 restricts.
//
// Facts from Karpenter's CRD rules (karpenter.sh_nodepools.yaml) and pkg/apis/v1/labels.go, plus the AWS
// provider's well-known labels (docs/karpenter/aws-provider.md §2). A key's "domain" is the part before the first
// "/", or the whole key when it has none (as CEL's find("^([^/]+)") yields).

export const QUALIFIED_NAME_RE =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
export const LABEL_VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const DNS1123_SUBDOMAIN_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Well-known labels in the kubernetes.io domain that NodePools may constrain. */
export const KUBERNETES_WELL_KNOWN = [
  'beta.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'failure-domain.beta.kubernetes.io/zone',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'node.kubernetes.io/windows-build',
] as const;

export const KARPENTER_WELL_KNOWN = ['karpenter.sh/capacity-type', 'karpenter.sh/nodepool'] as const;

/** AWS provider labels (karpenter.k8s.aws domain) users may constrain; the rest of the domain is restricted. */
export const AWS_WELL_KNOWN = [
  'karpenter.k8s.aws/ec2nodeclass',
  'karpenter.k8s.aws/instance-category',
  'karpenter.k8s.aws/instance-generation',
  'karpenter.k8s.aws/instance-family',
  'karpenter.k8s.aws/instance-size',
  'karpenter.k8s.aws/instance-capability-flex',
  'karpenter.k8s.aws/instance-cpu',
  'karpenter.k8s.aws/instance-cpu-manufacturer',
  'karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz',
  'karpenter.k8s.aws/instance-memory',
  'karpenter.k8s.aws/instance-ebs-bandwidth',
  'karpenter.k8s.aws/instance-network-bandwidth',
  'karpenter.k8s.aws/instance-hypervisor',
  'karpenter.k8s.aws/instance-encryption-in-transit-supported',
  'karpenter.k8s.aws/instance-local-nvme',
  'karpenter.k8s.aws/instance-gpu-name',
  'karpenter.k8s.aws/instance-gpu-manufacturer',
  'karpenter.k8s.aws/instance-gpu-count',
  'karpenter.k8s.aws/instance-gpu-memory',
  'karpenter.k8s.aws/instance-accelerator-name',
  'karpenter.k8s.aws/instance-accelerator-manufacturer',
  'karpenter.k8s.aws/instance-accelerator-count',
  'karpenter.k8s.aws/instance-tenancy',
  'karpenter.k8s.aws/capacity-reservation-id',
  'karpenter.k8s.aws/capacity-reservation-type',
  'karpenter.k8s.aws/capacity-reservation-interruptible',
  'karpenter.k8s.aws/placement-group-id',
  'karpenter.k8s.aws/placement-group-partition',
] as const;

/** Every well-known label (core + AWS): the scheduler may leave these undefined on a NodePool. */
export const WELL_KNOWN_LABELS: ReadonlySet<string> = new Set<string>([
  ...KUBERNETES_WELL_KNOWN,
  ...KARPENTER_WELL_KNOWN,
  ...AWS_WELL_KNOWN,
  'topology.k8s.aws/zone-id',
]);

function labelDomain(key: string): string {
  const i = key.indexOf('/');
  return i < 0 ? key : key.slice(0, i);
}

// The restricted-label predicates, one per CEL rule of the CRDs (schemas/common.ts uses them as the rules'
// TypeScript twins, so the CRD and this code cannot drift apart).

/** kubernetes.io domain: only the well-known keys and node.kubernetes.io / node-restriction.kubernetes.io. */
export function kubernetesDomainRestricted(key: string): boolean {
  const d = labelDomain(key);
  return (
    d.endsWith('kubernetes.io') &&
    !(KUBERNETES_WELL_KNOWN as readonly string[]).includes(key) &&
    !d.endsWith('node.kubernetes.io') &&
    !d.endsWith('node-restriction.kubernetes.io')
  );
}

/** k8s.io domain: only kops.k8s.io. */
export function k8sIoDomainRestricted(key: string): boolean {
  const d = labelDomain(key);
  return d.endsWith('k8s.io') && !d.endsWith('kops.k8s.io');
}

/** karpenter.sh domain: only capacity-type and nodepool. */
export function karpenterDomainRestricted(key: string): boolean {
  return labelDomain(key).endsWith('karpenter.sh') && !(KARPENTER_WELL_KNOWN as readonly string[]).includes(key);
}

/** karpenter.k8s.aws domain: only the AWS provider's well-known labels. */
export function awsDomainRestricted(key: string): boolean {
  return labelDomain(key).endsWith('karpenter.k8s.aws') && !(AWS_WELL_KNOWN as readonly string[]).includes(key);
}

/** Where a restricted-label check applies: NodeClaims and pods may use karpenter.sh/nodepool, NodePools not. */
export type LabelContext = 'nodepool' | 'nodeclaim';

/** Why Karpenter refuses this key in requirements, template labels or pod selectors; undefined if allowed. */
export function restrictedLabelReason(key: string, ctx: LabelContext = 'nodepool'): string | undefined {
  if (key === 'kubernetes.io/hostname')
    return 'label "kubernetes.io/hostname" is restricted: Karpenter sets it per node';
  if (ctx === 'nodepool' && key === 'karpenter.sh/nodepool')
    return 'label "karpenter.sh/nodepool" is restricted: Karpenter sets it to the NodePool\'s name';
  if (kubernetesDomainRestricted(key)) {
    return `label domain "kubernetes.io" is restricted: "${key}" is not a well-known label (keys under node.kubernetes.io and node-restriction.kubernetes.io are allowed)`;
  }
  if (k8sIoDomainRestricted(key))
    return `label domain "k8s.io" is restricted: "${key}" (keys under kops.k8s.io are allowed)`;
  if (karpenterDomainRestricted(key))
    return `label domain "karpenter.sh" is restricted: "${key}" (only karpenter.sh/capacity-type may be used)`;
  if (awsDomainRestricted(key)) {
    return `label domain "karpenter.k8s.aws" is restricted: "${key}" is not one of the AWS provider's well-known labels (such as karpenter.k8s.aws/instance-family)`;
  }
  return undefined;
}

/** Syntax problems of a label key (a qualified name with an optional DNS-subdomain prefix), or undefined. */
export function labelKeyProblem(key: string): string | undefined {
  if (key === '') return 'a label key must not be empty';
  const slash = key.indexOf('/');
  const prefix = slash < 0 ? '' : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (slash >= 0 && (prefix === '' || prefix.length > 253 || !DNS1123_SUBDOMAIN_RE.test(prefix))) {
    return `"${key}": the prefix before "/" must be a lower-case DNS subdomain of at most 253 characters`;
  }
  if (name.length > 63) return `"${key}": the name part must be at most 63 characters`;
  if (!QUALIFIED_NAME_RE.test(key)) {
    return `"${key}" is not a valid label key: use letters, digits, "-", "_" and ".", starting and ending with a letter or digit, with an optional "prefix/"`;
  }
  return undefined;
}

export function labelValueProblem(value: string): string | undefined {
  if (value.length > 63) return `"${value}" is longer than 63 characters`;
  if (!LABEL_VALUE_RE.test(value)) {
    return `"${value}" is not a valid label value: use letters, digits, "-", "_" and ".", starting and ending with a letter or digit`;
  }
  return undefined;
}

/** Label keys the scheduler rewrites to their current names (Karpenter's NormalizedLabels). */
export const NORMALIZED_LABELS: Readonly<Record<string, string>> = {
  'failure-domain.beta.kubernetes.io/zone': 'topology.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region': 'topology.kubernetes.io/region',
  'beta.kubernetes.io/arch': 'kubernetes.io/arch',
  'beta.kubernetes.io/os': 'kubernetes.io/os',
  'beta.kubernetes.io/instance-type': 'node.kubernetes.io/instance-type',
};

export function isDns1123Subdomain(name: string): boolean {
  return name.length <= 253 && DNS1123_SUBDOMAIN_RE.test(name);
}
