// Objects of Karpenter's older APIs (v1alpha5 Provisioner/Machine, v1alpha1 AWSNodeTemplate, v1beta1
// NodePool/NodeClaim/EC2NodeClass): karpenter-ts speaks only v1, so each gets errors saying which v1 field
// replaces what it used. Facts from Karpenter's v1 migration guide and the v1beta1 -> v1 conversion code.
import { fieldError, isRecord, type FieldError, type PathSeg } from './errors.ts';

type Obj = Record<string, unknown>;
type Hint = readonly [path: readonly PathSeg[], message: string | ((v: unknown) => string)];

const get = (o: unknown, path: readonly PathSeg[]): unknown => {
  let cur = o;
  for (const s of path) {
    if (typeof s === 'number') cur = Array.isArray(cur) ? cur[s] : undefined;
    else cur = isRecord(cur) ? cur[typeof s === 'string' ? s : s.key] : undefined;
  }
  return cur;
};

const PROVISIONER: readonly Hint[] = [
  [['spec', 'requirements'], 'moved to spec.template.spec.requirements'],
  [['spec', 'labels'], 'moved to spec.template.metadata.labels'],
  [['spec', 'annotations'], 'moved to spec.template.metadata.annotations'],
  [['spec', 'taints'], 'moved to spec.template.spec.taints'],
  [['spec', 'startupTaints'], 'moved to spec.template.spec.startupTaints'],
  [
    ['spec', 'providerRef'],
    'replaced by spec.template.spec.nodeClassRef {group: karpenter.k8s.aws, kind: EC2NodeClass, name: ...}',
  ],
  [
    ['spec', 'provider'],
    'inline AWS settings are gone: put them in an EC2NodeClass and reference it from spec.template.spec.nodeClassRef',
  ],
  [['spec', 'kubeletConfiguration'], 'moved to the EC2NodeClass as spec.kubelet'],
  [
    ['spec', 'ttlSecondsAfterEmpty'],
    (v) =>
      `replaced by spec.disruption.consolidationPolicy: WhenEmpty with spec.disruption.consolidateAfter: ${Number(v)}s`,
  ],
  [['spec', 'ttlSecondsUntilExpired'], (v) => `replaced by spec.template.spec.expireAfter: ${Number(v)}s`],
  [
    ['spec', 'consolidation'],
    'replaced by spec.disruption.consolidationPolicy: WhenEmptyOrUnderutilized (with consolidateAfter, e.g. 0s)',
  ],
  [['spec', 'limits', 'resources'], 'moved to spec.limits'],
];

const NODEPOOL_V1BETA1: readonly Hint[] = [
  [['spec', 'disruption', 'expireAfter'], (v) => `moved to spec.template.spec.expireAfter: ${String(v)}`],
  [
    ['spec', 'disruption', 'consolidationPolicy'],
    (v) =>
      v === 'WhenUnderutilized'
        ? 'WhenUnderutilized was renamed: use consolidationPolicy: WhenEmptyOrUnderutilized (and set consolidateAfter, e.g. 0s)'
        : 'unchanged in v1, but spec.disruption.consolidateAfter is now required',
  ],
  [['spec', 'template', 'spec', 'kubelet'], 'moved to the EC2NodeClass as spec.kubelet'],
  [
    ['spec', 'template', 'spec', 'nodeClassRef', 'apiVersion'],
    'replaced by nodeClassRef.group (karpenter.k8s.aws); nodeClassRef.kind and .name stay, and all three are required',
  ],
  [['spec', 'template', 'spec', 'resources'], 'removed in v1: NodePools cannot set resource requests'],
];

const NODECLAIM_V1BETA1: readonly Hint[] = [
  [['spec', 'kubelet'], 'moved to the EC2NodeClass as spec.kubelet'],
  [['spec', 'nodeClassRef', 'apiVersion'], 'replaced by nodeClassRef.group (karpenter.k8s.aws)'],
];

const EC2NODECLASS_V1BETA1: readonly Hint[] = [
  [
    ['spec', 'amiFamily'],
    (v) =>
      v === 'Ubuntu'
        ? 'the Ubuntu family was removed in v1: use amiFamily: Custom with amiSelectorTerms and your own userData'
        : 'amiSelectorTerms are now required: select images with e.g. amiSelectorTerms: [{alias: al2023@latest}], which also implies the family',
  ],
  [['spec', 'metadataOptions'], 'unchanged, but note the default httpPutResponseHopLimit changed from 2 to 1 in v1'],
];

