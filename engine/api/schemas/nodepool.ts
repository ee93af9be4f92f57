// NodePool (karpenter.sh/v1): the schema of Karpenter v1.14's CRD, with its CEL rules' TypeScript twins.
import {
  conditions,
  duration,
  labelMapRules,
  nillableDuration,
  nodeClassRef,
  requirements,
  resourceList,
  stringMap,
  taints,
} from './common.ts';
import type { CrdDefinition, Schema } from './types.ts';

const budget: Schema = {
  type: 'object',
  description: "Limits how many of the pool's nodes may be disrupted at once, optionally only during a schedule.",
  required: ['nodes'],
  properties: {
    nodes: {
      type: 'string',
      default: '10%',
      pattern: '^((100|[0-9]{1,2})%|[0-9]+)$',
      patternHint: 'must be a node count such as "5" or a percentage from "0%" to "100%" (quote it in YAML)',
    },
    reasons: {
      type: 'array',
      description: 'Disruption reasons the budget applies to; all when omitted.',
      items: { type: 'string', enum: ['Underutilized', 'Empty', 'Drifted'] },
    },
    schedule: {
      type: 'string',
      description: 'Cron schedule (UTC) at which the budget becomes active; requires duration.',
      pattern: '^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\\s(.+)\\s(.+)\\s(.+)\\s(.+))$',
      patternHint:
        'is not a cron schedule: use five fields (minute hour day-of-month month day-of-week, e.g. "0 9 * * MON-FRI") or @hourly, @daily, @weekly, @monthly, @yearly',
    },
    duration: {
      type: 'string',
      description: 'How long the budget stays active after each schedule hit; hours and minutes only.',
      pattern: '^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$',
      patternHint: 'must be hours and/or minutes such as 30m, 1h or 1h30m (seconds are not allowed)',
    },
  },
};

interface Ref {
  group?: string;
  kind?: string;
}

interface BudgetValue {
  schedule?: string;
  duration?: string;
}

const disruption: Schema = {
  type: 'object',
  description: "How and when Karpenter may disrupt the pool's nodes.",
  default: { consolidateAfter: '0s' },
  required: ['consolidateAfter'],
  properties: {
    consolidateAfter: {
      ...nillableDuration('How long a node must stay without pod changes before it may be consolidated, or Never.'),
      hint: 'Karpenter v1 requires it when disruption is given: e.g. consolidateAfter: 0s, 1m or Never',
    },
    consolidationPolicy: {
      type: 'string',
      default: 'WhenEmptyOrUnderutilized',
      enum: ['WhenEmpty', 'WhenEmptyOrUnderutilized', 'Balanced'],
      description: 'Which nodes consolidation may remove: only empty ones, or also underutilized ones.',
    },
    budgets: {
      type: 'array',
      default: [{ nodes: '10%' }],
      maxItems: 50,
      items: budget,
      rules: [
        {
          rule: 'self.all(x, has(x.schedule) == has(x.duration))',
          message: "'schedule' must be set with 'duration'",
          check: (self: BudgetValue[]) => {
            const bad = self.flatMap((b, i) =>
              (b.schedule === undefined) !== (b.duration === undefined)
                ? [
                    {
                      path: [i, b.schedule === undefined ? 'schedule' : 'duration'],
                      message:
                        b.schedule === undefined
                          ? 'is required when duration is set (a budget window needs both a schedule and a duration)'
                          : 'is required when schedule is set (a budget window needs both a schedule and a duration)',
                    },
                  ]
                : [],
            );
            return bad.length === 0 ? true : bad;
          },
        },
      ],
    },
  },
};

const templateSpec: Schema = {
  type: 'object',
  description: 'The NodeClaim template (resource requests omitted).',
  required: ['requirements', 'nodeClassRef'],
  properties: {
    taints: taints('Taints applied to the nodes.'),
    startupTaints: taints('Taints applied at boot that a daemon is expected to remove; pods need not tolerate them.'),
    requirements: requirements('nodepool'),
    nodeClassRef: {
      ...nodeClassRef,
      rules: [
        {
          rule: 'self.group == oldSelf.group',
          message: 'nodeClassRef.group is immutable',
          transition: true,
          check: (s: Ref, o: Ref) => s.group === o.group,
        },
        {
          rule: 'self.kind == oldSelf.kind',
          message: 'nodeClassRef.kind is immutable',
          transition: true,
          check: (s: Ref, o: Ref) => s.kind === o.kind,
        },
      ],
    },
    terminationGracePeriod: duration('Maximum time to drain a node before its pods are deleted forcefully.'),
    expireAfter: { ...nillableDuration('Node lifetime, measured from creation, or Never.'), default: '720h' },
  },
};

