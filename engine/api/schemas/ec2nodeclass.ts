// EC2NodeClass (karpenter.k8s.aws/v1): the AWS settings of nodes, fields of v1.14.1 (docs/karpenter/aws-provider.md §5).
import { conditions } from './common.ts';
import {
  amiSelectorTerms,
  capacityReservationSelectorTerms,
  placementGroupSelector,
  securityGroupSelectorTerms,
  subnetSelectorTerms,
} from './ec2parts.ts';
import {
  blockDeviceMappings,
  connectionTracking,
  cpuOptions,
  kubelet,
  metadataOptions,
  networkInterfaces,
} from './ec2node.ts';
import type { CelRule, CrdDefinition, Schema } from './types.ts';

export const AMI_FAMILIES = [
  'AL2',
  'AL2023',
  'Bottlerocket',
  'Custom',
  'Windows2019',
  'Windows2022',
  'Windows2025',
] as const;

const RESTRICTED_TAGS: readonly { test: (k: string) => boolean; cel: string; what: string }[] = [
  { test: (k) => k === 'eks:eks-cluster-name', cel: "k != 'eks:eks-cluster-name'", what: 'eks:eks-cluster-name' },
  {
    test: (k) => k.startsWith('kubernetes.io/cluster'),
    cel: "!k.startsWith('kubernetes.io/cluster')",
    what: 'kubernetes.io/cluster/*',
  },
  { test: (k) => k === 'karpenter.sh/nodepool', cel: "k != 'karpenter.sh/nodepool'", what: 'karpenter.sh/nodepool' },
  { test: (k) => k === 'karpenter.sh/nodeclaim', cel: "k != 'karpenter.sh/nodeclaim'", what: 'karpenter.sh/nodeclaim' },
  {
    test: (k) => k === 'karpenter.k8s.aws/ec2nodeclass',
    cel: "k != 'karpenter.k8s.aws/ec2nodeclass'",
    what: 'karpenter.k8s.aws/ec2nodeclass',
  },
];

const tags: Schema = {
  type: 'object',
  description: 'Tags for the instances, volumes, network interfaces and launch templates.',
  additionalProperties: { type: 'string' },
  rules: [
    {
      rule: "self.all(k, k != '')",
      message: 'tag keys may not be empty',
      check: (self: Record<string, string>) => !Object.keys(self).includes(''),
    },
    ...RESTRICTED_TAGS.map(
      (t): CelRule => ({
        rule: `self.all(k, ${t.cel})`,
        message: `the tag ${t.what} is restricted: Karpenter sets it`,
        check: (self: Record<string, string>) => {
          const bad = Object.keys(self)
            .filter(t.test)
            .map((k) => ({ path: [{ key: k }] }));
          return bad.length === 0 ? true : bad;
        },
      }),
    ),
  ],
};

const nonEmpty = (field: string): CelRule => ({
  rule: "self != ''",
  message: `${field} cannot be empty`,
  check: (self: string) => self !== '',
});

interface SpecValue {
  role?: string;
  instanceProfile?: string;
  amiFamily?: string;
  amiSelectorTerms?: { alias?: string }[];
}

const aliasFamily = (s: SpecValue): string | undefined => {
  const a = (s.amiSelectorTerms ?? []).find((t) => t.alias !== undefined)?.alias;
  return a === undefined ? undefined : a.split('@')[0];
};

/** One rule per alias family: amiFamily, when set, must be the alias's family or Custom. */
const familyRules: CelRule[] = AMI_FAMILIES.filter((f) => f !== 'Custom').map((family) => ({
  rule: `!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == '${family.toLowerCase()}') ? (self.amiFamily == 'Custom' || self.amiFamily == '${family}') : true)`,
  message: `amiFamily must be '${family}' or 'Custom' when using a ${family} alias`,
  check: (self: SpecValue) =>
    self.amiFamily === undefined ||
    aliasFamily(self) !== family.toLowerCase() ||
    self.amiFamily === 'Custom' ||
    self.amiFamily === family
      ? true
      : [{ path: ['amiFamily'] }],
}));

