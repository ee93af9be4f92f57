// Parts of the EC2NodeClass schema (karpenter.k8s.aws/v1, fields as of v1.14.1): selector terms, kubelet,
// block devices, metadata options, network interfaces. Facts from the AWS provider's
// pkg/apis/v1/ec2nodeclass.go and docs/karpenter/aws-provider.md §5; fields whose exact upstream constraints we could
// not see (networkInterfaces, connectionTracking, cpuOptions, placementGroupSelector) are constrained by
// EC2's own documented limits and marked ASSUMED.
import type { CelRule, Schema, Violation } from './types.ts';

type Term = Record<string, unknown>;
const has = (t: Term, f: string): boolean => t[f] !== undefined;

function each(self: Term[], bad: (t: Term) => boolean, field?: string): boolean | Violation[] {
  const out: Violation[] = self.flatMap((t, i) => (bad(t) ? [{ path: field ? [i, field] : [i] }] : []));
  return out.length === 0 ? true : out;
}

const tagSelector: Schema = {
  type: 'object',
  description: 'Tags to select by; "*" as a value selects any value of the key.',
  maxProperties: 20,
  additionalProperties: { type: 'string' },
  rules: [
    {
      rule: "self.all(k, k != '' && self[k] != '')",
      message: "tag selectors may not have empty keys or values (use '*' to match any value)",
      check: (self: Record<string, string>) => {
        const bad = Object.entries(self)
          .filter(([k, v]) => k === '' || v === '')
          .map(([k]) => ({ path: [{ key: k }] }));
        return bad.length === 0 ? true : bad;
      },
    },
  ],
};

const nonEmptyList = (field: string): CelRule => ({
  rule: 'self.size() != 0',
  message: `${field} cannot be empty`,
  check: (self: unknown[]) => self.length !== 0,
});

function atLeastOne(fields: readonly string[]): CelRule {
  return {
    rule: `self.all(x, ${fields.map((f) => `has(x.${f})`).join(' || ')})`,
    message: `each term must set at least one of: ${fields.join(', ')}`,
    check: (self: Term[]) => each(self, (t) => !fields.some((f) => has(t, f))),
  };
}

function exclusive(field: string, others: readonly string[], where: string): CelRule {
  return {
    rule: `!self.exists(x, has(x.${field}) && (${others.map((f) => `has(x.${f})`).join(' || ')}))`,
    message: `'${field}' is mutually exclusive: it cannot be combined with ${others.join(', ')} in ${where}`,
    check: (self: Term[]) => each(self, (t) => has(t, field) && others.some((f) => has(t, f)), field),
  };
}

export const subnetSelectorTerms: Schema = {
  type: 'array',
  maxItems: 30,
  hint: 'e.g. [{tags: {karpenter.sh/discovery: my-cluster}}]',
  items: {
    type: 'object',
    properties: {
      tags: tagSelector,
      id: { type: 'string', pattern: '^subnet-[0-9a-z]+$', patternHint: 'is not a subnet id (subnet-0123abcd...)' },
      cidr: { type: 'string', description: 'The CIDR block of the subnet.' },
    },
  },
  rules: [
    nonEmptyList('subnetSelectorTerms'),
    atLeastOne(['tags', 'id', 'cidr']),
    exclusive('id', ['tags'], 'a subnet selector term'),
  ],
};

export const securityGroupSelectorTerms: Schema = {
  type: 'array',
  maxItems: 30,
  hint: 'e.g. [{tags: {karpenter.sh/discovery: my-cluster}}]',
  items: {
    type: 'object',
    properties: {
      tags: tagSelector,
      id: { type: 'string', pattern: '^sg-[0-9a-z]+$', patternHint: 'is not a security group id (sg-0123abcd...)' },
      name: { type: 'string', description: 'The group name (not its Name tag).' },
    },
  },
  rules: [
    nonEmptyList('securityGroupSelectorTerms'),
    atLeastOne(['tags', 'id', 'name']),
    exclusive('id', ['tags', 'name'], 'a security group selector term'),
    exclusive('name', ['tags', 'id'], 'a security group selector term'),
  ],
};

