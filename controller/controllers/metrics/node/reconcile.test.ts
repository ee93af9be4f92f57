// metrics.node on the in-memory API (test/fakes): every scrape shows each node's series as cluster state has it
// then (no series missing, none stale after the node's pods, resources or labels moved, none left once the node
// is gone), line for line what prom-client writes for the same series in a Gauge of its own.
import { Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { fakeControllerEnv, type FakeControllerEnv } from '../../../../test/fakes/controller.ts';
import { launchedNode } from '../../../../test/fakes/objects.ts';
import { NODE_LABEL_NAMES, NODE_RESOURCE_LABEL_NAMES, nodeLabelValues } from '../../../operator/metriclabels.ts';
import { newNodeMetrics } from './reconcile.ts';

const pod = (name: string, node: string, cpu: string, owner = 'ReplicaSet') => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: 'default',
    ownerReferences: [
      { apiVersion: 'apps/v1', kind: owner, name: `${name}-owner`, uid: `${name}-uid`, controller: true },
    ],
  },
  spec: {
    nodeName: node,
    containers: [{ name: 'app', image: 'pause', resources: { requests: { cpu }, limits: { cpu: '2' } } }],
  },
  status: { phase: 'Running' },
});

/**
 * What the test expects of one node: its pods (a pod requests 1 of `pods` as well as its cpu) and their cpu requests
 * and limits in cores, and the same of its DaemonSet pods.
 */
interface Expected {
  readonly pods: number;
  readonly requests: number;
  readonly limits: number;
  readonly daemon?: { readonly pods: number; readonly requests: number; readonly limits: number };
}

const FAMILIES = [
  'karpenter_nodes_allocatable',
  'karpenter_nodes_system_overhead',
  'karpenter_nodes_total_pod_requests',
  'karpenter_nodes_total_pod_limits',
  'karpenter_nodes_total_daemon_requests',
  'karpenter_nodes_total_daemon_limits',
  'karpenter_nodes_current_lifetime_seconds',
] as const;
type Family = (typeof FAMILIES)[number];

/** The series each family should have for `nodes`, from the nodes' allocatable and capacity and the test's pods. */
function expectedSeries(env: FakeControllerEnv, nodes: Record<string, Expected>) {
  const out = new Map<Family, Array<[Record<string, string>, number]>>(FAMILIES.map((f) => [f, []]));
  const now = env.clock.now();
  for (const [name, e] of Object.entries(nodes)) {
    const info = env.cluster.node(name)!.info;
    const base = nodeLabelValues(name, info.labels, '', true);
    const series = (f: Family, resources: Record<string, number>) => {
      for (const [r, v] of Object.entries(resources))
        out.get(f)!.push([{ ...base, resource_type: r.replaceAll('-', '_') }, r === 'cpu' ? v / 1000 : v]);
    };
    series('karpenter_nodes_allocatable', info.allocatable);
    const overhead = Object.fromEntries(
      Object.entries(info.capacity).map(([r, v]) => [r, v - (info.allocatable[r] ?? 0)]),
    );
    series('karpenter_nodes_system_overhead', overhead);
    series('karpenter_nodes_total_pod_requests', { cpu: e.requests * 1000, pods: e.pods });
    series('karpenter_nodes_total_pod_limits', { cpu: e.limits * 1000 });
    if (e.daemon) {
      series('karpenter_nodes_total_daemon_requests', { cpu: e.daemon.requests * 1000, pods: e.daemon.pods });
      series('karpenter_nodes_total_daemon_limits', { cpu: e.daemon.limits * 1000 });
    }
    out.get('karpenter_nodes_current_lifetime_seconds')!.push([base, (now - info.creationTimestamp!) / 1000]);
  }
  return out;
}

/** The lines of `name` in the operator's exposition, sorted. */
async function exposed(env: FakeControllerEnv, name: string): Promise<string[]> {
  const text = await env.metrics.text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`# HELP ${name} `) || l.startsWith(`# TYPE ${name} `))
    .sort();
}

/** What prom-client writes for `series` in a gauge of its own with the family's name, help and label names. */
async function written(env: FakeControllerEnv, name: Family, series: Array<[Record<string, string>, number]>) {
  const registry = new Registry();
  const help = (env.metrics.registry.getSingleMetric(name) as unknown as { help: string }).help;
  const labelNames = name === 'karpenter_nodes_current_lifetime_seconds' ? NODE_LABEL_NAMES : NODE_RESOURCE_LABEL_NAMES;
  const g = new Gauge({ name, help, labelNames, registers: [registry] });
  for (const [labels, v] of series) g.set(labels, v);
  return (await registry.getSingleMetricAsString(name)).split('\n').sort();
}