const ec2NodeClassSpec: Schema = {
  type: 'object',
  description: 'How Karpenter launches EC2 instances: networks, images, identity, storage and instance options.',
  required: ['subnetSelectorTerms', 'securityGroupSelectorTerms', 'amiSelectorTerms'],
  properties: {
    subnetSelectorTerms,
    securityGroupSelectorTerms,
    capacityReservationSelectorTerms,
    placementGroupSelector,
    associatePublicIPAddress: { type: 'boolean' },
    ipPrefixCount: { type: 'integer', format: 'int32', minimum: 0 },
    amiSelectorTerms,
    amiFamily: {
      type: 'string',
      enum: AMI_FAMILIES,
      description: 'User data format and default block devices; inferred from an alias.',
    },
    userData: { type: 'string' },
    role: {
      type: 'string',
      rules: [nonEmpty('role')],
      description: 'IAM role of the nodes; Karpenter manages the instance profile.',
    },
    instanceProfile: {
      type: 'string',
      rules: [nonEmpty('instanceProfile')],
      description: 'An existing instance profile.',
    },
    tags,
    kubelet,
    blockDeviceMappings,
    instanceStorePolicy: { type: 'string', enum: ['RAID0'] },
    detailedMonitoring: { type: 'boolean' },
    metadataOptions,
    context: { type: 'string', description: 'Reserved EC2 Fleet context.' },
    networkInterfaces,
    connectionTracking,
    cpuOptions,
  },
  rules: [
    {
      rule: '(has(self.role) && !has(self.instanceProfile)) || (!has(self.role) && has(self.instanceProfile))',
      message: "set exactly one of 'role' or 'instanceProfile'",
      check: (self: SpecValue) => (self.role === undefined) !== (self.instanceProfile === undefined),
    },
    ...familyRules,
    {
      rule: 'self.amiSelectorTerms.exists(x, has(x.alias)) ? true : has(self.amiFamily)',
      message:
        "amiFamily is required when amiSelectorTerms has no 'alias' term (or add a term such as {alias: al2023@latest})",
      check: (self: SpecValue) =>
        aliasFamily(self) !== undefined || self.amiFamily !== undefined ? true : [{ path: ['amiFamily'] }],
    },
  ],
};

const idName = (extra: Record<string, Schema> = {}): Schema => ({
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string' }, ...extra },
});

const ec2NodeClassStatus: Schema = {
  type: 'object',
  preserveUnknownFields: true,
  properties: {
    subnets: { type: 'array', items: idName({ zone: { type: 'string' }, zoneID: { type: 'string' } }) },
    securityGroups: { type: 'array', items: idName({ name: { type: 'string' } }) },
    amis: {
      type: 'array',
      items: idName({
        name: { type: 'string' },
        deprecated: { type: 'boolean' },
        requirements: {
          type: 'array',
          items: {
            type: 'object',
            required: ['key', 'operator'],
            properties: {
              key: { type: 'string' },
              operator: { type: 'string' },
              values: { type: 'array', items: { type: 'string' } },
            },
          },
        },
      }),
    },
    capacityReservations: {
      type: 'array',
      items: idName({
        availabilityZone: { type: 'string' },
        instanceType: { type: 'string' },
        ownerID: { type: 'string' },
        instanceMatchCriteria: { type: 'string', enum: ['open', 'targeted'] },
        reservationType: { type: 'string', enum: ['default', 'capacity-block'] },
        interruptible: { type: 'boolean' },
        state: { type: 'string' },
        endTime: { type: 'string', format: 'date-time' },
      }),
    },
    instanceProfile: { type: 'string' },
    conditions,
  },
};

export const EC2NODECLASS_CRD: CrdDefinition = {
  group: 'karpenter.k8s.aws',
  version: 'v1',
  kind: 'EC2NodeClass',
  plural: 'ec2nodeclasses',
  singular: 'ec2nodeclass',
  listKind: 'EC2NodeClassList',
  shortNames: ['ec2nc', 'ec2ncs'],
  categories: ['karpenter'],
  scope: 'Cluster',
  description: 'EC2NodeClass holds the AWS-specific settings of the nodes a NodePool launches.',
  specRequired: true,
  printerColumns: [
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    { name: 'Role', type: 'string', jsonPath: '.spec.role', priority: 1 },
  ],
  spec: ec2NodeClassSpec,
  status: ec2NodeClassStatus,
};