export const capacityReservationSelectorTerms: Schema = {
  type: 'array',
  maxItems: 30,
  items: {
    type: 'object',
    properties: {
      tags: tagSelector,
      id: {
        type: 'string',
        pattern: '^cr-[0-9a-z]+$',
        patternHint: 'is not a capacity reservation id (cr-0123abcd...)',
      },
      ownerID: { type: 'string', pattern: '^[0-9]{12}$', patternHint: 'is not a 12-digit AWS account id' },
      instanceMatchCriteria: { type: 'string', enum: ['open', 'targeted'] },
    },
  },
  rules: [
    atLeastOne(['tags', 'id', 'instanceMatchCriteria']),
    exclusive('id', ['tags', 'ownerID', 'instanceMatchCriteria'], 'a capacity reservation selector term'),
  ],
};

const ALIAS_FAMILIES = ['al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025'] as const;

const alias: Schema = {
  type: 'string',
  maxLength: 30,
  description: 'An EKS-optimized AMI as family@version, e.g. al2023@latest or bottlerocket@v1.20.0.',
  rules: [
    {
      rule: "self.matches('^[a-zA-Z0-9]+@.+$')",
      message: "'alias' must have the form family@version, e.g. al2023@latest",
      check: (self: string) => /^[a-zA-Z0-9]+@.+$/.test(self),
    },
    {
      rule: `self.split('@')[0] in [${ALIAS_FAMILIES.map((f) => `'${f}'`).join(', ')}]`,
      message: `the alias family is not supported; use one of: ${ALIAS_FAMILIES.join(', ')}`,
      check: (self: string) => (ALIAS_FAMILIES as readonly string[]).includes(self.split('@')[0] ?? ''),
    },
    {
      rule: "self.split('@')[0].startsWith('windows') ? self.split('@')[1] == 'latest' : true",
      message: "windows alias families only support the version 'latest'",
      check: (self: string) => !(self.split('@')[0] ?? '').startsWith('windows') || self.split('@')[1] === 'latest',
    },
  ],
};

export const amiSelectorTerms: Schema = {
  type: 'array',
  minItems: 1,
  maxItems: 30,
  hint: 'e.g. [{alias: al2023@latest}]',
  items: {
    type: 'object',
    properties: {
      alias,
      tags: tagSelector,
      id: { type: 'string', pattern: '^ami-[0-9a-z]+$', patternHint: 'is not an AMI id (ami-0123abcd...)' },
      name: { type: 'string', description: 'The AMI name (not its Name tag); wildcards allowed.' },
      owner: { type: 'string', description: 'An account id, self, amazon or aws-marketplace.' },
      ssmParameter: { type: 'string', description: 'Name or ARN of an SSM parameter holding the AMI id.' },
    },
  },
  rules: [
    atLeastOne(['tags', 'id', 'name', 'alias', 'ssmParameter']),
    exclusive('id', ['alias', 'tags', 'name', 'owner'], 'amiSelectorTerms'),
    exclusive('alias', ['id', 'tags', 'name', 'owner'], 'amiSelectorTerms'),
    {
      rule: '!(self.exists(x, has(x.alias)) && self.size() != 1)',
      message: "a term with 'alias' must be the only amiSelectorTerm",
      check: (self: Term[]) => !(self.some((t) => has(t, 'alias')) && self.length !== 1),
    },
  ],
};

export const placementGroupSelector: Schema = {
  type: 'object',
  description: 'The placement group to launch into (ASSUMED shape: by name or by id).',
  properties: {
    name: { type: 'string', minLength: 1 },
    id: { type: 'string', pattern: '^pg-[0-9a-z]+$', patternHint: 'is not a placement group id (pg-0123abcd...)' },
  },
  rules: [
    {
      rule: 'has(self.name) != has(self.id)',
      message: "placementGroupSelector must set exactly one of 'name' or 'id'",
      check: (self: Term) => has(self, 'name') !== has(self, 'id'),
    },
  ],
};