async function expectExposition(env: FakeControllerEnv, nodes: Record<string, Expected>): Promise<void> {
  const want = expectedSeries(env, nodes);
  for (const f of FAMILIES) expect(await exposed(env, f), f).toEqual(await written(env, f, want.get(f)!));
  const cpu = Object.keys(nodes).reduce((s, n) => s + env.cluster.node(n)!.info.allocatable['cpu']!, 0) / 1000;
  const requests = Object.values(nodes).reduce((s, e) => s + e.requests, 0);
  expect(await env.metrics.value('karpenter_cluster_utilization_percent', { resource_type: 'cpu' })).toBeCloseTo(
    (100 * requests) / cpu,
  );
}

describe('metrics.node', () => {
  it("shows every node's series as cluster state has it at each scrape, and none of a node that went", async () => {
    const env = fakeControllerEnv();
    const a = launchedNode(env, { name: 'node-a', instanceType: 'm5.large' }).node.metadata.name!;
    const b = launchedNode(env, { name: 'node-b', instanceType: 'm5.large' }).node.metadata.name!;
    env.add('pods', pod('p1', a, '500m'), pod('p2', b, '250m'), pod('ds1', a, '100m', 'DaemonSet'));
    env.run(newNodeMetrics(env.ctx));
    await env.settle();
    await expectExposition(env, {
      [a]: { pods: 2, requests: 0.6, limits: 4, daemon: { pods: 1, requests: 0.1, limits: 2 } },
      [b]: { pods: 1, requests: 0.25, limits: 2 },
    });

    // A pod more on node-a and 7 s later: the next scrape has both (no pass to wait for).
    env.add('pods', pod('p3', a, '1'));
    await env.clock.advance(7_000);
    await expectExposition(env, {
      [a]: { pods: 3, requests: 1.6, limits: 6, daemon: { pods: 1, requests: 0.1, limits: 2 } },
      [b]: { pods: 1, requests: 0.25, limits: 2 },
    });

    // node-b's labels and node-a's allocatable move: no series under node-b's old labels, node-a's new figures.
    env.api.patch('nodes', undefined, b, 'merge', { metadata: { labels: { 'topology.kubernetes.io/zone': 'zz' } } });
    const allocatable = { ...(env.get('nodes', a).status as { allocatable: Record<string, string> }).allocatable };
    env.api.patchStatus('nodes', undefined, a, { allocatable: { ...allocatable, cpu: '1500m' } });
    expect(env.cluster.node(b)!.info.labels['topology.kubernetes.io/zone']).toBe('zz');
    expect(env.cluster.node(a)!.info.allocatable['cpu']).toBe(1500);
    await expectExposition(env, {
      [a]: { pods: 3, requests: 1.6, limits: 6, daemon: { pods: 1, requests: 0.1, limits: 2 } },
      [b]: { pods: 1, requests: 0.25, limits: 2 },
    });
    expect(await exposed(env, 'karpenter_nodes_allocatable')).toContainEqual(
      expect.stringMatching(/node_name="node-b-node".*resource_type="cpu"/),
    );
    expect((await env.metrics.text()).includes('zone="zz"')).toBe(true);

    // node-a goes with its pods: none of its series stay; the cluster's utilization follows node-b alone.
    for (const p of ['p1', 'p3', 'ds1']) env.api.delete('pods', 'default', p, { gracePeriodSeconds: 0 });
    env.api.delete('nodes', undefined, a, { gracePeriodSeconds: 0 });
    // The termination finalizer is not this test's: lift it so the Node goes.
    if (env.api.find('nodes', undefined, a))
      env.api.patch('nodes', undefined, a, 'merge', { metadata: { finalizers: null } });
    expect(env.api.find('nodes', undefined, a)).toBeUndefined();
    await expectExposition(env, { [b]: { pods: 1, requests: 0.25, limits: 2 } });
    expect((await env.metrics.text()).includes(`node_name="${a}"`)).toBe(false);
  });

  it('shows no node series before it is registered or once it is stopped', async () => {
    const env = fakeControllerEnv();
    launchedNode(env, { name: 'node-a', instanceType: 'm5.large' });
    const empty = async () => {
      for (const f of FAMILIES) expect(await exposed(env, f), f).toEqual(await written(env, f, []));
    };
    await empty();
    const runtime = env.run(newNodeMetrics(env.ctx));
    await env.settle();
    expect((await exposed(env, 'karpenter_nodes_allocatable')).length).toBeGreaterThan(2);
    await runtime.stop();
    await empty();
  });
});
