// Parsers never throw past their API: arbitrary values anywhere in a valid object give errors, not crashes.
import { GUIDE_EXAMPLES_DIR } from '../../test/fixtures/guide.ts';
import { readFileSync, readdirSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isRecord } from './errors.ts';
import { parseObject, parseText } from './objects.ts';
import { validateObject } from './validate.ts';
import { parseDocuments } from './yaml.ts';

const EXAMPLES = GUIDE_EXAMPLES_DIR;
const seeds: unknown[] = [
  ...readdirSync(EXAMPLES)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => parseDocuments(readFileSync(EXAMPLES + f, 'utf8')).map((d) => d.value)),
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p' },
    spec: {
      containers: [{ name: 'c', resources: { requests: { cpu: '1' } }, ports: [{ hostPort: 80 }] }],
      initContainers: [{ name: 'i', restartPolicy: 'Always' }],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'a', operator: 'In', values: ['b'] }] }],
          },
        },
      },
      tolerations: [{ operator: 'Exists' }],
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'z', whenUnsatisfiable: 'DoNotSchedule' }],
    },
    status: { phase: 'Pending' },
  },
  {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n' },
    spec: { taints: [{ key: 'a', effect: 'NoSchedule' }] },
    status: { capacity: { cpu: '2' }, conditions: [{ type: 'Ready', status: 'True' }] },
  },
  {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'd' },
    spec: { template: { spec: { containers: [{ name: 'c' }] } } },
  },
  {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'b' },
    spec: { maxUnavailable: 1, selector: { matchLabels: { a: 'b' } } },
  },
  {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name: 'c' },
    spec: { nodeClassRef: { group: 'g', kind: 'k', name: 'n' }, requirements: [{ key: 'a', operator: 'Exists' }] },
    status: { conditions: [] },
  },
];

/** Every path to a value inside `v`. */
function paths(v: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const out = [prefix];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...paths(x, [...prefix, i])));
  else if (isRecord(v)) for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...prefix, k]));
  return out;
}

function replaced(obj: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const copy: any = structuredClone(obj);
  let cur = copy;
  for (const seg of path.slice(0, -1)) cur = cur[seg];
  cur[path[path.length - 1]!] = value;
  return copy;
}

const mutation = fc.integer({ min: 0, max: seeds.length - 1 }).chain((i) => {
  const all = paths(seeds[i]);
  return fc.tuple(
    fc.constant(i),
    fc.integer({ min: 0, max: all.length - 1 }).map((j) => all[j]!),
    fc.jsonValue({ maxDepth: 3 }),
  );
});

describe('robustness', () => {
  it('returns results, never throws, when any field of a valid object holds any JSON value', () => {
    fc.assert(
      fc.property(mutation, ([i, path, value]) => {
        const obj = replaced(seeds[i], path, value);
        const r = parseObject(obj);
        expect(typeof r.ok).toBe('boolean');
        if (!r.ok) for (const e of r.errors) expect(typeof e.message).toBe('string');
        expect(Array.isArray(validateObject(obj))).toBe(true);
      }),
      { numRuns: 400, seed: 20260101 },
    );
  });

  it('never throws on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        expect(Array.isArray(parseText(text))).toBe(true);
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  it('keeps "__proto__" keys as plain data', () => {
    const obj = JSON.parse(
      '{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"x"},"spec":{"__proto__":{"polluted":true},"template":{"spec":{"nodeClassRef":{"group":"g","kind":"k","name":"n"},"requirements":[]}}}}',
    );
    const errors = validateObject(obj);
    expect(errors.map((e) => e.path)).toContain('spec.__proto__');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
