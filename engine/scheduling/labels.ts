// Label keys Karpenter gives meaning to (docs/karpenter/scheduling.md §1.9, docs/karpenter/aws-provider.md §2).
import {
  WELL_KNOWN_LABELS as API_WELL_KNOWN_LABELS,
  k8sIoDomainRestricted,
  kubernetesDomainRestricted,
} from '../api/labels.ts';

export const NODEPOOL_LABEL = 'karpenter.sh/nodepool';
export const CAPACITY_TYPE_LABEL = 'karpenter.sh/capacity-type';
export const REGISTERED_LABEL = 'karpenter.sh/registered';
export const INITIALIZED_LABEL = 'karpenter.sh/initialized';
export const ZONE_LABEL = 'topology.kubernetes.io/zone';
export const REGION_LABEL = 'topology.kubernetes.io/region';
export const INSTANCE_TYPE_LABEL = 'node.kubernetes.io/instance-type';
export const ARCH_LABEL = 'kubernetes.io/arch';
export const OS_LABEL = 'kubernetes.io/os';
export const WINDOWS_BUILD_LABEL = 'node.kubernetes.io/windows-build';
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';
export const ZONE_ID_LABEL = 'topology.k8s.aws/zone-id';
/** The reservation a reserved offering (and a node launched into it) belongs to (the AWS provider's label). */
export const RESERVATION_ID_LABEL = 'karpenter.k8s.aws/capacity-reservation-id';

export const DO_NOT_DISRUPT_ANNOTATION = 'karpenter.sh/do-not-disrupt';
export const NODEPOOL_HASH_ANNOTATION = 'karpenter.sh/nodepool-hash';
export const NODEPOOL_HASH_VERSION_ANNOTATION = 'karpenter.sh/nodepool-hash-version';
export const DISRUPTED_TAINT_KEY = 'karpenter.sh/disrupted';

/**
 * The well-known label set used by Compatible's AllowUndefinedWellKnownLabels: Karpenter's core labels and
 * the AWS provider's (one list, kept with the validation rules in api/labels.ts). Tests that use the fake
 * cloud provider add its labels (`size`, `special`, `integer`) through `withExtraWellKnown`.
 */
export const WELL_KNOWN_LABELS: ReadonlySet<string> = API_WELL_KNOWN_LABELS;

/** Labels injected as `In [true]` into every template so daemonsets selecting them count (stripped later). */
export const SIMULATION_LABELS: ReadonlySet<string> = new Set([REGISTERED_LABEL, INITIALIZED_LABEL]);

/** Deprecated keys and their replacements (§1.3). */
const NORMALIZED_KEYS: Readonly<Record<string, string>> = {
  'failure-domain.beta.kubernetes.io/zone': ZONE_LABEL,
  'failure-domain.beta.kubernetes.io/region': REGION_LABEL,
  'beta.kubernetes.io/arch': ARCH_LABEL,
  'beta.kubernetes.io/os': OS_LABEL,
  'beta.kubernetes.io/instance-type': INSTANCE_TYPE_LABEL,
};

export function normalizeKey(key: string): string {
  return NORMALIZED_KEYS[key] ?? key;
}

/**
 * Karpenter's RestrictedLabelDomains (kubernetes.io, k8s.io, karpenter.sh, each with sub-domains) plus the AWS
 * provider's karpenter.k8s.aws, minus the well-known keys and the allowed kubernetes sub-domains
 * (node.kubernetes.io, node-restriction.kubernetes.io, kops.k8s.io), which engine/api's predicates encode.
 */
const RESTRICTED_DOMAINS = ['karpenter.sh', 'karpenter.k8s.aws'];
const RESTRICTED_LABELS: ReadonlySet<string> = new Set([HOSTNAME_LABEL]);

function domainOf(key: string): string | undefined {
  const i = key.indexOf('/');
  return i < 0 ? undefined : key.slice(0, i);
}

/**
 * Why a key may not be used in NodePool requirements or pod selectors: undefined when it may. The
 * well-known keys in a restricted domain (karpenter.sh/capacity-type, karpenter.k8s.aws/instance-family)
 * are allowed in requirements; `karpenter.sh/nodepool` is allowed for pods, not for NodePools.
 */
export function schedulingRestrictedReason(
  key: string,
  wellKnown: ReadonlySet<string> = WELL_KNOWN_LABELS,
): string | undefined {
  const k = normalizeKey(key);
  if (RESTRICTED_LABELS.has(k)) return `label ${k} is restricted`;
  if (wellKnown.has(k)) return undefined;
  if (kubernetesDomainRestricted(k)) return 'label domain "kubernetes.io" is restricted';
  if (k8sIoDomainRestricted(k)) return 'label domain "k8s.io" is restricted';
  const d = domainOf(k);
  if (d && RESTRICTED_DOMAINS.some((r) => d === r || d.endsWith('.' + r))) return `label domain "${d}" is restricted`;
  return undefined;
}

export function withExtraWellKnown(extra: Iterable<string>): ReadonlySet<string> {
  return new Set([...WELL_KNOWN_LABELS, ...extra]);
}
