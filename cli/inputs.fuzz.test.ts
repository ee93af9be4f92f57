// Generated bad documents thrown at every reader through the real CLI entry (main(argv, io), in process):
// validate, whatif over YAML, JSON, a CSV trace and a msgpack snapshot. Each must answer with a message and
// its documented exit code (whatif 2; validate 1 for problems in what it read, 2 for what it could not
// read), and never a stack trace or a crash.
import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { memoryIo } from './io.ts';
import { main } from './main.ts';
import { encodeSnapshot, SNAPSHOT_FORMAT } from './whatif/format.ts';

const dir = mkdtempSync(join(tmpdir(), 'karpenter-ts-fuzz-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

async function run(
  name: string,
  body: string | Uint8Array,
  args: (f: string) => string[],
): Promise<{ code: number; err: string; out: string }> {
  const f = `in-${n++}-${name}`;
  writeFileSync(join(dir, f), body);
  const io = memoryIo({ cwd: dir });
  const code = await main(args(f), io);
  return { code, err: io.stderr, out: io.stdout };
}

const STACK = /\n\s+at |TypeError|RangeError|ReferenceError|Maximum call stack/;

// Bad values where a field is expected: negative, non-finite, huge, wrong types, hostile strings.
const badValue = fc.oneof(
  fc.constantFrom(
    -1,
    -0.5,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    1e300,
    9e30,
    '-2',
    '-512Mi',
    '1e400',
    '9e30',
    '2Gi',
    '500m',
    '',
    ' ',
    '\u001b[2J',
    '\u202e',
    '__proto__',
    'constructor',
    null,
    true,
    [],
    {},
  ),
  fc.string(),
  fc.integer(),
  fc.double(),
);
const key = fc.constantFrom('cpu', 'memory', 'nvidia.com/gpu', 'pods', 'ephemeral-storage');
const name = fc.oneof(
  fc.constantFrom('ok', 'evil\u001b]0;x\u0007', 'bidi\u202egpj', 'new\nline', ''),
  fc.string({ maxLength: 12 }),
);

const badPod = fc
  .record({
    name,
    requests: fc.dictionary(key, badValue, { minKeys: 1, maxKeys: 3 }),
    nodeName: fc.option(name, { nil: undefined }),
  })
  .map((p) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: p.name, namespace: 'default' },
    spec: {
      ...(p.nodeName !== undefined ? { nodeName: p.nodeName } : {}),
      containers: [{ name: 'c', resources: { requests: p.requests } }],
    },
  }));
const badPool = fc
  .record({
    name,
    kind: fc.constantFrom('NodePool', 'Nodepool', 'nodepool'),
    group: fc.constantFrom('karpenter.sh/v1', 'karpenter.sh.io/v1', 'karpenter.sh/v1beta1', 'v1'),
    limits: fc.dictionary(key, badValue, { maxKeys: 2 }),
    weight: badValue,
  })
  .map((p) => ({
    apiVersion: p.group,
    kind: p.kind,
    metadata: { name: p.name },
    spec: {
      weight: p.weight,
      limits: p.limits,
      template: {
        spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] },
      },
    },
  }));
// Any shape at all, with the kinds the readers know.
const anyObject = fc.record({
  apiVersion: fc.constantFrom('v1', 'karpenter.sh/v1', 'apps/v1'),
  kind: fc.constantFrom('Pod', 'Node', 'NodePool', 'NodeClaim', 'DaemonSet', 'EC2NodeClass'),
  metadata: fc.anything(),
  spec: fc.anything(),
  status: fc.anything(),
});
const docs = fc.array(fc.oneof(badPod, badPool, anyObject), { minLength: 1, maxLength: 4 });
const toYaml = (d: unknown[]): string => d.map((x) => stringify(x)).join('---\n');

// A fixed seed: the same documents on every run (a failure names its counterexample and reproduces).
const RUNS = { numRuns: 25, seed: 14 };

describe('fuzz: bad documents get a message and an exit code, never a crash', () => {
  it('validate (YAML)', async () => {
    await fc.assert(
      fc.asyncProperty(docs, async (d) => {
        const r = await run('v.yaml', toYaml(d), (f) => ['validate', f]);
        expect([0, 1, 2]).toContain(r.code);
        expect(r.err + r.out).not.toMatch(STACK);
        if (r.code !== 0) expect(r.err).not.toContain('all valid');
      }),
      RUNS,
    );
  });

  it('whatif (YAML and JSON)', async () => {
    await fc.assert(
      fc.asyncProperty(docs, fc.boolean(), async (d, json) => {
        const body = json ? JSON.stringify({ apiVersion: 'v1', kind: 'List', items: d }) : toYaml(d);
        const r = await run(json ? 'w.json' : 'w.yaml', body, (f) => ['whatif', '--now', '2026-11-30T11:30:00Z', f]);
        expect(r.err + r.out).not.toMatch(STACK);
        expect(r.code).toBe(2);
        expect(r.err).toMatch(/^karpenter-ts whatif: /);
      }),
      RUNS,
    );
  });

  it('whatif (msgpack snapshot, also random bytes)', async () => {
    const snapshot = fc.oneof(
      docs.map((d) =>
        encodeSnapshot({
          format: SNAPSHOT_FORMAT,
          version: 1,
          createdAt: '2026-11-30T00:00:00Z',
          source: {},
          objects: {
            Node: [],
            Pod: d,
            NodePool: [],
            NodeClaim: [],
            EC2NodeClass: [],
            DaemonSet: [],
            PodDisruptionBudget: [],
          },
        }),
      ),
      fc.uint8Array({ minLength: 1, maxLength: 256 }).map((b) => Uint8Array.from([0x85, ...b])),
      fc.anything().map((v) => encodeSnapshot(v as never)),
    );
    await fc.assert(
      fc.asyncProperty(snapshot, async (bytes) => {
        const r = await run('s.msgpack', bytes, (f) => ['whatif', f]);
        expect(r.err + r.out).not.toMatch(STACK);
        expect(r.code).toBe(2);
        expect(r.err).toMatch(/^karpenter-ts whatif: /);
      }),
      RUNS,
    );
  });

  it('whatif --pods (CSV)', async () => {
    const cell = fc.oneof(
      badValue.map((v) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))),
      fc.string({ maxLength: 8 }),
    );
    const csv = fc
      .tuple(
        fc.constantFrom('cpu,memory', 'memory,cpu', 'cpu,memory,count', 'name,cpu,memory,gpu', 'cpu', '1,2Gi'),
        fc.array(fc.array(cell, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 4 }),
      )
      .map(
        ([h, rows]) => `${h}\n${rows.map((r) => r.map((c) => `"${c.replace(/"/g, '""')}"`).join(',')).join('\n')}\n`,
      );
    await fc.assert(
      fc.asyncProperty(csv, async (text) => {
        const r = await run('t.csv', text, (f) => ['whatif', '--pods', f, '--now', '2026-11-30T11:30:00Z']);
        expect(r.err + r.out).not.toMatch(STACK);
        expect([0, 2]).toContain(r.code);
        if (r.code === 2) expect(r.err).toMatch(/^karpenter-ts whatif: /);
      }),
      RUNS,
    );
  });
});
