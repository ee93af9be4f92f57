// Table-driven NodePool validation: each case breaks one rule and names the field path it must report.
import { GUIDE_EXAMPLES_DIR } from '../../test/fixtures/guide.ts';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatFieldError } from './errors.ts';
import { validateObject } from './validate.ts';
import { parseDocuments } from './yaml.ts';

type Obj = Record<string, any>;
const EXAMPLES = GUIDE_EXAMPLES_DIR;

function nodePool(): Obj {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'test' },
    spec: {
      template: {
        metadata: { labels: { team: 'a' } },
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
            { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm'] },
          ],
        },
      },
      disruption: { consolidateAfter: '1m', budgets: [{ nodes: '10%' }] },
    },
  };
}

const req = (o: Obj, i: number, r: Obj): void => {
  o.spec.template.spec.requirements[i] = r;
};

function errorsOf(mutate: (o: Obj) => void): { path: string; message: string }[] {
  const o = nodePool();
  mutate(o);
  return validateObject(o).map((e) => ({ path: e.path, message: e.message }));
}

describe('NodePool examples from the guide', () => {
  const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.yaml'));
  it('finds the eight example files', () => {
    expect(files.length).toBe(8);
  });
  for (const f of files) {
    it(`${f} ${f === 'guide-04.yaml' ? 'fails only on the missing nodeClassRef' : 'validates'}`, () => {
      const docs = parseDocuments(readFileSync(EXAMPLES + f, 'utf8'));
      const errors = docs.flatMap((d) => {
        expect(d.syntaxErrors).toEqual([]);
        return validateObject(d.value);
      });
      if (f === 'guide-04.yaml') {
        expect(errors.map(formatFieldError)).toEqual([
          expect.stringMatching(/^NodePool\/spot-optimized: spec\.template\.spec\.nodeClassRef: is required/),
        ]);
      } else {
        expect(errors.map(formatFieldError)).toEqual([]);
      }
    });
  }
});

