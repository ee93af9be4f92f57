// nodepool.counter on the in-memory API (test/fakes): the pool's nodes, written as the lifecycle leaves them.
import { describe, expect, it } from 'vitest';
import { fakeControllerEnv } from '../../../../test/fakes/controller.ts';
import { launchedNode } from '../../../../test/fakes/objects.ts';
import { guide } from '../../../../test/support/environment.ts';
import { newNodePoolCounter } from './reconcile.ts';

describe('nodepool.counter', () => {
  it("writes the resources and node count of the pool's nodes into its status and the usage gauges", async () => {
    const env = fakeControllerEnv();
    env.run(newNodePoolCounter(env.ctx));
    await env.apply(guide('guide-07.yaml'));
    const status = () =>
      env.get('nodepools.karpenter.sh', 'production').status as { resources: Record<string, string>; nodes: number };
    expect(status().resources).toMatchObject({ cpu: '0', memory: '0', pods: '0', nodes: '0' });
    const { node } = launchedNode(env, {
      name: 'production-a',
      nodePool: 'production',
      nodeClass: 'production',
      instanceType: 'm5.xlarge',
    });
    launchedNode(env, { name: 'other-b', nodePool: 'elsewhere', instanceType: 'm5.large' });
    await env.settle();
    // Counted every 5 s, as Karpenter does, not on each node's arrival.
    expect(status().nodes).toBe(0);
    await env.clock.advance(5_000);
    const capacity = (node.status as { capacity: Record<string, string> }).capacity;
    expect(status()).toMatchObject({
      nodes: 1,
      resources: { cpu: capacity['cpu'], pods: capacity['pods'], nodes: '1' },
    });
    expect(
      await env.metrics.value('karpenter_nodepools_usage', { nodepool: 'production', resource_type: 'nodes' }),
    ).toBe(1);
    expect(await env.metrics.value('karpenter_nodepools_limit', { nodepool: 'production', resource_type: 'cpu' })).toBe(
      1_000_000,
    );
    launchedNode(env, {
      name: 'production-c',
      nodePool: 'production',
      nodeClass: 'production',
      instanceType: 'm5.xlarge',
    });
    await env.clock.advance(5_000);
    expect(status()).toMatchObject({ nodes: 2, resources: { cpu: '8', nodes: '2' } });
  });

  it('keeps counting every 5 s while NodeClaims are mid-launch, as they are all through a scale-up', async () => {
    const env = fakeControllerEnv();
    env.run(newNodePoolCounter(env.ctx));
    await env.apply(guide('guide-07.yaml'));
    const status = () => env.get('nodepools.karpenter.sh', 'production').status as { nodes: number };
    // A NodeClaim created and not launched yet (no providerID): cluster state is not "synced" while it lasts.
    env.add('nodeclaims.karpenter.sh', {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name: 'production-launching', labels: { 'karpenter.sh/nodepool': 'production' } },
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'production' },
        requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.xlarge'] }],
      },
    });
    await env.settle();
    expect(env.ctx.cluster.synced()).toBe(false);
    for (let n = 1; n <= 3; n++) {
      launchedNode(env, {
        name: `production-${n}`,
        nodePool: 'production',
        nodeClass: 'production',
        instanceType: 'm5.xlarge',
      });
      await env.clock.advance(5_000);
      expect(status().nodes).toBe(n);
      expect(
        await env.metrics.value('karpenter_nodepools_usage', { nodepool: 'production', resource_type: 'nodes' }),
      ).toBe(n);
    }
  });

  it('drops a resource no node of the pool has any more, and then leaves the status alone', async () => {
    const env = fakeControllerEnv();
    env.run(newNodePoolCounter(env.ctx));
    await env.apply(guide('guide-07.yaml'));
    const pool = () => env.get('nodepools.karpenter.sh', 'production');
    const resources = () => (pool().status as { resources: Record<string, string> }).resources;
    const spec = { nodePool: 'production', nodeClass: 'production' };
    const gpu = launchedNode(env, { name: 'production-gpu', instanceType: 'g4dn.xlarge', ...spec });
    launchedNode(env, { name: 'production-cpu', instanceType: 'm5.xlarge', ...spec });
    await env.clock.advance(5_000);
    expect(resources()).toMatchObject({ 'nvidia.com/gpu': '1', nodes: '2' });
    env.cluster.markForDeletion(gpu.providerID);
    await env.clock.advance(5_000);
    expect(resources()['nvidia.com/gpu']).toBeUndefined();
    expect(resources()['nodes']).toBe('1');
    const gauge = { nodepool: 'production', resource_type: 'nvidia.com/gpu' };
    expect(await env.metrics.value('karpenter_nodepools_usage', gauge)).toBeUndefined();
    // Nothing changed since: the next period writes nothing.
    const version = pool().metadata.resourceVersion;
    await env.clock.advance(5_000);
    expect(pool().metadata.resourceVersion).toBe(version);
  });
});
