// Bad what-if input gets a named error and exit 2, never a crash: quantities (YAML, JSON, CSV, msgpack),
// swapped CSV columns, unknown Karpenter kinds, size and object limits, control characters in names, an object listed twice.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { memoryIo } from '../io.ts';
import { main } from '../main.ts';
import { encodeSnapshot, SNAPSHOT_FORMAT } from './format.ts';

const dir = mkdtempSync(join(tmpdir(), 'karpenter-ts-inputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const GUIDE = readFileSync(fileURLToPath(new URL('../../examples/guide/guide-01.yaml', import.meta.url)), 'utf8');

function file(name: string, text: string | Uint8Array): string {
  writeFileSync(join(dir, name), text);
  return name;
}

/** whatif with these environment variables set (its jobs, in this thread or a worker, read process.env). */
async function whatif(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; out: string; err: string }> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    const io = memoryIo({ cwd: dir, env });
    const code = await main(['whatif', ...args], io);
    return { code, out: io.stdout, err: io.stderr };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

const pod = (name: string, requests: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: "${name}", namespace: default}\nspec: {containers: [{name: c, resources: {requests: ${requests}}}]}\n`;

describe('quantities', () => {
  it.each([
    ['cpu: -2', 'requests[cpu]', '-2 is negative: cpu must be 0 or more'],
    ['memory: -512Mi', 'requests[memory]', '"-512Mi" is negative'],
    ['nvidia.com/gpu: -1', 'requests[nvidia.com/gpu]', '-1 is negative'],
    ['cpu: 1e400', 'requests[cpu]', 'too large to be a quantity (it reads as infinity, as 1e400 does)'],
    ['cpu: .nan', 'requests[cpu]', 'NaN is not a quantity'],
    ['memory: 9e30', 'requests[memory]', '9e+30 is too large: memory must be at most 9007199254740991 units'],
  ])('YAML %s: exit 2 naming the pod and the field', async (requests, field, message) => {
    const r = await whatif({}, file('q.yaml', `${pod('bad', `{${requests}}`)}---\n${GUIDE}`));
    expect(r.code).toBe(2);
    expect(r.err).toContain('Pod/default/bad');
    expect(r.err).toContain(field);
    expect(r.err).toContain(message);
    expect(r.err).not.toMatch(/\n\s+at |RangeError|\(null\)/);
  });

  it('JSON and msgpack inputs are held to the same rules', async () => {
    const json = JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'j', namespace: 'default' },
          spec: { containers: [{ name: 'c', resources: { requests: { cpu: -1 } } }] },
        },
      ],
    });
    const r = await whatif({}, file('q.json', json));
    expect(r).toMatchObject({ code: 2 });
    expect(r.err).toContain('Pod/default/j: spec.containers[0].resources.requests[cpu]: -1 is negative');
    const objects = {
      Node: [],
      Pod: [
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'm', namespace: 'default' },
          spec: { containers: [{ name: 'c', resources: { requests: { memory: Number.POSITIVE_INFINITY } } }] },
        },
      ],
      NodePool: [],
      NodeClaim: [],
      EC2NodeClass: [],
      DaemonSet: [],
      PodDisruptionBudget: [],
    };
    const m = await whatif(
      {},
      file(
        'q.msgpack',
        encodeSnapshot({ format: SNAPSHOT_FORMAT, version: 1, createdAt: '2026-11-30T00:00:00Z', source: {}, objects }),
      ),
    );
    expect(m.code).toBe(2);
    expect(m.err).toContain('q.msgpack: objects.Pod[0]');
    expect(m.err).toContain(
      'Pod/default/m: spec.containers[0].resources.requests[memory]: the number is too large to be a quantity',
    );
  });
});

describe('trace CSV', () => {
  it.each([
    [
      'cpu,memory\n2Gi,500m\n',
      'line 2: cpu: "2Gi" is written like memory, not cpu (are the cpu and memory columns swapped?',
    ],
    ['cpu,memory\n4,2\n', 'line 2: memory: "2" is 2 bytes of memory, less than 1Mi'],
    ['cpu,memory\n1,-1Gi\n', 'line 2: memory: "-1Gi" is negative'],
    ['cpu,memory\n2000000,1Gi\n', 'line 2: cpu: "2000000" is 2000000 cores, more than any instance has'],
    ['1,2Gi\n3,4Gi\n', 'line 1: the first row holds values (1, 2Gi), not a header'],
    ['cpu,cpu,memory\n1,1,1Gi\n', 'line 1: the column cpu is named twice'],
  ])('%j: exit 2 with the line and the column', async (csv, message) => {
    const r = await whatif({}, '--pods', file('t.csv', csv));
    expect(r.code).toBe(2);
    expect(r.err).toContain(`t.csv: ${message}`);
  });

  it('refuses more pods than the object limit before making any', async () => {
    const r = await whatif(
      { KARPENTER_TS_MAX_OBJECTS: '100' },
      '--pods',
      file('many.csv', 'cpu,memory,count\n100m,64Mi,60\n100m,64Mi,60\n'),
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      'many.csv: 120 pods in the trace, over the limit of 100 (raise it with KARPENTER_TS_MAX_OBJECTS=<count>)',
    );
  });
});

describe('kinds, limits and names', () => {
  it('an unknown kind in a Karpenter group is an error with the spelling Karpenter serves', async () => {
    const r = await whatif({}, file('k.yaml', 'apiVersion: karpenter.sh/v1\nkind: Nodepool\nmetadata: {name: x}\n'));
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      'unknown kind Nodepool in karpenter.sh/v1: did you mean karpenter.sh/v1 NodePool? (object x)',
    );
  });

  it('refuses an object listed twice, naming it and both places, in one file or across a folder', async () => {
    const onNode = (node: string) =>
      `apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: web}\nspec: {nodeName: ${node}, containers: [{name: c, resources: {requests: {cpu: 1}}}]}\n`;
    const twice = await whatif({}, file('twice.yaml', [GUIDE, onNode('n1'), onNode('n2')].join('---\n')));
    expect(twice.code).toBe(2);
    expect(twice.err).toMatch(
      /twice\.yaml: document \d+: Pod web\/a is listed twice \(first at twice\.yaml: document \d+\)/,
    );
    expect(twice.err).not.toMatch(/\n\s+at |internal error/);
    // Another namespace is another pod.
    const other = onNode('n1').replace('namespace: web', 'namespace: api');
    expect((await whatif({}, file('two.yaml', [GUIDE, onNode('n1'), other].join('---\n')))).code).toBe(0);
    // A NodePool of one name in two files of one cluster (a sub-folder of a batch folder).
    mkdirSync(join(dir, 'batch', 'one'), { recursive: true });
    file('batch/one/a.yaml', GUIDE);
    file('batch/one/b.yaml', GUIDE);
    const folder = await whatif({}, 'batch');
    expect(folder.code).toBe(2);
    expect(folder.err).toMatch(
      /batch\/one\/b\.yaml: document \d+: NodePool \S+ is listed twice \(first at batch\/one\/a\.yaml: document \d+\)/,
    );
  });

  it('refuses a file over the size limit and a snapshot over the object limit, naming the limit and its variable', async () => {
    const big = await whatif(
      { KARPENTER_TS_MAX_TEXT_BYTES: '2Ki' },
      file('big.yaml', GUIDE + `# ${'x'.repeat(4096)}\n`),
    );
    expect(big.code).toBe(2);
    expect(big.err).toMatch(
      /big\.yaml: the file is \d+ bytes, over the 2048 bytes limit for YAML, JSON and CSV input \(raise it with KARPENTER_TS_MAX_TEXT_BYTES=<bytes>; a large cluster reads faster and smaller as a msgpack snapshot/,
    );
    const many = await whatif(
      { KARPENTER_TS_MAX_OBJECTS: '2' },
      file('three.yaml', [pod('a', '{cpu: 1}'), pod('b', '{cpu: 1}'), pod('c', '{cpu: 1}')].join('---\n')),
    );
    expect(many.code).toBe(2);
    expect(many.err).toContain('three.yaml: 3 objects, over the limit of 2');
    const bad = await whatif({ KARPENTER_TS_MAX_OBJECTS: 'lots' }, 'three.yaml');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('KARPENTER_TS_MAX_OBJECTS="lots" is not a positive whole number');
  });

  it('escapes control and bidirectional characters of names in errors and in the terminal report', async () => {
    const evil = 'web\\u001b]0;owned\\u0007\\u202egpj';
    const r = await whatif({}, file('e.yaml', pod(evil, '{cpu: -1}')));
    expect(r.code).toBe(2);
    expect(r.err).toContain('Pod/default/web\\x1b]0;owned\\x07\\u202egpj');
    expect(r.err).not.toMatch(/[\u001b\u0007\u202e]/);
    const ok = await whatif(
      {},
      '--now',
      '2026-11-30T11:30:00Z',
      file('ok.yaml', `${pod(evil, '{cpu: 100m, memory: 64Mi}')}---\n${GUIDE}`),
    );
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toContain('web\\x1b]0;owned\\x07\\u202egpj');
    expect(ok.out).not.toMatch(/[\u0007\u202e]|\u001b\]/);
  });
});