const AWSNODETEMPLATE: readonly Hint[] = [
  [['spec', 'subnetSelector'], 'replaced by spec.subnetSelectorTerms: [{tags: {...}}] or [{id: subnet-...}]'],
  [
    ['spec', 'securityGroupSelector'],
    'replaced by spec.securityGroupSelectorTerms: [{tags: {...}}], [{id: sg-...}] or [{name: ...}]',
  ],
  [['spec', 'amiSelector'], 'replaced by spec.amiSelectorTerms, e.g. [{alias: al2023@latest}] or [{id: ami-...}]'],
  [
    ['spec', 'instanceProfile'],
    'still supported as spec.instanceProfile, or use spec.role and let Karpenter manage the profile',
  ],
  [
    ['spec', 'launchTemplate'],
    'custom launch templates are not supported in v1: move their settings into the EC2NodeClass (userData, blockDeviceMappings, metadataOptions, ...)',
  ],
];

interface Legacy {
  readonly replacement: string;
  readonly hints: readonly Hint[];
}

const LEGACY: Readonly<Record<string, Legacy>> = {
  'karpenter.sh/v1alpha5/Provisioner': {
    replacement: 'Provisioner (karpenter.sh/v1alpha5) was replaced by NodePool (karpenter.sh/v1)',
    hints: PROVISIONER,
  },
  'karpenter.sh/v1alpha5/Machine': {
    replacement: 'Machine (karpenter.sh/v1alpha5) was replaced by NodeClaim (karpenter.sh/v1)',
    hints: NODECLAIM_V1BETA1,
  },
  'karpenter.sh/v1beta1/NodePool': {
    replacement: 'NodePool karpenter.sh/v1beta1 is no longer served: use apiVersion karpenter.sh/v1',
    hints: NODEPOOL_V1BETA1,
  },
  'karpenter.sh/v1beta1/NodeClaim': {
    replacement: 'NodeClaim karpenter.sh/v1beta1 is no longer served: use apiVersion karpenter.sh/v1',
    hints: NODECLAIM_V1BETA1,
  },
  'karpenter.k8s.aws/v1beta1/EC2NodeClass': {
    replacement: 'EC2NodeClass karpenter.k8s.aws/v1beta1 is no longer served: use apiVersion karpenter.k8s.aws/v1',
    hints: EC2NODECLASS_V1BETA1,
  },
  'karpenter.k8s.aws/v1alpha1/AWSNodeTemplate': {
    replacement: 'AWSNodeTemplate (karpenter.k8s.aws/v1alpha1) was replaced by EC2NodeClass (karpenter.k8s.aws/v1)',
    hints: AWSNODETEMPLATE,
  },
};

const LEGACY_KINDS = new Set(['Provisioner', 'Machine', 'AWSNodeTemplate']);
const V1_KINDS = new Set(['NodePool', 'NodeClaim', 'EC2NodeClass']);

/**
 * True for objects of a Karpenter API group (karpenter.sh, karpenter.k8s.aws) at a version we do not serve,
 * and for the retired kinds whatever version they claim.
 */
export function isLegacy(obj: Obj): boolean {
  const av = obj['apiVersion'];
  if (typeof obj['kind'] === 'string' && LEGACY_KINDS.has(obj['kind'])) return true;
  if (typeof av !== 'string' || !V1_KINDS.has(String(obj['kind']))) return false;
  const group = av.split('/')[0];
  return (
    (group === 'karpenter.sh' || group === 'karpenter.k8s.aws') &&
    av !== 'karpenter.sh/v1' &&
    av !== 'karpenter.k8s.aws/v1'
  );
}

/** Errors for an object of an older Karpenter API, one per field that moved. */
export function legacyErrors(obj: Obj, object: string): FieldError[] {
  const av = String(obj['apiVersion']);
  const kind = String(obj['kind']);
  const entry =
    LEGACY[`${av}/${kind}`] ??
    Object.entries(LEGACY).find(([k]) => k.endsWith(`/${kind}`) && LEGACY_KINDS.has(kind))?.[1];
  if (!entry) {
    return [
      fieldError(
        object,
        ['apiVersion'],
        `"${av}" is not an API version karpenter-ts serves: use karpenter.sh/v1 (NodePool, NodeClaim) or karpenter.k8s.aws/v1 (EC2NodeClass)`,
      ),
    ];
  }
  const out = [fieldError(object, ['apiVersion'], entry.replacement)];
  for (const [path, msg] of entry.hints) {
    const v = get(obj, path);
    if (v !== undefined) out.push(fieldError(object, path, typeof msg === 'string' ? msg : msg(v)));
  }
  return out;
}
