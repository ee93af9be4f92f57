// `karpenter-ts whatif` through main(), as a user runs it: reports, exit codes, bad inputs, batches, shards.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { memoryIo } from '../io.ts';
import { main } from '../main.ts';
import { encodeSnapshot, SNAPSHOT_FORMAT } from '../whatif/format.ts';

const EXAMPLE = fileURLToPath(new URL('../../examples/snapshots/inflate.msgpack', import.meta.url));
const NOW = ['--now', '2026-11-30T11:30:00Z'];
const dir = mkdtempSync(join(tmpdir(), 'karpenter-ts-whatif-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string | Uint8Array): string {
  writeFileSync(join(dir, name), text);
  return name;
}

async function whatif(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIo({ cwd: dir });
  const code = await main(['whatif', ...args], io);
  return { code, out: io.stdout, err: io.stderr };
}

const NODE = (name: string, type: string) => `apiVersion: v1
kind: Node
metadata: {name: ${name}, labels: {node.kubernetes.io/instance-type: ${type}, topology.kubernetes.io/zone: ap-northeast-2a, karpenter.sh/capacity-type: on-demand}}
status: {allocatable: {cpu: 1930m, memory: 7Gi, pods: "29"}, conditions: [{type: Ready, status: "True"}]}
`;
const POD = (name: string, cpu = '250m', node?: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default}
spec: {${node ? `nodeName: ${node}, ` : ''}containers: [{name: c, resources: {requests: {cpu: ${cpu}, memory: 256Mi}}}]}
status: {phase: ${node ? 'Running' : 'Pending'}}
`;
const GUIDE = fileURLToPath(new URL('../../examples/guide/guide-01.yaml', import.meta.url));
const small = file(
  'small.yaml',
  [NODE('fixed-1', 'm6i.large'), POD('a', '250m', 'fixed-1'), POD('b', '2')].join('---\n') +
    '---\n' +
    readFileSync(GUIDE, 'utf8'),
);

describe('karpenter-ts whatif: one snapshot', () => {
  it('prints the JSON report for the simulator example, with the documented top-level fields', async () => {
    const r = await whatif(EXAMPLE, '--mode', 'consolidate', '--json', ...NOW);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    for (const k of [
      'costPerHourBefore',
      'costPerHourAfter',
      'lowerBoundPerHour',
      'nodes',
      'moves',
      'unschedulable',
      'kept',
      'warnings',
    ])
      expect(j).toHaveProperty(k);
    expect(j.schema).toBe('karpenter-ts/whatif-report@2');
    expect(j.input).toMatchObject({
      region: 'ap-northeast-2',
      now: '2026-11-30T11:30:00.000Z',
      mode: 'consolidate',
      modeSource: 'option',
      exact: false,
    });
    for (const k of ['risks', 'savingsBreakdown', 'prices', 'notes', 'timing', 'lowerBoundKind'])
      expect(j).toHaveProperty(k);
    const parts = Object.values(j.savingsBreakdown.perHour as Record<string, number>).reduce((a, v) => a + v, 0);
    expect(parts).toBeCloseTo(j.savingsPerHour, 9);
    expect(j.prices.spot.estimate).toBe(true);
    // The issue's two findings on this snapshot: replacements in one zone, pods moved twice.
    const zones = new Set(
      j.nodes.filter((n: { fate: string }) => n.fate === 'new').map((n: { zone: string }) => n.zone),
    );
    expect(zones.size).toBeGreaterThan(1);
    const moved = j.moves.flatMap((m: { pods: { pod: string }[] }) => m.pods.map((p) => p.pod));
    expect(new Set(moved).size).toBe(moved.length);
    expect(j.counts).toMatchObject({ nodesBefore: 4, pods: 17, pending: 0 });
    expect(j.costPerHourAfter).toBeLessThan(j.costPerHourBefore);
    expect(j.costPerMonthBefore).toBeCloseTo(j.costPerHourBefore * 730, 4);
    expect(j.lowerBoundPerHour).toBeLessThanOrEqual(j.costPerHourAfter);
    expect(j.nodes.filter((n: { fate: string }) => n.fate === 'removed').length).toBeGreaterThan(0);
    // The guide's NodePool budget (10% of 4 nodes) lets one node go per step.
    expect(j.moves.every((m: { remove: string[] }) => m.remove.length === 1)).toBe(true);
  });

  it("blocks consolidation inside the guide's weekday 09:00 budget window and says so per node", async () => {
    const r = await whatif(EXAMPLE, '--mode', 'consolidate', '--json', '--now', '2026-11-30T09:30:00Z');
    const j = JSON.parse(r.out);
    expect(j.moves).toEqual([]);
    expect(j.kept).toHaveLength(4);
    expect(j.kept[0].reason).toContain('budget for Underutilized allows 0 of 4 nodes until 10:00 UTC');
  });

  it('defaults to consolidation when nothing is pending, to provisioning otherwise, and says which', async () => {
    const auto = JSON.parse((await whatif(EXAMPLE, '--json', ...NOW)).out);
    expect(auto.input).toMatchObject({ mode: 'consolidate', modeSource: 'default' });
    expect(auto.notes[0]).toContain('the default: no pending pods');
    const pending = await whatif(small, ...NOW);
    expect(pending.out).toContain(
      'note: pending pods only (the default: 1 pending pod in the snapshot); run with --mode consolidate to see consolidation',
    );
    const forced = await whatif(EXAMPLE, '--mode', 'provision', ...NOW);
    expect(forced.out).toContain('pending pods only; run with --mode consolidate to see consolidation');
    expect(forced.out).not.toContain('nothing to launch, nothing to consolidate');
  });

  it('gives the same report on every run: only the timing field differs', async () => {
    const strip = (out: string) => {
      const { timing: _t, ...rest } = JSON.parse(out);
      return JSON.stringify(rest);
    };
    const runs = await Promise.all([1, 2].map(() => whatif(EXAMPLE, '--json', ...NOW)));
    expect(strip(runs[1]!.out)).toBe(strip(runs[0]!.out));
  });

  it('prints the terminal report, in colour only on a terminal', async () => {
    const plain = await whatif(EXAMPLE, '--mode', 'consolidate', ...NOW);
    expect(plain.code).toBe(0);
    expect(plain.out).toMatch(/^before: 4 nodes {2}\$0\.\d+\/h/m);
    expect(plain.out.indexOf('Risks')).toBeLessThan(plain.out.indexOf('Cost'));
    expect(plain.out).toMatch(/spot prices are estimates \(Spot Instance Advisor savings as of \d{4}-\d{2}-\d{2}\)/);
    expect(plain.out).toMatch(/Where the change comes from\n {2}spot instead of on-demand/);
    expect(plain.out).toContain('NODE');
    expect(plain.out).toMatch(/- gone {2}ip-10-0-/);
    expect(plain.out).not.toContain('\x1b[');
    const io = memoryIo({ cwd: dir, isTTY: true });
    await main(['whatif', EXAMPLE, ...NOW], io);
    expect(io.stdout).toContain('\x1b[');
  });

  it('writes a self-contained HTML page with both charts', async () => {
    const r = await whatif(EXAMPLE, '--mode', 'consolidate', '--html', 'report.html', ...NOW);
    expect(r.code).toBe(0);
    expect(r.err).toContain('wrote report.html');
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    expect(html).toContain('<svg id="cost-chart"');
    expect(html).toContain('<svg id="util-chart"');
    expect(html).not.toMatch(/<script|<link|https?:\/\//);
  });

  it('places pending pods on new capacity and tries other NodePools with --nodepools', async () => {
    const base = JSON.parse((await whatif(small, '--json', ...NOW)).out);
    expect(base.moves[0].kind).toBe('launch');
    expect(base.nodes.find((n: { fate: string }) => n.fate === 'new')).toBeDefined();
    const pools = file(
      'spot-c.yaml',
      readFileSync(GUIDE, 'utf8')
        .replace("values: ['c', 'm', 'r']", "values: ['r']")
        .replace("values: ['on-demand', 'spot']", "values: ['on-demand']"),
    );
    const alt = JSON.parse((await whatif(small, '--nodepools', pools, '--json', ...NOW)).out);
    expect(alt.input.sources).toContain('spot-c.yaml');
    const added = alt.nodes.find((n: { fate: string }) => n.fate === 'new');
    expect(added.instanceType).toMatch(/^r/);
    expect(added.capacityType).toBe('on-demand');
  });

  it('expands Deployment, StatefulSet and Job manifests into the pods the input does not already hold', async () => {
    const deploy = (kind: string, name: string, extra: string) => `apiVersion: apps/v1
kind: ${kind}
metadata: {name: ${name}, namespace: default}
spec:
  ${extra}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 500m, memory: 512Mi}}}]}
