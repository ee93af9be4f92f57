import { GUIDE_EXAMPLES_DIR } from '../../test/fixtures/guide.ts';
import { mkdtempSync, readdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { memoryIo } from '../io.ts';
import { main } from '../main.ts';
import { run } from './validate.ts';

const EXAMPLES = GUIDE_EXAMPLES_DIR.replace(/\/$/, '');
const dir = mkdtempSync(join(tmpdir(), 'karpenter-ts-validate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  writeFileSync(join(dir, name), text);
  return name;
}

async function validate(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIo({ cwd: dir });
  const code = await run(args, io);
  return { code, out: io.stdout, err: io.stderr };
}

const NODEPOOL = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: web
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: [spot]
`;

describe('karpenter-ts validate', () => {
  it('exits 0 and prints no problems for the valid guide examples', async () => {
    const files = readdirSync(EXAMPLES)
      .filter((f) => f.endsWith('.yaml') && f !== 'guide-04.yaml')
      .map((f) => join(EXAMPLES, f));
    const r = await validate(...files);
    expect(r.code).toBe(0);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^9 objects checked, all valid; skipped \(not Karpenter kinds\): \d+ Deployment\n$/);
  });

  it('exits 1 and names file, document, object, field and line for guide-04', async () => {
    const r = await validate(join(EXAMPLES, 'guide-04.yaml'));
    expect(r.code).toBe(1);
    expect(r.out).toBe(
      `${EXAMPLES}/guide-04.yaml:1: NodePool/spot-optimized: spec.template.spec.nodeClassRef: is required but missing ` +
        '(reference the node class, e.g. {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}) (line 7)\n',
    );
    expect(r.err).toBe('1 object checked, 1 problem\n');
  });

  it('counts documents from 1 and reports each problem on its own line', async () => {
    const name = file(
      'multi.yaml',
      `${NODEPOOL}---\n${NODEPOOL.replace('name: web', 'name: api').replace('operator: In', 'operator: Within')}  weight: 0\n`,
    );
    const r = await validate(name);
    expect(r.code).toBe(1);
    expect(r.out.split('\n').filter(Boolean)).toEqual([
      'multi.yaml:2: NodePool/api: spec.template.spec.requirements[0].operator: "Within" is not allowed; use one of: In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte (line 24)',
      'multi.yaml:2: NodePool/api: spec.weight: must be at least 1 (got 0) (line 26)',
    ]);
  });

  it('skips other kinds without complaint and reports old API versions with their replacements', async () => {
    const name = file(
      'mixed.yaml',
      [
        'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {}',
        'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}',
        'apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: old}\nspec:\n  disruption:\n    consolidationPolicy: WhenUnderutilized',
      ].join('\n---\n'),
    );
    const r = await validate(name);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      'mixed.yaml:3: NodePool/old: apiVersion: NodePool karpenter.sh/v1beta1 is no longer served: use apiVersion karpenter.sh/v1 (line 1',
    );
    expect(r.out).toMatch(
      /mixed\.yaml:3: NodePool\/old: spec\.disruption\.consolidationPolicy: WhenUnderutilized was renamed: use consolidationPolicy: WhenEmptyOrUnderutilized/,
    );
    expect(r.out).not.toMatch(/Deployment|Widget/);
  });

  it('validates the items of a kubectl List', async () => {
    const name = file(
      'list.json',
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          {
            apiVersion: 'karpenter.k8s.aws/v1',
            kind: 'EC2NodeClass',
            metadata: { name: 'e' },
            spec: {
              amiSelectorTerms: [{ alias: 'al2023@latest' }],
              role: 'r',
              subnetSelectorTerms: [],
              securityGroupSelectorTerms: [{ id: 'sg-1' }],
            },
          },
        ],
      }),
    );
    const r = await validate(name);
    expect(r.code).toBe(1);
    expect(r.out).toBe(
      'list.json:1: EC2NodeClass/e: spec.subnetSelectorTerms: subnetSelectorTerms cannot be empty (line 1)\n',
    );
  });

  it('reports YAML syntax errors and non-objects as problems (exit 1)', async () => {
    const r = await validate(file('broken.yaml', 'apiVersion: v1\nkind: [Pod\n'), file('scalar.yaml', 'just text\n'));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^broken\.yaml:1: YAML syntax: .+ \(line \d+\)$/m);
    expect(r.out).toMatch(/^scalar\.yaml:1: is not a Kubernetes object/m);
  });

  it('exits 2 with a clear message for an unreadable file, after checking the others', async () => {
    const ok = file('ok.yaml', NODEPOOL);
    const r = await validate('missing.yaml', ok);
    expect(r.code).toBe(2);
    expect(r.err).toContain('karpenter-ts validate: cannot read missing.yaml: no such file\n');
    // Never "all valid" after a file could not be read.
    expect(r.err).toContain('1 object checked, 1 file not read\n');
    expect(r.err).not.toContain('all valid');
    expect(r.err).not.toMatch(/\n\s+at /);
    const d = await validate('.');
    expect(d.code).toBe(2);
    expect(d.err).toContain('cannot read .: it is a directory');
  });

  it('exits 2 on usage errors and 0 on --help', async () => {
    const none = await validate();
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/no files given[\s\S]*usage: karpenter-ts validate FILE/);
    const bad = await validate('--strict', 'x.yaml');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/unknown option "--strict"/);
    const help = await validate('--help');
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^usage: karpenter-ts validate FILE\.\.\./);
    expect(help.out).toMatch(
      /exit status: 0 all valid, 1 problems found, 2 usage error or a file that could not be read/,
    );
  });

  it('is reachable through the main dispatcher', async () => {
    const io = memoryIo({ cwd: dir });
    expect(await main(['validate', file('via-main.yaml', NODEPOOL)], io)).toBe(0);
    expect(io.stderr).toBe('1 object checked, all valid\n');
  });

  it('reports an unknown kind in a Karpenter API group (a typo, a wrong group) and counts other kinds as skipped', async () => {
    const docs = [
      'apiVersion: karpenter.sh/v1\nkind: Nodepool\nmetadata:\n  name: a\n',
      'apiVersion: karpenter.sh.io/v1\nkind: NodePool\nmetadata:\n  name: b\n',
      'apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClas\nmetadata:\n  name: c\n',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\n',
      'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: e\n',
    ];
    const r = await validate(file('kinds.yaml', docs.join('---\n')));
    expect(r.code).toBe(1);
    expect(r.out).toBe(
      [
        'kinds.yaml:1: unknown kind Nodepool in karpenter.sh/v1: did you mean karpenter.sh/v1 NodePool? (line 2)',
        'kinds.yaml:2: NodePool is served as karpenter.sh/v1, not karpenter.sh.io/v1 (line 7)',
        'kinds.yaml:3: unknown kind EC2NodeClas in karpenter.k8s.aws/v1: Karpenter serves karpenter.sh/v1 NodePool, karpenter.sh/v1 NodeClaim, karpenter.k8s.aws/v1 EC2NodeClass, karpenter.sh/v1alpha1 NodeOverlay (line 12)',
        '',
      ].join('\n'),
    );
    expect(r.err).toBe('3 objects checked, 3 problems; skipped (not Karpenter kinds): 1 ConfigMap, 1 Widget\n');
  });

  it('reports 1e400 and negative quantities in words, and escapes control characters in what it prints', async () => {
    const pool =
      NODEPOOL.replace(/name: web/, 'name: "evil\\u001b[2J\\u202e"') + '  limits:\n    cpu: 1e400\n    memory: -1Gi\n';
    const r = await validate(file('q.yaml', pool));
    expect(r.code).toBe(1);
    expect(r.out).toContain('spec.limits[cpu]');
    expect(r.out).toMatch(
      /too large to be a quantity \(it reads as infinity, as 1e400 does\)|infinity: a number too large to read, such as 1e400/,
    );
    expect(r.out).not.toContain('(null)');
    expect(r.out).toContain('spec.limits[memory]: a limit must not be negative (got -1Gi)');
    expect(r.out).toContain('evil\\x1b[2J\\u202e');
    expect(r.out).not.toMatch(/[\u001b\u202e]/);
  });

  it('refuses a file over the size limit before reading it, naming the limit and the variable that raises it', async () => {
    const big = file('big.yaml', NODEPOOL + '#'.repeat(2048));
    const io = memoryIo({ cwd: dir, env: { KARPENTER_TS_MAX_TEXT_BYTES: '1Ki' } });
    expect(await main(['validate', big], io)).toBe(2);
    expect(io.stderr).toMatch(
      /cannot read .*big\.yaml: the file is \d+ bytes, over the 1024 bytes limit for YAML, JSON and CSV input \(raise it with KARPENTER_TS_MAX_TEXT_BYTES=<bytes>/,
    );
    expect(io.stderr).not.toContain('all valid');
    const many = memoryIo({ cwd: dir, env: { KARPENTER_TS_MAX_OBJECTS: '1' } });
    expect(await main(['validate', file('two.yaml', `${NODEPOOL}---\n${NODEPOOL}`)], many)).toBe(2);
    expect(many.stderr).toContain('2 objects, over the limit of 1 (raise it with KARPENTER_TS_MAX_OBJECTS=<count>)');
  });
});
