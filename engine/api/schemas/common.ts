// Schema pieces shared by NodePool and NodeClaim (karpenter.sh/v1): requirements, taints, the node class
// reference, durations, quantities and status conditions. Constraints are Karpenter v1's (its CRDs under
// pkg/apis/crds and the runtime validation in pkg/apis/v1); the wording is ours.
import {
  AWS_WELL_KNOWN,
  KARPENTER_WELL_KNOWN,
  KUBERNETES_WELL_KNOWN,
  LABEL_VALUE_RE,
  QUALIFIED_NAME_RE,
  awsDomainRestricted,
  k8sIoDomainRestricted,
  karpenterDomainRestricted,
  kubernetesDomainRestricted,
  type LabelContext,
} from '../labels.ts';
import type { CelRule, Schema, Violation } from './types.ts';

export const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';
const NILLABLE_DURATION_PATTERN = '^(([0-9]+(s|m|h))+|Never)$';
const DURATION_PATTERN = '^([0-9]+(s|m|h))+$';
export const QUALIFIED_NAME_PATTERN = QUALIFIED_NAME_RE.source;
export const LABEL_VALUE_PATTERN = LABEL_VALUE_RE.source;

export const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Gte', 'Lte'] as const;
const NUMERIC_OPERATORS: readonly string[] = ['Gt', 'Lt', 'Gte', 'Lte'];

export const quantity: Schema = {
  intOrString: true,
  pattern: QUANTITY_PATTERN,
  patternHint: 'is not a quantity (write e.g. 500m, 2, 1.5, 16Gi, 100M)',
};

export const resourceList: Schema = { type: 'object', additionalProperties: quantity };

export const nillableDuration = (description: string): Schema => ({
  type: 'string',
  description,
  pattern: NILLABLE_DURATION_PATTERN,
  patternHint: 'must be a duration in whole hours, minutes and seconds (such as 30s, 5m, 1h30m, 720h) or Never',
});

export const duration = (description: string): Schema => ({
  type: 'string',
  description,
  pattern: DURATION_PATTERN,
  patternHint: 'must be a duration in whole hours, minutes and seconds, such as 30s, 5m or 1h30m',
});

const celList = (xs: readonly string[]): string => `[${xs.map((x) => `'${x}'`).join(', ')}]`;
const DOMAIN = `find('^([^/]+)')`;

/** The restricted-label rules, as predicates over one key; `self` is the key or `x` the map key. */
function labelRulePredicates(
  ctx: LabelContext,
): { expr: (v: string) => string; message: string; bad: (k: string) => boolean }[] {
  const rules = [
    {
      expr: (v: string) =>
        `${v} in ${celList(KUBERNETES_WELL_KNOWN)} || ${v}.${DOMAIN}.endsWith('node.kubernetes.io') || ${v}.${DOMAIN}.endsWith('node-restriction.kubernetes.io') || !${v}.${DOMAIN}.endsWith('kubernetes.io')`,
      message:
        'label domain "kubernetes.io" is restricted (only well-known labels and keys under node.kubernetes.io or node-restriction.kubernetes.io)',
      bad: kubernetesDomainRestricted,
    },
    {
      expr: (v: string) => `${v}.${DOMAIN}.endsWith('kops.k8s.io') || !${v}.${DOMAIN}.endsWith('k8s.io')`,
      message: 'label domain "k8s.io" is restricted (only keys under kops.k8s.io)',
      bad: k8sIoDomainRestricted,
    },
    {
      expr: (v: string) => `${v} in ${celList(KARPENTER_WELL_KNOWN)} || !${v}.${DOMAIN}.endsWith('karpenter.sh')`,
      message: 'label domain "karpenter.sh" is restricted (only karpenter.sh/capacity-type)',
      bad: karpenterDomainRestricted,
    },
    {
      expr: (v: string) => `${v} != 'kubernetes.io/hostname'`,
      message: 'label "kubernetes.io/hostname" is restricted: Karpenter sets it per node',
      bad: (k: string) => k === 'kubernetes.io/hostname',
    },
    {
      expr: (v: string) => `${v} in ${celList(AWS_WELL_KNOWN)} || !${v}.${DOMAIN}.endsWith('karpenter.k8s.aws')`,
      message:
        'label domain "karpenter.k8s.aws" is restricted (only the AWS provider\'s well-known labels such as karpenter.k8s.aws/instance-family)',
      bad: awsDomainRestricted,
    },
  ];
  if (ctx === 'nodepool') {
    rules.splice(3, 0, {
      expr: (v: string) => `${v} != 'karpenter.sh/nodepool'`,
      message: 'label "karpenter.sh/nodepool" is restricted: Karpenter sets it to the NodePool\'s name',
      bad: (k: string) => k === 'karpenter.sh/nodepool',
    });
  }
  return rules;
}

/** Rules on a single label key (a requirement's key). */
function keyRules(ctx: LabelContext): CelRule[] {
  return labelRulePredicates(ctx).map((p) => ({
    rule: p.expr('self'),
    message: p.message,
    check: (self: string) => !p.bad(self),
  }));
}

/** Rules on a map of labels (template labels): each key is checked, errors point at the key. */
export function labelMapRules(ctx: LabelContext): CelRule[] {
  const syntax: CelRule = {
    rule: `self.all(x, x.matches('${QUALIFIED_NAME_PATTERN.replace(/\\/g, '\\\\')}') && x.size() <= 316)`,
    message: 'label keys must be qualified names (letters, digits, "-", "_", ".", with an optional "prefix/")',
    check: (self: Record<string, unknown>) =>
      viol(
        Object.keys(self)
          .filter((k) => !QUALIFIED_NAME_RE.test(k) || k.length > 316)
          .map((k) => [{ key: k }]),
      ),
  };
  return [
    syntax,
    ...labelRulePredicates(ctx).map((p) => ({
      rule: `self.all(x, ${p.expr('x')})`,
      message: p.message,
      check: (self: Record<string, unknown>) =>
        viol(
          Object.keys(self)
            .filter(p.bad)
            .map((k) => [{ key: k }]),
        ),
    })),
  ];
}