`;
    const running = `apiVersion: v1
kind: Pod
metadata: {name: web-abc, namespace: default, labels: {app: web}}
spec: {nodeName: fixed-1, containers: [{name: c, resources: {requests: {cpu: 500m, memory: 512Mi}}}]}
status: {phase: Running}
`;
    const f = file(
      'workloads.yaml',
      [
        NODE('fixed-1', 'm6i.large'),
        running,
        deploy('Deployment', 'web', 'replicas: 3'),
        deploy('StatefulSet', 'db', 'replicas: 2'),
        deploy('Job', 'batch', 'parallelism: 4\n  completions: 2'),
        readFileSync(GUIDE, 'utf8'),
      ].join('---\n'),
    );
    const j = JSON.parse((await whatif(f, '--json', ...NOW)).out);
    expect(j.counts.pending).toBe(2 + 2 + 2);
    const placed = j.moves[0].pods.map((p: { pod: string }) => p.pod).sort();
    expect(placed).toEqual([
      'default/batch-whatif-1',
      'default/batch-whatif-2',
      'default/db-0',
      'default/db-1',
      'default/web-whatif-1',
      'default/web-whatif-2',
    ]);
    expect(j.warnings).toContain(
      'Deployment default/web: 2 of its pods are not in the input; placed as pending pods from its template',
    );
  });

  it('reads a CSV trace against the guide NodePool', async () => {
    const trace = file('trace.csv', 'name,cpu,memory,count\nweb,1,2Gi,6\n');
    const r = await whatif('--pods', trace, '--json', ...NOW);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.counts).toMatchObject({ nodesBefore: 0, pending: 6, unschedulable: 0 });
    expect(j.moves[0].pods).toHaveLength(6);
    expect(j.costPerHourAfter).toBeGreaterThan(0);
  });
});

describe('karpenter-ts whatif: bad input', () => {
  const noStack = (err: string): void => expect(err).not.toMatch(/\n\s+at /);

  it('rejects a malformed file, naming the file and document', async () => {
    const r = await whatif(file('broken.yaml', 'apiVersion: v1\nkind: Pod\nmetadata: {name: x\n'));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^karpenter-ts whatif: broken\.yaml: document 1 line \d+: document 1: YAML syntax/);
    noStack(r.err);
  });

  it('rejects an unknown kind, naming the object', async () => {
    const r = await whatif(file('kind.yaml', 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\n'));
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      'kind.yaml: document 1: unknown kind example.com/v1/Widget (object w1); what-if reads Node, Pod',
    );
    noStack(r.err);
  });

  it('rejects a pod with an unparseable quantity, naming file, object and field', async () => {
    const r = await whatif(file('qty.yaml', POD('bad', 'lots')));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /qty\.yaml: document 1 line \d+: Pod\/default\/bad: spec\.containers\[0\]\.resources\.requests\[cpu\]: /,
    );
    noStack(r.err);
  });

  it('rejects a truncated msgpack snapshot and a missing file', async () => {
    const bytes = readFileSync(EXAMPLE);
    const cut = await whatif(file('cut.msgpack', bytes.subarray(0, bytes.length / 2)));
    expect(cut.code).toBe(2);
    expect(cut.err).toContain(
      'cut.msgpack: not a readable karpenter-ts snapshot: the msgpack data is truncated or corrupt',
    );
    noStack(cut.err);
    const missing = await whatif('nope.yaml');
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/nope\.yaml: cannot read: no such file or directory/);
  });

  it('rejects bad options with the usage text', async () => {
    for (const args of [
      ['--mode', 'shrink', small],
      ['--shard', '2/2', small],
      ['--grid', 'colour=red', small],
      ['--bogus'],
      [],
    ]) {
      const r = await whatif(...args);
      expect(r.code).toBe(2);
      expect(r.err).toContain('usage: karpenter-ts whatif');
    }
  });

  it('rejects a snapshot whose objects are of an unknown kind inside msgpack', async () => {
    const bad = encodeSnapshot({
      format: SNAPSHOT_FORMAT,
      version: 1,
      createdAt: '2026-11-30T00:00:00Z',
      source: {},
      objects: {
        Node: [],
        Pod: [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} }],
        NodePool: [],
        NodeClaim: [],
        EC2NodeClass: [],
        DaemonSet: [],
        PodDisruptionBudget: [],
      },
    });
    const r = await whatif(file('bad.msgpack', bad));
    expect(r.code).toBe(2);
    expect(r.err).toContain('bad.msgpack: objects.Pod[0]: Pod/p: spec.containers: must list at least one container');
  });
});

describe('karpenter-ts whatif: batches', () => {
  it('runs snapshots in the pool, one report per cluster; a bad one fails alone and the summary says which', async () => {
    const bad = file('bad-batch.yaml', POD('bad', 'lots'));
    const r = await whatif(EXAMPLE, bad, '--csv', 'summary.csv', ...NOW);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^=+ job 0: \S*inflate\.msgpack =+\nkarpenter-ts what-if: /m);
    expect(r.out).not.toContain('job 1: bad-batch.yaml');
    expect(r.out).toMatch(/^\S*inflate\.msgpack +4 +\$0\.844 +4 +\$0\.\d+ +\$0\.\d+ +ok$/m);
    expect(r.out).toMatch(/^bad-batch\.yaml .*error: bad-batch\.yaml: document 1 line \d+: Pod\/default\/bad/m);
    expect(r.out).toContain('2 clusters; 1 ok, 1 failed of 2 jobs; today $0.844/h (each cluster counted once)');
    // The summary is a report too: it says where its prices come from, how old they are, and that spot is estimated.
    expect(r.out).toMatch(
      /\nprices: ap-northeast-2: on-demand from the table of 2020-07-02.*; spot prices are estimates \(Spot Instance Advisor savings as of 2025-06-28\)\n$/,
    );
    const csv = readFileSync(join(dir, 'summary.csv'), 'utf8').trim().split('\n');
    expect(csv[0]).toBe(
      'job,input,variant,status,nodesBefore,nodesAfter,costPerHourBefore,costPerHourAfter,savingsPerHour,lowerBoundPerHour,efficiencyAfter,unschedulable,moves,error',
    );
    expect(csv).toHaveLength(3);
    expect(csv[2]).toMatch(/^1,bad-batch\.yaml,-,error,/);
  });

  it('takes a folder as a batch of clusters and writes each report to --out', async () => {
    mkdirSync(join(dir, 'fleet/split'), { recursive: true });
    copyFileSync(EXAMPLE, join(dir, 'fleet/a.msgpack'));
    writeFileSync(
      join(dir, 'fleet/split/nodes.yaml'),
      [NODE('fixed-1', 'm6i.large'), POD('a', '250m', 'fixed-1')].join('---\n'),
    );
    writeFileSync(join(dir, 'fleet/split/pools.yaml'), readFileSync(GUIDE, 'utf8'));
    writeFileSync(join(dir, 'fleet/notes.txt'), 'not a snapshot');
    const r = await whatif('fleet', '--out', 'reports', '--json', ...NOW);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.clusters.map((c: { input: string }) => c.input)).toEqual(['fleet/a.msgpack', 'fleet/split']);
    expect(readdirSync(join(dir, 'reports')).sort()).toEqual([
      '0-a.html',
      '0-a.json',
      '0-a.txt',
      '1-split.html',
      '1-split.json',
      '1-split.txt',
    ]);
    expect(JSON.parse(readFileSync(join(dir, 'reports/1-split.json'), 'utf8')).counts.nodesBefore).toBe(1);
  });

  it('puts grid variants side by side and counts each cluster once in the totals; two shards merge into the unsharded summary', async () => {
    const args = [EXAMPLE, small, '--grid', 'mode=provision,consolidate', '--json', '--jobs', '2', ...NOW];
    const whole = await whatif(...args);
    expect(whole.code).toBe(0);
    const all = JSON.parse(whole.out);
    expect(all.total).toBe(4);
    expect(all.rows.map((r: { variant: unknown }) => r.variant)).toEqual([
      { mode: 'provision' },
      { mode: 'consolidate' },
      { mode: 'provision' },
      { mode: 'consolidate' },
    ]);
    expect(all.rows[1].savingsPerHour).toBeGreaterThan(0);
    expect(all.variants).toEqual(['mode=provision', 'mode=consolidate']);
    expect(all.totals.clusters).toBe(2);
    expect(all.totals.costPerHourBefore).toBeCloseTo(all.rows[0].costPerHourBefore + all.rows[2].costPerHourBefore, 6);
    expect(all.totals.variants[1].savingsPerHour).toBeCloseTo(
      all.rows[1].savingsPerHour + all.rows[3].savingsPerHour,
      6,
    );
    expect(all.reports.map((x: { job: number }) => x.job)).toEqual([0, 1, 2, 3]);
    const table = await whatif(EXAMPLE, small, '--grid', 'mode=provision,consolidate', '--jobs', '2', ...NOW);
    expect(table.out).toMatch(
      /^CLUSTER +NODES +\$\/H TODAY +mode=provision: \$\/H AFTER +SAVES \$\/H +mode=consolidate: \$\/H AFTER +SAVES \$\/H +STATUS$/m,
    );
    const strip = (x: { reports?: { report: { timing?: unknown } }[] }) => ({
      ...x,
      reports: x.reports?.map((r) => ({ ...r, report: { ...r.report, timing: undefined } })),
    });
    for (const i of [0, 1]) {
      const shard = await whatif(...args, '--shard', `${i}/2`);
      expect(shard.code).toBe(0);
      const s = JSON.parse(shard.out);
      expect(s.shard).toEqual({ index: i, count: 2 });
      expect(s.rows.map((r: { job: number }) => r.job)).toEqual([i, i + 2]);
      file(`shard-${i}.json`, shard.out);
    }
    const merged = await whatif('--merge', 'shard-0.json', 'shard-1.json', '--json');
    expect(merged.code).toBe(0);
    expect(strip(JSON.parse(merged.out))).toEqual(strip(all));
    const gap = await whatif('--merge', 'shard-1.json');
    expect(gap.code).toBe(1);
    expect(gap.out).toContain('missing jobs (no shard reported them): 0, 2');
    const twice = await whatif('--merge', 'shard-1.json', 'shard-1.json');
    expect(twice.code).toBe(2);
    expect(twice.err).toContain('shard-1.json: job 1 is also in another file (overlapping shards)');
  }, 240_000); // eight what-if jobs: minutes on a loaded machine
});
