import { describe, expect, it } from 'vitest';
import { nodePoolHash, parseNodePool, type NewNodeClaimPlan, type NodePool } from '../../../engine/index.ts';
import type { KubeObject } from '../../operator/kube.ts';
import { exceededLimit, poolUsage, worstCaseCapacity } from './limits.ts';
import { nodeClaimFor } from './nodeclaim.ts';
import { stateNode } from '../../../test/fixtures/builders.ts';
import { fakeInstanceType } from '../../../test/fixtures/instancetypes.ts';

const poolObj = (extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'default', uid: 'pool-uid' },
  spec: {
    template: {
      metadata: { labels: { team: 'a' }, annotations: { 'example.com/x': 'y' } },
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }],
        taints: [{ key: 'dedicated', effect: 'NoSchedule' }],
        expireAfter: '72h',
        terminationGracePeriod: '1h',
        ...extra,
      },
    },
  },
});

function parsed(obj: KubeObject): NodePool {
  const r = parseNodePool(obj);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
}

const plan: NewNodeClaimPlan = {
  nodePool: 'default',
  pods: ['a', 'b'],
  requirements: [
    { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
    { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['c5.large', 'm5.large'], minValues: 2 },
  ],
  instanceTypes: [
    { name: 'c5.large', price: 0.03 },
    { name: 'm5.large', price: 0.04 },
  ],
  requests: { cpu: 1_500, memory: 2 ** 31, pods: 2 },
  labels: { team: 'a' },
  taints: [{ key: 'dedicated', effect: 'NoSchedule' }],
  startupTaints: [],
  price: 0.03,
};

describe('nodeClaimFor', () => {
  it('builds the NodeClaim from the plan and the NodePool template', () => {
    const obj = poolObj();
    const nc = nodeClaimFor(plan, parsed(obj), obj);
    expect(nc.metadata).toMatchObject({
      generateName: 'default-',
      labels: { team: 'a', 'karpenter.sh/nodepool': 'default', 'karpenter.k8s.aws/ec2nodeclass': 'default' },
      annotations: {
        'example.com/x': 'y',
        'karpenter.sh/nodepool-hash': nodePoolHash(parsed(obj)),
        'karpenter.sh/nodepool-hash-version': 'v3',
      },
      ownerReferences: [{ kind: 'NodePool', name: 'default', uid: 'pool-uid', blockOwnerDeletion: true }],
    });
    expect(nc.spec).toEqual({
      requirements: [
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
        { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['c5.large', 'm5.large'], minValues: 2 },
      ],
      resources: { requests: { cpu: '1500m', memory: '2Gi', pods: '2' } },
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      expireAfter: expect.stringMatching(/^72h/),
      terminationGracePeriod: expect.stringMatching(/^1h/),
      taints: [{ key: 'dedicated', effect: 'NoSchedule' }],
    });
  });

  it("carries the plan's karpenter.sh/requested-dra-drivers annotation", () => {
    const obj = poolObj();
    const nc = nodeClaimFor(
      { ...plan, annotations: { 'karpenter.sh/requested-dra-drivers': 'gpu.nvidia.com' } },
      parsed(obj),
      obj,
    );
    expect(nc.metadata.annotations).toMatchObject({ 'karpenter.sh/requested-dra-drivers': 'gpu.nvidia.com' });
    expect(nodeClaimFor(plan, parsed(obj), obj).metadata.annotations).not.toHaveProperty(
      'karpenter.sh/requested-dra-drivers',
    );
  });

  it("stamps the engine's template hash, which leaves the requirements out", () => {
    const a = parsed(poolObj());
    const b = parsed(poolObj({ requirements: [] }));
    const c = parsed(poolObj({ taints: [] }));
    expect(nodePoolHash(a)).toBe(nodePoolHash(b));
    expect(nodePoolHash(a)).not.toBe(nodePoolHash(c));
  });
});

describe('limits', () => {
  it("adds the largest capacity among a NodeClaim's options and one node to the pool's usage", () => {
    const small = fakeInstanceType({ name: 'small', resources: { cpu: 2_000, memory: 4 * 2 ** 30 } });
    const big = fakeInstanceType({ name: 'big', resources: { cpu: 8_000, memory: 16 * 2 ** 30 } });
    const worst = worstCaseCapacity(
      {
        ...plan,
        instanceTypes: [
          { name: 'small', price: 1 },
          { name: 'big', price: 2 },
        ],
      },
      [small, big],
    );
    expect(worst).toMatchObject({ cpu: 8_000, nodes: 1 });
    const usage = poolUsage(
      [
        stateNode({ nodePool: 'default', capacity: { cpu: '4' } }),
        stateNode({ nodePool: 'other', capacity: { cpu: '4' } }),
        stateNode({ nodePool: 'default', capacity: { cpu: '4' }, markedForDeletion: true }),
      ],
      'default',
    );
    expect(usage).toEqual({ cpu: 4_000, nodes: 1 });
    expect(exceededLimit('default', { cpu: 10_000 }, { cpu: 12_000 })).toBe(
      'nodepool default: cpu limit 10 would be exceeded (in use 12)',
    );
    expect(exceededLimit('default', { cpu: 10_000, nodes: 2 }, { cpu: 10_000, nodes: 2 })).toBeUndefined();
  });
});