function viol(paths: Violation['path'][]): boolean | Violation[] {
  return paths.length === 0 ? true : paths.map((path) => ({ path }));
}

interface Req {
  key?: string;
  operator?: string;
  values?: string[];
  minValues?: number;
}

/** The requirement list rules (In needs values, numeric operators need one integer, minValues <= values). */
function requirementListRules(): CelRule[] {
  return [
    {
      rule: "self.all(x, x.operator == 'In' ? (has(x.values) && x.values.size() != 0) : true)",
      message: 'a requirement with operator In must list at least one value',
      check: (self: Req[]) =>
        viol(self.flatMap((x, i) => (x.operator === 'In' && (x.values ?? []).length === 0 ? [[i, 'values']] : []))),
    },
    {
      rule: "self.all(x, x.operator in ['Gt', 'Lt', 'Gte', 'Lte'] ? (has(x.values) && x.values.size() == 1 && x.values[0].matches('^[+]?[0-9]+$') && int(x.values[0]) >= 0) : true)",
      message: 'a requirement with operator Gt, Lt, Gte or Lte must have exactly one value, a non-negative integer',
      check: (self: Req[]) =>
        viol(
          self.flatMap((x, i) =>
            NUMERIC_OPERATORS.includes(x.operator ?? '') && !singleNonNegativeInt(x.values) ? [[i, 'values']] : [],
          ),
        ),
    },
    {
      rule: "self.all(x, (x.operator == 'In' && has(x.minValues)) ? x.values.size() >= x.minValues : true)",
      message: "a requirement's minValues cannot exceed the number of values it lists",
      check: (self: Req[]) =>
        viol(
          self.flatMap((x, i) =>
            x.operator === 'In' && x.minValues !== undefined && (x.values ?? []).length < x.minValues
              ? [[i, 'minValues']]
              : [],
          ),
        ),
    },
  ];
}

export function singleNonNegativeInt(values: readonly string[] | undefined): boolean {
  if (!values || values.length !== 1) return false;
  const v = values[0]!;
  return /^\+?[0-9]+$/.test(v) && BigInt(v) <= (1n << 63n) - 1n;
}

function requirement(ctx: LabelContext): Schema {
  return {
    type: 'object',
    description: 'A node selector requirement with an optional minimum number of distinct values (minValues).',
    required: ['key', 'operator'],
    properties: {
      key: {
        type: 'string',
        maxLength: 316,
        pattern: QUALIFIED_NAME_PATTERN,
        patternHint: 'is not a valid label key (letters, digits, "-", "_", ".", with an optional lower-case "prefix/")',
        rules: keyRules(ctx),
      },
      operator: { type: 'string', enum: OPERATORS, description: 'How the key relates to the values.' },
      values: {
        type: 'array',
        listType: 'atomic',
        items: {
          type: 'string',
          maxLength: 63,
          pattern: LABEL_VALUE_PATTERN,
          patternHint: 'is not a valid label value',
        },
      },
      minValues: {
        type: 'integer',
        minimum: 1,
        maximum: 50,
        description: 'Minimum number of distinct values the instance-type options must span.',
      },
    },
  };
}

export function requirements(ctx: LabelContext): Schema {
  return {
    type: 'array',
    description: 'Requirements every node launched from this template satisfies.',
    maxItems: 100,
    items: requirement(ctx),
    rules: requirementListRules(),
    hint: 'a list such as [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]',
  };
}

const taint: Schema = {
  type: 'object',
  required: ['key', 'effect'],
  properties: {
    key: { type: 'string', minLength: 1, pattern: QUALIFIED_NAME_PATTERN, patternHint: 'is not a valid taint key' },
    value: { type: 'string', maxLength: 63, pattern: LABEL_VALUE_PATTERN, patternHint: 'is not a valid taint value' },
    effect: { type: 'string', enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] },
    timeAdded: { type: 'string', format: 'date-time' },
  },
};

export const taints = (description: string): Schema => ({ type: 'array', description, items: taint });

const nonEmpty = (what: string): CelRule => ({
  rule: "self != ''",
  message: `${what} may not be empty`,
  check: (self: string) => self !== '',
});

export const nodeClassRef: Schema = {
  type: 'object',
  description: 'The node class (for AWS an EC2NodeClass) that configures the nodes.',
  required: ['group', 'kind', 'name'],
  hint: 'reference the node class, e.g. {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}',
  properties: {
    group: {
      type: 'string',
      pattern: '^[^/]*$',
      patternHint: 'must be an API group without a version (e.g. karpenter.k8s.aws)',
      rules: [nonEmpty('group')],
      hint: 'e.g. karpenter.k8s.aws',
    },
    kind: { type: 'string', rules: [nonEmpty('kind')], hint: 'e.g. EC2NodeClass' },
    name: { type: 'string', rules: [nonEmpty('name')], hint: 'the name of the EC2NodeClass' },
  },
};

export const conditions: Schema = {
  type: 'array',
  description: 'Conditions of the object.',
  items: {
    type: 'object',
    required: ['lastTransitionTime', 'status', 'type'],
    properties: {
      lastTransitionTime: { type: 'string', format: 'date-time' },
      message: { type: 'string', maxLength: 32768 },
      observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
      reason: { type: 'string', maxLength: 1024 },
      status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
      type: { type: 'string', maxLength: 316 },
    },
  },
};

export const stringMap: Schema = { type: 'object', additionalProperties: { type: 'string' } };
