// metrics.node on the in-memory API (test/fakes): each pass works out again only the nodes whose Node or pods
// moved, keeps the others' series as they were, and removes the series of nodes that went or whose labels moved.
import { describe, expect, it } from 'vitest';
import { fakeControllerEnv, type FakeControllerEnv } from '../../../../test/fakes/controller.ts';
import { launchedNode } from '../../../../test/fakes/objects.ts';
import { newNodeMetrics } from './reconcile.ts';

const pod = (name: string, node: string, cpu: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: {
    nodeName: node,
    containers: [{ name: 'app', image: 'pause', resources: { requests: { cpu }, limits: { cpu: '2' } } }],
  },
  status: { phase: 'Running' },
});

/** Counts the sets of the per-resource node gauges (not the age, which every pass sets for every node). */
function countSets(env: FakeControllerEnv): { readonly byNode: Map<string, number> } {
  const byNode = new Map<string, number>();
  const m = env.metrics;
  for (const g of [
    m.nodeAllocatable,
    m.nodeSystemOverhead,
    m.nodePodRequests,
    m.nodePodLimits,
    m.nodeDaemonRequests,
    m.nodeDaemonLimits,
  ]) {
    const set = g.set.bind(g) as (labels: Record<string, string>, v: number) => void;
    (g as unknown as { set: typeof set }).set = (labels, v) => {
      byNode.set(labels['node_name']!, (byNode.get(labels['node_name']!) ?? 0) + 1);
      set(labels, v);
    };
  }
  return { byNode };
}

describe('metrics.node', () => {
  it('sets again only the series of nodes that changed, and removes those of nodes that went', async () => {
    const env = fakeControllerEnv();
    const a = launchedNode(env, { name: 'node-a', instanceType: 'm5.large' }).node.metadata.name!;
    const b = launchedNode(env, { name: 'node-b', instanceType: 'm5.large' }).node.metadata.name!;
    env.add('pods', pod('p1', a, '500m'), pod('p2', b, '250m'));
    const sets = countSets(env);
    env.run(newNodeMetrics(env.ctx));
    await env.settle();
    const requests = (node: string) =>
      env.metrics.value('karpenter_nodes_total_pod_requests', { node_name: node, resource_type: 'cpu' });
    const age = (node: string) => env.metrics.value('karpenter_nodes_current_lifetime_seconds', { node_name: node });
    expect(await requests(a)).toBe(0.5);
    expect(await requests(b)).toBe(0.25);
    expect(await env.metrics.value('karpenter_nodes_total_pod_limits', { node_name: a, resource_type: 'cpu' })).toBe(2);
    expect(sets.byNode.get(a)).toBeGreaterThan(0);
    const ageA = (await age(a))!;

    // Nothing moved: no node's resource series is set again; their ages are.
    sets.byNode.clear();
    await env.clock.advance(5_000);
    await env.settle();
    expect([...sets.byNode.keys()]).toEqual([]);
    expect(await requests(a)).toBe(0.5);
    expect(await age(a)).toBe(ageA + 5);

    // A pod more on node-a: only node-a is worked out again.
    env.add('pods', pod('p3', a, '1'));
    await env.clock.advance(5_000);
    await env.settle();
    expect([...sets.byNode.keys()]).toEqual([a]);
    expect(await requests(a)).toBe(1.5);
    expect(await requests(b)).toBe(0.25);

    // node-b's labels move: its series under the old labels go, one set under the new ones stays.
    const seriesOf = async (node: string) =>
      (await env.metrics.nodeAllocatable.get()).values.filter((v) => v.labels['node_name'] === node);
    const before = (await seriesOf(b)).length;
    env.api.patch('nodes', undefined, b, 'merge', { metadata: { labels: { 'topology.kubernetes.io/zone': 'zz' } } });
    await env.clock.advance(5_000);
    await env.settle();
    const after = await seriesOf(b);
    expect(after).toHaveLength(before);
    expect(after.every((v) => v.labels['zone'] === 'zz')).toBe(true);
    expect(
      (await env.metrics.nodeCurrentLifetime.get()).values.filter((v) => v.labels['node_name'] === b),
    ).toHaveLength(1);

    // node-a goes: every series of it goes, the cluster's utilization follows node-b alone.
    env.api.delete('pods', 'default', 'p1', { gracePeriodSeconds: 0 });
    env.api.delete('pods', 'default', 'p3', { gracePeriodSeconds: 0 });
    env.api.delete('nodes', undefined, a, { gracePeriodSeconds: 0 });
    // The termination finalizer is not this test's: lift it so the Node goes.
    if (env.api.find('nodes', undefined, a))
      env.api.patch('nodes', undefined, a, 'merge', { metadata: { finalizers: null } });
    expect(env.api.find('nodes', undefined, a)).toBeUndefined();
    await env.clock.advance(5_000);
    await env.settle();
    for (const g of [env.metrics.nodeAllocatable, env.metrics.nodePodRequests, env.metrics.nodeCurrentLifetime])
      expect((await g.get()).values.filter((v) => v.labels['node_name'] === a)).toEqual([]);
    const cpu = (await seriesOf(b)).find((v) => v.labels['resource_type'] === 'cpu')!.value;
    expect(await env.metrics.value('karpenter_cluster_utilization_percent', { resource_type: 'cpu' })).toBeCloseTo(
      (100 * 0.25) / cpu,
    );
  });
});