const template: Schema = {
  type: 'object',
  required: ['spec'],
  properties: {
    metadata: {
      type: 'object',
      properties: {
        labels: {
          type: 'object',
          maxProperties: 100,
          additionalProperties: {
            type: 'string',
            maxLength: 63,
            pattern: '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$',
            patternHint: 'is not a valid label value',
          },
          rules: labelMapRules('nodepool'),
        },
        annotations: stringMap,
      },
    },
    spec: templateSpec,
  },
};

interface SpecValue {
  replicas?: number;
  weight?: number;
  limits?: Record<string, unknown>;
}

const nodePoolSpec: Schema = {
  type: 'object',
  description: 'A NodePool launches nodes for pods that cannot be scheduled, within its template and limits.',
  required: ['template'],
  properties: {
    template,
    disruption,
    limits: {
      ...resourceList,
      description: "Upper bounds on the resources of all the pool's nodes (cpu, memory, nodes, ...).",
    },
    weight: {
      type: 'integer',
      format: 'int32',
      minimum: 1,
      maximum: 100,
      description: 'Priority among NodePools; higher first.',
    },
    replicas: {
      type: 'integer',
      format: 'int64',
      minimum: 0,
      description: 'Makes the pool static: it keeps exactly this many nodes.',
    },
  },
  rules: [
    {
      rule: '!has(self.replicas) || !has(self.weight)',
      message: "'weight' cannot be set on a static NodePool (one with 'replicas')",
      check: (self: SpecValue) =>
        self.replicas === undefined || self.weight === undefined ? true : [{ path: ['weight'] }],
    },
    {
      rule: "!has(self.replicas) || !has(self.limits) || self.limits.all(x, x == 'nodes')",
      message: "a static NodePool (one with 'replicas') may only limit 'nodes'",
      check: (self: SpecValue) => {
        if (self.replicas === undefined || !self.limits) return true;
        const bad = Object.keys(self.limits).filter((k) => k !== 'nodes');
        return bad.length === 0 ? true : bad.map((k) => ({ path: ['limits', { key: k }] }));
      },
    },
    {
      rule: 'has(self.replicas) == has(oldSelf.replicas)',
      message: 'a NodePool cannot switch between static (replicas) and dynamic provisioning',
      transition: true,
      check: (self: SpecValue, oldSelf: SpecValue) =>
        (self.replicas === undefined) === (oldSelf.replicas === undefined),
    },
  ],
};

const nodePoolStatus: Schema = {
  type: 'object',
  properties: {
    conditions,
    resources: resourceList,
    nodes: { type: 'integer', format: 'int64' },
    nodeClassObservedGeneration: { type: 'integer', format: 'int64' },
  },
};

export const NODEPOOL_CRD: CrdDefinition = {
  group: 'karpenter.sh',
  version: 'v1',
  kind: 'NodePool',
  plural: 'nodepools',
  singular: 'nodepool',
  listKind: 'NodePoolList',
  categories: ['karpenter'],
  scope: 'Cluster',
  description: 'NodePool describes the nodes Karpenter may launch and how it may disrupt them.',
  specRequired: true,
  // kubectl scale nodepool NAME --replicas=N (static pools), as Karpenter's CRD declares it.
  scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.nodes' },
  printerColumns: [
    { name: 'NodeClass', type: 'string', jsonPath: '.spec.template.spec.nodeClassRef.name' },
    { name: 'Nodes', type: 'string', jsonPath: '.status.resources.nodes' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    { name: 'Weight', type: 'integer', jsonPath: '.spec.weight', priority: 1 },
    { name: 'CPU', type: 'string', jsonPath: '.status.resources.cpu', priority: 1 },
    { name: 'Memory', type: 'string', jsonPath: '.status.resources.memory', priority: 1 },
  ],
  spec: nodePoolSpec,
  status: nodePoolStatus,
};