describe('NodePool rules', () => {
  it('accepts the base fixture', () => {
    expect(errorsOf(() => {})).toEqual([]);
  });

  const cases: [string, (o: Obj) => void, string, RegExp][] = [
    [
      'missing nodeClassRef',
      (o) => delete o.spec.template.spec.nodeClassRef,
      'spec.template.spec.nodeClassRef',
      /required/,
    ],
    [
      'empty nodeClassRef.group',
      (o) => (o.spec.template.spec.nodeClassRef.group = ''),
      'spec.template.spec.nodeClassRef.group',
      /may not be empty/,
    ],
    [
      'group with a version',
      (o) => (o.spec.template.spec.nodeClassRef.group = 'karpenter.k8s.aws/v1'),
      'spec.template.spec.nodeClassRef.group',
      /without a version/,
    ],
    [
      'nodeClassRef without name',
      (o) => delete o.spec.template.spec.nodeClassRef.name,
      'spec.template.spec.nodeClassRef.name',
      /required/,
    ],
    [
      'nodeClassRef.apiVersion (v1beta1 style)',
      (o) => (o.spec.template.spec.nodeClassRef.apiVersion = 'x'),
      'spec.template.spec.nodeClassRef.apiVersion',
      /unknown field/,
    ],
    [
      'missing requirements',
      (o) => delete o.spec.template.spec.requirements,
      'spec.template.spec.requirements',
      /required/,
    ],
    [
      'unknown operator',
      (o) => req(o, 1, { key: 'a', operator: 'Like', values: ['x'] }),
      'spec.template.spec.requirements[1].operator',
      /"Like" is not allowed; use one of: In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte/,
    ],
    [
      'missing operator',
      (o) => req(o, 1, { key: 'a', values: ['x'] }),
      'spec.template.spec.requirements[1].operator',
      /required/,
    ],
    [
      'In with empty values',
      (o) => req(o, 1, { key: 'a', operator: 'In', values: [] }),
      'spec.template.spec.requirements[1].values',
      /operator In must list at least one value/,
    ],
    [
      'In without values',
      (o) => req(o, 0, { key: 'a', operator: 'In' }),
      'spec.template.spec.requirements[0].values',
      /operator In must list at least one value/,
    ],
    [
      'Gt with two values',
      (o) => req(o, 1, { key: 'a', operator: 'Gt', values: ['1', '2'] }),
      'spec.template.spec.requirements[1].values',
      /exactly one value, a non-negative integer/,
    ],
    [
      'Lt with a word',
      (o) => req(o, 1, { key: 'a', operator: 'Lt', values: ['abc'] }),
      'spec.template.spec.requirements[1].values',
      /exactly one value, a non-negative integer/,
    ],
    [
      'Gte with a fraction',
      (o) => req(o, 1, { key: 'a', operator: 'Gte', values: ['1.5'] }),
      'spec.template.spec.requirements[1].values',
      /non-negative integer/,
    ],
    [
      'Lte without values',
      (o) => req(o, 1, { key: 'a', operator: 'Lte' }),
      'spec.template.spec.requirements[1].values',
      /non-negative integer/,
    ],
    [
      'Gt beyond int64',
      (o) => req(o, 1, { key: 'a', operator: 'Gt', values: ['9223372036854775808'] }),
      'spec.template.spec.requirements[1].values',
      /non-negative integer/,
    ],
    [
      'minValues 0',
      (o) => req(o, 1, { key: 'a', operator: 'In', values: ['x'], minValues: 0 }),
      'spec.template.spec.requirements[1].minValues',
      /at least 1/,
    ],
    [
      'minValues 51',
      (o) => req(o, 1, { key: 'a', operator: 'Exists', minValues: 51 }),
      'spec.template.spec.requirements[1].minValues',
      /at most 50/,
    ],
    [
      'minValues above the values',
      (o) => req(o, 1, { key: 'a', operator: 'In', values: ['x', 'y'], minValues: 3 }),
      'spec.template.spec.requirements[1].minValues',
      /cannot exceed the number of values/,
    ],
    [
      '101 requirements',
      (o) =>
        (o.spec.template.spec.requirements = Array.from({ length: 101 }, (_, i) => ({
          key: `k${i}`,
          operator: 'Exists',
        }))),
      'spec.template.spec.requirements',
      /101 items; at most 100/,
    ],
    [
      'restricted hostname',
      (o) => req(o, 1, { key: 'kubernetes.io/hostname', operator: 'In', values: ['x'] }),
      'spec.template.spec.requirements[1].key',
      /"kubernetes.io\/hostname" is restricted/,
    ],
    [
      'restricted nodepool key',
      (o) => req(o, 1, { key: 'karpenter.sh/nodepool', operator: 'In', values: ['x'] }),
      'spec.template.spec.requirements[1].key',
      /"karpenter.sh\/nodepool" is restricted/,
    ],
    [
      'karpenter.sh domain',
      (o) => req(o, 1, { key: 'karpenter.sh/team', operator: 'Exists' }),
      'spec.template.spec.requirements[1].key',
      /domain "karpenter.sh" is restricted/,
    ],
    [
      'karpenter.sh subdomain',
      (o) => req(o, 1, { key: 'x.karpenter.sh/team', operator: 'Exists' }),
      'spec.template.spec.requirements[1].key',
      /domain "karpenter.sh" is restricted/,
    ],
    [
      'karpenter.k8s.aws domain',
      (o) => req(o, 1, { key: 'karpenter.k8s.aws/secret', operator: 'Exists' }),
      'spec.template.spec.requirements[1].key',
      /domain "karpenter.k8s.aws" is restricted/,
    ],
    [
      'kubernetes.io domain',
      (o) => req(o, 1, { key: 'kubernetes.io/foo', operator: 'Exists' }),
      'spec.template.spec.requirements[1].key',
      /domain "kubernetes.io" is restricted/,
    ],
    [
      'k8s.io domain',
      (o) => req(o, 1, { key: 'example.k8s.io/foo', operator: 'Exists' }),
      'spec.template.spec.requirements[1].key',
      /domain "k8s.io" is restricted/,
    ],
    [
      'bad key syntax',
      (o) => req(o, 1, { key: 'Bad Key', operator: 'Exists' }),
      'spec.template.spec.requirements[1].key',
      /not a valid label key/,
    ],
    [
      'bad value',
      (o) => req(o, 1, { key: 'a', operator: 'In', values: ['a b'] }),
      'spec.template.spec.requirements[1].values[0]',
      /not a valid label value/,
    ],
    [
      'numeric value',
      (o) => req(o, 1, { key: 'a', operator: 'In', values: [5] }),
      'spec.template.spec.requirements[1].values[0]',
      /must be a string, not an integer \(5\); quote it: "5"/,
    ],
    [
      'restricted template label',
      (o) => (o.spec.template.metadata.labels['karpenter.sh/nodepool'] = 'x'),
      'spec.template.metadata.labels[karpenter.sh/nodepool]',
      /restricted/,
    ],
    [
      'hostname template label',
      (o) => (o.spec.template.metadata.labels['kubernetes.io/hostname'] = 'x'),
      'spec.template.metadata.labels[kubernetes.io/hostname]',
      /restricted/,
    ],
    [
      'karpenter.sh template label',
      (o) => (o.spec.template.metadata.labels['karpenter.sh/custom'] = 'x'),
      'spec.template.metadata.labels[karpenter.sh/custom]',
      /domain "karpenter.sh" is restricted/,
    ],
    [
      'bad template label key',
      (o) => (o.spec.template.metadata.labels['a b'] = 'x'),
      'spec.template.metadata.labels[a b]',
      /qualified names/,
    ],
    [
      'long template label value',
      (o) => (o.spec.template.metadata.labels['team'] = 'x'.repeat(64)),
      'spec.template.metadata.labels[team]',
      /64 characters long; at most 63/,
    ],
    [
      '101 template labels',
      (o) =>
        (o.spec.template.metadata.labels = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`l${i}`, 'v']))),
      'spec.template.metadata.labels',
      /101 entries; at most 100/,
    ],
    [
      'bad taint effect',
      (o) => (o.spec.template.spec.taints = [{ key: 'a', effect: 'NoWay' }]),
      'spec.template.spec.taints[0].effect',
      /use one of: NoSchedule, PreferNoSchedule, NoExecute/,
    ],
    [
      'taint without key',
      (o) => (o.spec.template.spec.taints = [{ effect: 'NoSchedule' }]),
      'spec.template.spec.taints[0].key',
      /required/,
    ],
    [
      'duplicate taint',
      (o) => {
        o.spec.template.spec.taints = [{ key: 'a', value: '1', effect: 'NoSchedule' }];
        o.spec.template.spec.startupTaints = [{ key: 'a', value: '2', effect: 'NoSchedule' }];
      },
      'spec.template.spec.startupTaints[0]',
      /duplicate taint a:NoSchedule/,
    ],
    [
      'expireAfter in days',
      (o) => (o.spec.template.spec.expireAfter = '1d'),
      'spec.template.spec.expireAfter',
      /duration .* or Never/,
    ],
    [
      'expireAfter without unit',
      (o) => (o.spec.template.spec.expireAfter = '10'),
      'spec.template.spec.expireAfter',
      /duration/,
    ],
    [
      'expireAfter lower-case never',
      (o) => (o.spec.template.spec.expireAfter = 'never'),
      'spec.template.spec.expireAfter',
      /or Never/,
    ],
    [
      'expireAfter overflowing',
      (o) => (o.spec.template.spec.expireAfter = '9999999999h'),
      'spec.template.spec.expireAfter',
      /too large/,
    ],
    [
      'terminationGracePeriod Never',
      (o) => (o.spec.template.spec.terminationGracePeriod = 'Never'),
      'spec.template.spec.terminationGracePeriod',
      /duration/,
    ],
    ['weight 0', (o) => (o.spec.weight = 0), 'spec.weight', /at least 1 \(got 0\)/],
    ['weight 101', (o) => (o.spec.weight = 101), 'spec.weight', /at most 100 \(got 101\)/],
    [
      'weight as a string',
      (o) => (o.spec.weight = '5'),
      'spec.weight',
      /must be an integer, not a string \("5"\); write it without quotes/,
    ],
    ['negative limit', (o) => (o.spec.limits = { cpu: '-1' }), 'spec.limits[cpu]', /must not be negative/],
    ['unparseable limit', (o) => (o.spec.limits = { memory: 'lots' }), 'spec.limits[memory]', /not a quantity/],
    [
      'fractional number limit',
      (o) => (o.spec.limits = { cpu: 1.5 }),
      'spec.limits[cpu]',
      /integer or a string.*quote it: "1.5"/,
    ],
    [
      'unknown consolidationPolicy',
      (o) => (o.spec.disruption.consolidationPolicy = 'WhenUnderutilized'),
      'spec.disruption.consolidationPolicy',
      /use one of: WhenEmpty, WhenEmptyOrUnderutilized, Balanced/,
    ],
    [
      'disruption without consolidateAfter',
      (o) => delete o.spec.disruption.consolidateAfter,
      'spec.disruption.consolidateAfter',
      /required/,
    ],
    [
      'consolidateAfter in words',
      (o) => (o.spec.disruption.consolidateAfter = '5 minutes'),
      'spec.disruption.consolidateAfter',
      /duration/,
    ],
    [
      'budget over 100%',
      (o) => (o.spec.disruption.budgets = [{ nodes: '110%' }]),
      'spec.disruption.budgets[0].nodes',
      /percentage from "0%" to "100%"/,
    ],
    [
      'negative budget',
      (o) => (o.spec.disruption.budgets = [{ nodes: '-1' }]),
      'spec.disruption.budgets[0].nodes',
      /node count/,
    ],
    [
      'budget as a number',
      (o) => (o.spec.disruption.budgets = [{ nodes: 5 }]),
      'spec.disruption.budgets[0].nodes',
      /must be a string.*quote it: "5"/,
    ],
    [
      'schedule without duration',
      (o) => (o.spec.disruption.budgets = [{ nodes: '0', schedule: '0 9 * * *' }]),
      'spec.disruption.budgets[0].duration',
      /required when schedule is set/,
    ],
    [
      'duration without schedule',
      (o) => (o.spec.disruption.budgets = [{ nodes: '0', duration: '1h' }]),
      'spec.disruption.budgets[0].schedule',
      /required when duration is set/,
    ],
    [
      'four-field schedule',
      (o) => (o.spec.disruption.budgets = [{ nodes: '0', schedule: '0 9 * *', duration: '1h' }]),
      'spec.disruption.budgets[0].schedule',
      /not a cron schedule/,
    ],
    [
      'reversed day range',
      (o) => (o.spec.disruption.budgets = [{ nodes: '0', schedule: '0 9 * * FRI-MON', duration: '1h' }]),
      'spec.disruption.budgets[0].schedule',
      /not a valid schedule: .*starts \(5\) after it ends \(1\)/,
    ],
    [
      'hour 25',
      (o) => (o.spec.disruption.budgets = [{ nodes: '0', schedule: '0 25 * * *', duration: '1h' }]),
      'spec.disruption.budgets[0].schedule',
      /hour 25 is above the maximum 23/,
    ],
    [
      'time zone',
      (o) => (o.spec.disruption.budgets = [{ nodes: '0', schedule: 'TZ=UTC 0 9 * * *', duration: '1h' }]),
      'spec.disruption.budgets[0].schedule',
      /time zones are not supported/,
    ],
    [
      'budget duration in seconds',
      (o) => (o.spec.disruption.budgets = [{ nodes: '0', schedule: '@daily', duration: '30s' }]),
      'spec.disruption.budgets[0].duration',
      /seconds are not allowed/,
    ],
    [
      'unknown budget reason',
      (o) => (o.spec.disruption.budgets = [{ nodes: '1', reasons: ['Expired'] }]),
      'spec.disruption.budgets[0].reasons[0]',
      /use one of: Underutilized, Empty, Drifted/,
    ],
    [
      '51 budgets',
      (o) => (o.spec.disruption.budgets = Array.from({ length: 51 }, () => ({ nodes: '1' }))),
      'spec.disruption.budgets',
      /51 items; at most 50/,
    ],
    [
      'static pool with weight',
      (o) => Object.assign(o.spec, { replicas: 3, weight: 10 }),
      'spec.weight',
      /static NodePool/,
    ],
    [
      'static pool limiting cpu',
      (o) => Object.assign(o.spec, { replicas: 3, limits: { nodes: '5', cpu: '10' } }),
      'spec.limits[cpu]',
      /may only limit 'nodes'/,
    ],
    ['negative replicas', (o) => (o.spec.replicas = -1), 'spec.replicas', /at least 0/],
    [
      'kubelet in the template (moved in v1)',
      (o) => (o.spec.template.spec.kubelet = { maxPods: 10 }),
      'spec.template.spec.kubelet',
      /unknown field "kubelet"/,
    ],
    [
      'misspelt field',
      (o) => (o.spec.template.spec.requirement = []),
      'spec.template.spec.requirement',
      /unknown field "requirement" \(did you mean "requirements"\?\)/,
    ],
    [
      'requirements as a map',
      (o) => (o.spec.template.spec.requirements = { key: 'a' }),
      'spec.template.spec.requirements',
      /must be a list, not an object/,
    ],
    ['missing name', (o) => delete o.metadata.name, 'metadata.name', /required/],
    ['invalid name', (o) => (o.metadata.name = 'Bad_Name'), 'metadata.name', /not a valid name/],
    ['missing spec', (o) => delete o.spec, 'spec', /required/],
  ];

  it.each(cases)('reports %s at its field', (_name, mutate, path, message) => {
    const errors = errorsOf(mutate);
    expect(errors.map((e) => e.path)).toContain(path);
    expect(errors.filter((e) => e.path === path).map((e) => e.message)).toContainEqual(expect.stringMatching(message));
  });

  it.each([
    ['Gt 5', (o: Obj) => req(o, 1, { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['5'] })],
    [
      'Gte/Lte',
      (o: Obj) => {
        req(o, 0, { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gte', values: ['4'] });
        req(o, 1, { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lte', values: ['16'] });
      },
    ],
    [
      'allowed domains',
      (o: Obj) =>
        (o.spec.template.spec.requirements = [
          'node.kubernetes.io/instance-type',
          'node-restriction.kubernetes.io/x',
          'kops.k8s.io/x',
          'topology.kubernetes.io/zone',
          'karpenter.k8s.aws/instance-family',
          'topology.k8s.aws/zone-id',
          'example.com/team',
        ].map((key) => ({ key, operator: 'Exists' }))),
    ],
    [
      'Never durations',
      (o: Obj) => {
        o.spec.template.spec.expireAfter = 'Never';
        o.spec.disruption.consolidateAfter = 'Never';
      },
    ],
    [
      'budget windows',
      (o: Obj) =>
        (o.spec.disruption.budgets = [
          { nodes: '0', schedule: '@weekly', duration: '1h30m', reasons: ['Drifted'] },
          { nodes: '100%' },
        ]),
    ],
    ['static pool', (o: Obj) => Object.assign(o.spec, { replicas: 0, limits: { nodes: '4' } })],
    ['integer limits', (o: Obj) => (o.spec.limits = { cpu: 1000, memory: '1000Gi', nodes: '10' })],
    ['Balanced policy', (o: Obj) => (o.spec.disruption.consolidationPolicy = 'Balanced')],
    ['null fields (pruned like the API server does)', (o: Obj) => (o.spec.template.spec.taints = null)],
  ])('accepts %s', (_name, mutate) => {
    expect(errorsOf(mutate)).toEqual([]);
  });

  it('names the object in every error', () => {
    const o = nodePool();
    o.spec.weight = 0;
    expect(validateObject(o).map(formatFieldError)).toEqual(['NodePool/test: spec.weight: must be at least 1 (got 0)']);
  });

  it('reports every problem of an object in one pass', () => {
    const errors = errorsOf((o) => {
      req(o, 0, { key: 'a', operator: 'Like' });
      req(o, 1, { key: 'b', operator: 'In', values: [] });
      o.spec.weight = 500;
      o.spec.limits = { cpu: '-2' };
    });
    expect(errors.map((e) => e.path).sort()).toEqual([
      'spec.limits[cpu]',
      'spec.template.spec.requirements[0].operator',
      'spec.template.spec.requirements[1].values',
      'spec.weight',
    ]);
  });
});
