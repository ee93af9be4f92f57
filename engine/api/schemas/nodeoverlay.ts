import {
  LABEL_VALUE_PATTERN,
  OPERATORS,
  QUALIFIED_NAME_PATTERN,
  conditions,
  quantity,
  singleNonNegativeInt,
} from './common.ts';
import type { CelRule, CrdDefinition, Schema, Violation } from './types.ts';

/** Karpenter's priceAdjustment pattern: ±N (a fixed change), +N% (any rise), -N% below 100, or -100%. */
const PRICE_ADJUSTMENT_PATTERN = '^(([+-]{1}(\\d*\\.?\\d+))|(\\+{1}\\d*\\.?\\d+%)|(^(-\\d{1,2}(\\.\\d+)?%)$)|(-100%))$';
const PRICE_PATTERN = '^\\d+(\\.\\d+)?$';
const WELL_KNOWN_RESOURCES = ['cpu', 'memory', 'ephemeral-storage', 'pods'];

interface Req {
  key?: string;
  operator?: string;
  values?: string[];
}

const viol = (paths: Violation['path'][]): boolean | Violation[] =>
  paths.length === 0 ? true : paths.map((path) => ({ path }));

const keyRules: CelRule[] = [
  {
    rule: 'self in ["karpenter.sh/capacity-type", "karpenter.sh/nodepool"] || !self.find("^([^/]+)").endsWith("karpenter.sh")',
    message:
      'label domain "karpenter.sh" is restricted (only karpenter.sh/capacity-type and karpenter.sh/nodepool may be selected)',
    check: (self: string) =>
      ['karpenter.sh/capacity-type', 'karpenter.sh/nodepool'].includes(self) ||
      !(self.split('/')[0] ?? '').endsWith('karpenter.sh'),
  },
  {
    rule: 'self != "kubernetes.io/hostname"',
    message: 'label "kubernetes.io/hostname" is restricted',
    check: (self: string) => self !== 'kubernetes.io/hostname',
  },
];

const requirementListRules: CelRule[] = [
  {
    rule: "self.all(x, x.operator == 'NotIn' ? x.values.size() != 0 : true)",
    message: "requirements with operator 'NotIn' must have a value defined",
    check: (self: Req[]) =>
      viol(self.flatMap((x, i) => (x.operator === 'NotIn' && (x.values ?? []).length === 0 ? [[i, 'values']] : []))),
  },
  {
    rule: "self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)",
    message: "requirements with operator 'In' must have a value defined",
    check: (self: Req[]) =>
      viol(self.flatMap((x, i) => (x.operator === 'In' && (x.values ?? []).length === 0 ? [[i, 'values']] : []))),
  },
  {
    rule: "self.all(x, (x.operator == 'Gt' || x.operator == 'Lt' || x.operator == 'Gte' || x.operator == 'Lte') ? (x.values.size() == 1 && int(x.values[0]) >= 0) : true)",
    message: "requirements operator 'Gt', 'Lt', 'Gte' or 'Lte' must have a single positive integer value",
    check: (self: Req[]) =>
      viol(
        self.flatMap((x, i) =>
          ['Gt', 'Lt', 'Gte', 'Lte'].includes(x.operator ?? '') && !singleNonNegativeInt(x.values)
            ? [[i, 'values']]
            : [],
        ),
      ),
  },
];

const requirement: Schema = {
  type: 'object',
  required: ['key', 'operator'],
  properties: {
    key: {
      type: 'string',
      maxLength: 316,
      pattern: QUALIFIED_NAME_PATTERN,
      patternHint: 'is not a valid label key',
      rules: keyRules,
    },
    operator: { type: 'string', enum: OPERATORS },
    values: {
      type: 'array',
      listType: 'atomic',
      items: { type: 'string', maxLength: 63, pattern: LABEL_VALUE_PATTERN, patternHint: 'is not a valid label value' },
    },
  },
};

const spec: Schema = {
  type: 'object',
  required: ['requirements'],
  hint: 'a NodeOverlay needs spec.requirements (may be empty: every instance type)',
  properties: {
    requirements: {
      type: 'array',
      description:
        'Which instance types and offerings the overlay applies to (well-known labels and the NodePool template labels).',
      maxItems: 100,
      listType: 'atomic',
      items: requirement,
      rules: requirementListRules,
    },
    price: {
      type: 'string',
      description: "The price of the matching offerings, replacing the provider's (US dollars per hour).",
      pattern: PRICE_PATTERN,
      patternHint: 'must be a non-negative decimal number such as 0.42',
    },
    priceAdjustment: {
      type: 'string',
      description:
        "A change to the matching offerings' prices: a signed amount (-0.5, +1.2) or a percentage (+10%, -15%).",
      pattern: PRICE_ADJUSTMENT_PATTERN,
      patternHint: 'must be a signed amount (+0.1, -0.5) or percentage (+10%, -15%, at most -100%)',
    },
    capacity: {
      type: 'object',
      description: "Extended resources added to the matching instance types' capacity.",
      additionalProperties: quantity,
      rules: [
        {
          rule: "self.all(x, !(x in ['cpu', 'memory', 'ephemeral-storage', 'pods']))",
          message:
            'invalid resource restricted (capacity may only add extended resources, not cpu, memory, ephemeral-storage or pods)',
          check: (self: Record<string, unknown>) =>
            viol(
              Object.keys(self)
                .filter((k) => WELL_KNOWN_RESOURCES.includes(k))
                .map((k) => [k]),
            ),
        },
      ],
    },
    weight: {
      type: 'integer',
      format: 'int32',
      minimum: 1,
      maximum: 10000,
      description: 'Higher weights apply first; equal weights are merged in name order.',
    },
  },
  rules: [
    {
      rule: '!has(self.price) || !has(self.priceAdjustment)',
      message: "cannot set both 'price' and 'priceAdjustment'",
      check: (self: { price?: string; priceAdjustment?: string }) =>
        self.price === undefined || self.priceAdjustment === undefined,
    },
  ],
};

export const NODEOVERLAY_CRD: CrdDefinition = {
  group: 'karpenter.sh',
  version: 'v1alpha1',
  kind: 'NodeOverlay',
  plural: 'nodeoverlays',
  singular: 'nodeoverlay',
  listKind: 'NodeOverlayList',
  shortNames: ['overlays'],
  categories: ['karpenter'],
  scope: 'Cluster',
  description:
    'NodeOverlay adjusts the prices and capacities of the instance types it selects, as the scheduler sees them.',
  specRequired: true,
  printerColumns: [
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    { name: 'Weight', type: 'integer', jsonPath: '.spec.weight', priority: 1 },
  ],
  spec,
  status: { type: 'object', properties: { conditions } },
};
