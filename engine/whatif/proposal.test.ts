// Node groups of unmanaged nodes and the NodePools proposed for them: grouping by label or by shape, what
// each NodePool carries over (taints, the labels pods select and a NodePool may set, accelerators,
// architectures) and what it leaves out (Fargate, Windows, restricted labels); every manifest passes the
// same validation `karpenter-ts validate` applies.
import { describe, expect, it } from 'vitest';
import { clusterObjects } from '../../test/fixtures/cluster-objects.ts';
import { validateObject } from '../api/validate.ts';
import { mapGroups, unmanagedCluster } from './migration.ts';
import { nodeGroups } from './nodegroups.ts';
import { proposeNodePools } from './proposal.ts';

const node = (
  name: string,
  type: string,
  labels: Record<string, string> = {},
  taints = '[]',
  capacity = 'cpu: "4", memory: 16Gi, pods: "58"',
) => `
apiVersion: v1
kind: Node
metadata: {name: ${name}, labels: {node.kubernetes.io/instance-type: ${type}, topology.kubernetes.io/zone: us-east-1a, ${Object.entries(
  labels,
)
  .map(([k, v]) => `${k}: "${v}"`)
  .join(', ')}}}
spec: {taints: ${taints}}
status: {capacity: {${capacity}}, allocatable: {${capacity}}}
---`;
const pod = (name: string, nodeName: string, spec = '') => `
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default}
spec: {nodeName: ${nodeName}, ${spec} containers: [{name: c, resources: {requests: {cpu: 100m}}}]}
status: {phase: Running}
---`;

const CLUSTER = [
  node('a1', 'm5.large', { 'kubernetes.io/arch': 'amd64' }),
  node('a2', 'm5.large', { 'kubernetes.io/arch': 'amd64', 'node.kubernetes.io/lifecycle': 'spot' }),
  node(
    'ml1',
    'c6i.xlarge',
    { 'kubernetes.io/arch': 'amd64', team: 'ml', 'node-role.kubernetes.io/ml': '' },
    '[{key: dedicated, value: ml, effect: NoSchedule}]',
  ),
  node(
    'g1',
    'g5.xlarge',
    { 'kubernetes.io/arch': 'amd64', 'eks.amazonaws.com/nodegroup': 'gpu' },
    '[{key: nvidia.com/gpu, effect: NoSchedule}]',
    'cpu: "4", memory: 16Gi, pods: "58", nvidia.com/gpu: "1"',
  ),
  node('inf1', 'inf2.xlarge', { 'kubernetes.io/arch': 'amd64', 'eks.amazonaws.com/nodegroup': 'neuron' }),
  node('arm1', 'm6g.large', { 'kubernetes.io/arch': 'arm64', 'eks.amazonaws.com/nodegroup': 'arm' }),
  node('w1', 'm5.large', {
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/os': 'windows',
    'eks.amazonaws.com/nodegroup': 'win',
  }),
  node('f1', 'm5.large', {
    'eks.amazonaws.com/compute-type': 'fargate',
    'eks.amazonaws.com/nodegroup': 'fargate-profile',
  }),
  node(
    'cordoned',
    'm5.large',
    { 'kubernetes.io/arch': 'amd64' },
    '[{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]',
  ),
  pod(
    'train',
    'ml1',
    'nodeSelector: {team: ml, node-role.kubernetes.io/ml: "", kubernetes.io/arch: amd64}, tolerations: [{key: dedicated, operator: Exists}],',
  ),
].join('');

