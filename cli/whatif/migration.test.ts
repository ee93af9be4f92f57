// Migrations through `karpenter-ts whatif`, as a user runs them: a Cluster Autoscaler cluster (the committed
// example: five EKS managed node groups) is detected, NodePools are proposed from what its nodes and pods
// need, every node group is mapped and replaced, the proposal is written and `karpenter-ts validate` accepts
// it, and the same file given back with --nodepools plans the same move. NodePool names that differ from the
// nodes' get a warning naming both and the --map-nodepool option, which then works.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ec2InstanceInfos, type WhatIfReport } from '../../engine/index.ts';
import { clusterAutoscalerExample } from '../../examples/snapshots/cluster-autoscaler.ts';
import { memoryIo } from '../io.ts';
import { main } from '../main.ts';
import { renderHtml } from './render-html.ts';

const EXAMPLE = fileURLToPath(new URL('../../examples/snapshots/cluster-autoscaler.yaml', import.meta.url));
const INFLATE = fileURLToPath(new URL('../../examples/snapshots/inflate.msgpack', import.meta.url));
const NOW = ['--now', '2026-11-30T11:30:00Z'];
const dir = mkdtempSync(join(tmpdir(), 'karpenter-ts-migrate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIo({ cwd: dir });
  const code = await main(args, io);
  return { code, out: io.stdout, err: io.stderr };
}

const arch = new Map(ec2InstanceInfos().map((i) => [i.name, i.arch] as const));

describe('whatif on a Cluster Autoscaler cluster', () => {
  let report: WhatIfReport;
  let terminal: string;
  const proposal = join(dir, 'proposal.yaml');
  beforeAll(async () => {
    const r = await run('whatif', EXAMPLE, '--json', ...NOW, '--write-proposal', proposal);
    expect(r.code, r.err).toBe(0);
    report = JSON.parse(r.out) as WhatIfReport;
    terminal = (await run('whatif', EXAMPLE, ...NOW)).out;
  }, 120_000);

  it('the committed example is what its generator writes', () => {
    expect(readFileSync(EXAMPLE, 'utf8')).toBe(clusterAutoscalerExample());
  });

  it('detects that no node is managed by Karpenter and plans the migration, saying so', () => {
    expect(report.migration).toMatchObject({ from: 'cluster-autoscaler', trigger: 'detected', nodePools: 'proposed' });
    expect(report.notes[0]).toContain(
      'no node of the input is managed by Karpenter, so this is planned as a migration (as with --from cluster-autoscaler): 14 nodes of 5 node groups',
    );
    expect(report.input.mode).toBe('consolidate');
    expect(terminal).toContain('Migration from cluster-autoscaler (detected: no node is managed by Karpenter)');
    const html = renderHtml(report);
    expect(html).toContain('<section id="migration"><h2>Migration from cluster-autoscaler</h2>');
    expect(html).toContain(
      '<tr><td>batch</td><td class="num">2</td><td>c5.2xlarge</td><td>on-demand</td><td>batch</td></tr>',
    );
    expect(report.risks.map((r) => r.kind)).not.toContain('unmanaged-nodes');
    expect(report.risks.map((r) => r.kind)).not.toContain('no-nodepools');
  });

  it('maps every node group to a proposed NodePool by what its pods need', () => {
    const pools = Object.fromEntries(report.migration!.groups.map((g) => [g.group, g.nodePool]));
    expect(pools).toEqual({ arm: 'arm', batch: 'batch', general: 'default', 'general-spot': 'default', gpu: 'gpu' });
    const byName = new Map(
      report.migration!.proposal!.manifests.map((m) => [
        (m['metadata'] as { name: string }).name + '/' + String(m['kind']),
        m as Record<string, any>,
      ]),
    );
    const batch = byName.get('batch/NodePool')!['spec'];
    expect(batch.template.spec.taints).toEqual([{ key: 'workload', value: 'batch', effect: 'NoSchedule' }]);
    expect(batch.template.metadata.labels).toEqual({ workload: 'batch' });
    const gpu = byName.get('gpu/NodePool')!['spec'];
    expect(gpu.template.spec.requirements).toContainEqual({
      key: 'karpenter.k8s.aws/instance-gpu-name',
      operator: 'In',
      values: ['t4'],
    });
    expect(gpu.limits['nvidia.com/gpu']).toBe('2');
    const general = byName.get('default/NodePool')!['spec'];
    expect(general.template.spec.requirements).toContainEqual({
      key: 'karpenter.sh/capacity-type',
      operator: 'In',
      values: ['on-demand', 'spot'],
    });
    expect(general.template.spec.requirements).toContainEqual({
      key: 'kubernetes.io/arch',
      operator: 'In',
      values: ['amd64'],
    });
    expect(general.weight).toBe(10);
    expect(Number(general.limits.cpu)).toBeGreaterThanOrEqual(72);
    const nodeClass = byName.get('default/EC2NodeClass')!['spec'];
    expect(nodeClass.role).toBe('KarpenterNodeRole-shop');
    expect(nodeClass.blockDeviceMappings[0].ebs.volumeSize).toBe('50Gi');
  });

  it('replaces every old node, keeps pods on the architecture and accelerator they need, and reports the money', () => {
    const old = report.nodes.filter((n) => n.fate === 'removed');
    expect(old).toHaveLength(14);
    expect(report.nodes.filter((n) => n.fate === 'kept')).toHaveLength(0);
    const added = report.nodes.filter((n) => n.fate === 'new');
    for (const n of added) {
      if (n.nodePool === 'default' || n.nodePool === 'batch' || n.nodePool === 'gpu')
        expect(arch.get(n.instanceType!), n.name).toBe('x86_64');
      if (n.nodePool === 'arm') expect(arch.get(n.instanceType!), n.name).toBe('arm64');
    }
    expect(added.filter((n) => n.nodePool === 'gpu').map((n) => n.instanceType)).toEqual(['g4dn.xlarge']);
    expect(report.costPerHourAfter).toBeLessThan(report.costPerHourBefore);
    const parts = Object.values(report.savingsBreakdown.perHour).reduce((a, v) => a + v, 0);
    expect(parts).toBeCloseTo(report.savingsPerHour, 9);
    const migrated = report.moves.filter((m) => m.reason.startsWith('node group '));
    expect(new Set(migrated.flatMap((m) => m.remove))).toEqual(new Set(old.map((n) => n.name)));
    expect(
      migrated.find((m) => m.remove.includes(old.find((n) => n.instanceType === 'g4dn.xlarge')!.name))!.reason,
    ).toMatch(/^node group gpu -> NodePool gpu: replaced as a drifted node/);
    expect(terminal).toMatch(
      /Proposed NodePools[^\n]*\n {2}default\n {4}replaces node groups general \(6 × m5\.xlarge\), general-spot \(3 × m5\.xlarge\/m5a\.xlarge\): 9 nodes/,
    );
  });

  it('counts DaemonSets as overhead on every new node, not as pods to place, and says so', () => {
    expect(report.unschedulable).toEqual([]);
    expect(report.counts.pending).toBe(2); // the reports Deployment's two missing replicas, not DaemonSet pods
    expect(report.warnings).toContain(
      "2 DaemonSets (kube-system/aws-node, kube-system/kube-proxy): overhead on every node they select, counted into each new node's size; not pods to place",
    );
    const perNode = report.nodes.filter((n) => n.fate === 'new');
    // Each new node's pods include the two DaemonSets' pods (aws-node, kube-proxy).
    for (const n of perNode) expect(n.pods).toBeGreaterThanOrEqual(3);
  });

  it('writes the proposal as YAML that `karpenter-ts validate` accepts, and --nodepools with it plans the same move', async () => {
    const text = readFileSync(proposal, 'utf8');
    expect(text).toMatch(/^# NodePools and an EC2NodeClass proposed by `karpenter-ts whatif`/);
    expect(text).toContain('# NodePool batch:\n#   replaces node group batch (2 × c5.2xlarge): 2 nodes');
    const v = await run('validate', proposal);
    expect(v.err).toBe('5 objects checked, all valid\n');
    expect(v.code).toBe(0);
    const again = await run(
      'whatif',
      EXAMPLE,
      '--json',
      ...NOW,
      '--from',
      'cluster-autoscaler',
      '--nodepools',
      proposal,
    );
    expect(again.code, again.err).toBe(0);
    const j = JSON.parse(again.out) as WhatIfReport;
    expect(j.migration).toMatchObject({ trigger: 'option', nodePools: 'given' });
    expect(Object.fromEntries(j.migration!.groups.map((g) => [g.group, g.nodePool]))).toEqual({
      arm: 'arm',
      batch: 'batch',
      general: 'default',
      'general-spot': 'default',
      gpu: 'gpu',
    });
    expect(j.costPerHourAfter).toBeCloseTo(report.costPerHourAfter, 6);
  }, 120_000);
});

describe('whatif migrations: given NodePools, refusals, names', () => {
  it('leaves a group no given NodePool fits, and says why per node', async () => {
    const pools = join(dir, 'one-pool.yaml');
    writeFileSync(
      pools,
      `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec: {amiSelectorTerms: [{alias: al2023@latest}], role: KarpenterNodeRole-shop, subnetSelectorTerms: [{tags: {a: b}}], securityGroupSelectorTerms: [{tags: {a: b}}]}
`,
    );
    const r = await run('whatif', EXAMPLE, '--json', ...NOW, '--nodepools', pools);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as WhatIfReport;
    const batch = j.migration!.groups.find((g) => g.group === 'batch')!;
    expect(batch.nodePool).toBeNull();
    expect(batch.reason).toBe(
      'no NodePool fits: taints: the group has workload=batch:NoSchedule, NodePool default no taints',
    );
    expect(j.migration!.groups.find((g) => g.group === 'arm')!.reason).toBe(
      'no NodePool fits: NodePool default allows amd64, the group runs arm64',
    );
    const left = j.migration!.groups.filter((g) => g.nodePool === null).flatMap((g) => g.nodes);
    expect(left).toHaveLength(5);
    expect(
      j.kept
        .filter((k) => k.code === 'not-migrated')
        .map((k) => k.node)
        .sort(),
    ).toEqual([...left].sort());
    expect(j.nodes.filter((n) => batch.nodes.includes(n.name)).every((n) => n.fate === 'kept')).toBe(true);
  }, 120_000);

  it('runs provision-only without a migration when asked, and says how to get one', async () => {
    const r = await run('whatif', EXAMPLE, '--json', ...NOW, '--mode', 'provision');
    const j = JSON.parse(r.out) as WhatIfReport;
    expect(j.migration).toBeUndefined();
    expect(j.warnings).toContain(
      'no node of the input is managed by Karpenter: run without --mode provision (or with --from cluster-autoscaler) to plan a migration',
    );
    const bad = await run('whatif', EXAMPLE, '--from', 'cluster-autoscaler', '--mode', 'provision');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(
      '--from cluster-autoscaler replaces the nodes, which the disruption engine does: drop --mode provision',
    );
    expect((await run('whatif', EXAMPLE, '--from', 'karpenter')).err).toContain(
      '--from: "karpenter" is not cluster-autoscaler',
    );
  }, 60_000);

  it('warns when --nodepools names pools the nodes do not have, naming both, and --map-nodepool maps them', async () => {
    const general = join(dir, 'general.yaml');
    writeFileSync(
      general,
      readFileSync(fileURLToPath(new URL('../../examples/guide/guide-01.yaml', import.meta.url)), 'utf8').replace(
        'name: default',
        'name: general',
      ),
    );
    const plain = JSON.parse(
      (await run('whatif', INFLATE, '--json', ...NOW, '--nodepools', general)).out,
    ) as WhatIfReport;
    expect(plain.warnings).toContain(
      `4 nodes of NodePool default match no NodePool in ${general} (it has: general): they stay as they are ("nodepool not found"); --map-nodepool default=general plans them as nodes of general`,
    );
    expect(plain.moves).toEqual([]);
    const mapped = JSON.parse(
      (await run('whatif', INFLATE, '--json', ...NOW, '--nodepools', general, '--map-nodepool', 'default=general')).out,
    ) as WhatIfReport;
    expect(mapped.warnings.join('\n')).not.toContain('match no NodePool');
    expect(mapped.moves.length).toBeGreaterThan(0);
    expect(mapped.nodes.filter((n) => n.fate === 'removed').every((n) => n.nodePool === 'general')).toBe(true);
    const wrong = await run('whatif', INFLATE, '--nodepools', general, '--map-nodepool', 'default=gpu');
    expect(wrong.code).toBe(2);
    expect(wrong.err).toBe(
      `karpenter-ts whatif: --map-nodepool default=gpu: NodePool gpu is not in ${general} (it has: general)\n`,
    );
  }, 120_000);

  it("writes each cluster's proposal next to its report in a batch (--out)", async () => {
    const out = join(dir, 'batch');
    const r = await run('whatif', EXAMPLE, INFLATE, ...NOW, '--out', out, '--jobs', '2');
    expect(r.code, r.err).toBe(0);
    const files = readdirSync(out).sort();
    expect(files.filter((f) => f.endsWith('-proposal.yaml'))).toEqual(['0-cluster-autoscaler-proposal.yaml']);
    expect((await run('validate', join(out, '0-cluster-autoscaler-proposal.yaml'))).code).toBe(0);
  }, 120_000);

  it('refuses --write-proposal when nothing was proposed', async () => {
    const r = await run('whatif', INFLATE, ...NOW, '--write-proposal', join(dir, 'none.yaml'));
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      '--write-proposal: nothing written: this run proposed no NodePools: it planned no migration',
    );
  }, 60_000);
});