describe('nodeGroups', () => {
  const groups = nodeGroups(clusterObjects(CLUSTER));
  const named = (n: string) => groups.find((g) => g.name === n)!;

  it('names groups by their node-group label, else by shape (architecture, capacity type, workload taints)', () => {
    expect(groups.map((g) => [g.name, g.namedBy, g.nodes.map((n) => n.name)])).toEqual([
      ['arm', 'eks.amazonaws.com/nodegroup', ['arm1']],
      ['fargate-profile', 'eks.amazonaws.com/nodegroup', ['f1']],
      ['gpu', 'eks.amazonaws.com/nodegroup', ['g1']],
      ['neuron', 'eks.amazonaws.com/nodegroup', ['inf1']],
      ['nodes-amd64-on-demand', 'shape', ['a1', 'cordoned']],
      ['nodes-amd64-on-demand-dedicated', 'shape', ['ml1']],
      ['nodes-amd64-spot', 'shape', ['a2']],
      ['win', 'eks.amazonaws.com/nodegroup', ['w1']],
    ]);
  });

  it('reads GPUs, Neuron accelerators, categories, generations and capacity; carries only labels a NodePool may set', () => {
    expect(named('gpu').accelerator).toEqual({ kind: 'gpu', manufacturer: 'nvidia', names: ['a10g'] });
    expect(named('gpu').capacity.gpus).toBe(1);
    expect(named('neuron').accelerator).toEqual({ kind: 'neuron', families: ['inf2'] });
    expect(named('nodes-amd64-on-demand').minGeneration).toBe(5);
    expect(named('nodes-amd64-on-demand-dedicated').selectedLabels).toEqual({ team: 'ml' });
    expect(named('nodes-amd64-spot').capacityTypes).toEqual(['spot']);
  });
});

describe('proposeNodePools', () => {
  const o = clusterObjects(CLUSTER);
  const groups = nodeGroups(o);
  const p = proposeNodePools(groups);

  it('proposes one NodePool per kind of group, leaving Fargate and Windows out with the reason', () => {
    expect(p.left.map((l) => l.group)).toEqual(['fargate-profile', 'win']);
    expect(p.left[1]!.reason).toContain('windows nodes: the proposal covers Linux');
    expect(p.nodePools.map((x) => [x.name, x.groups])).toEqual([
      ['default', ['nodes-amd64-on-demand', 'nodes-amd64-spot']],
      ['arm', ['arm']],
      ['gpu', ['gpu']],
      ['neuron', ['neuron']],
      ['nodes-amd64-on-demand-dedicated', ['nodes-amd64-on-demand-dedicated']],
    ]);
    expect(p.groupPool).toMatchObject({ 'nodes-amd64-spot': 'default', gpu: 'gpu' });
  });

  it('carries taints, selected labels, accelerators and weights into the manifests', () => {
    const spec = (name: string) =>
      (p.nodePools.find((x) => x.name === name)!.manifest as { spec: Record<string, any> }).spec;
    expect(spec('default').weight).toBe(10);
    expect(spec('arm').weight).toBeUndefined();
    expect(spec('default').template.spec.requirements).toContainEqual({
      key: 'karpenter.sh/capacity-type',
      operator: 'In',
      values: ['on-demand', 'spot'],
    });
    expect(spec('nodes-amd64-on-demand-dedicated').template.metadata.labels).toEqual({ team: 'ml' });
    expect(spec('nodes-amd64-on-demand-dedicated').template.spec.taints).toEqual([
      { key: 'dedicated', value: 'ml', effect: 'NoSchedule' },
    ]);
    expect(spec('gpu').template.spec.requirements).toContainEqual({
      key: 'karpenter.k8s.aws/instance-gpu-name',
      operator: 'In',
      values: ['a10g'],
    });
    expect(spec('neuron').template.spec.requirements).toContainEqual({
      key: 'karpenter.k8s.aws/instance-family',
      operator: 'In',
      values: ['inf2'],
    });
    expect(
      spec('default').template.spec.requirements.find(
        (r: { key: string }) => r.key === 'karpenter.k8s.aws/instance-size',
      ).values,
    ).toContain('metal');
    expect(p.notes[0]).toContain('replace CLUSTER_NAME');
  });

  it('writes manifests that pass the validation `karpenter-ts validate` applies', () => {
    for (const m of [p.nodeClass, ...p.nodePools.map((x) => x.manifest)])
      expect(validateObject(m), JSON.stringify(m)).toEqual([]);
  });

  it('maps groups to the proposal, and says the cluster is unmanaged', () => {
    expect(unmanagedCluster(o)).toBe(true);
    const mapping = mapGroups(groups, [], p.groupPool, p.left);
    expect(mapping.find((m) => m.group === 'win')).toMatchObject({ nodePool: null, nodes: ['w1'] });
    expect(mapping.find((m) => m.group === 'arm')).toMatchObject({ nodePool: 'arm', instanceTypes: ['m6g.large'] });
  });
});
