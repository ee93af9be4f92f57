// The simulated cluster end to end on a manual clock: workloads through client-node, nodes through the
// simulated kubelet, binding through the simulated scheduler.
import * as k8s from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KObject } from '../apiserver/index.ts';
import { manualClock, type SimClock } from '../clock.ts';
import { startSimCluster, type SimCluster } from './cluster.ts';
import type { InstanceSpec } from './kubelet.ts';

let clock: SimClock;
let cluster: SimCluster;
let apps: k8s.AppsV1Api;
let core: k8s.CoreV1Api;

beforeEach(async () => {
  clock = manualClock();
  cluster = await startSimCluster({
    clock,
    kubeletDelays: {
      registerMs: 20_000,
      readyMs: 10_000,
      startupTaintMs: 5_000,
      podStartMs: 2_000,
      nodeRemovalMs: 30_000,
    },
  });
  apps = cluster.kubeConfig().makeApiClient(k8s.AppsV1Api);
  core = cluster.kubeConfig().makeApiClient(k8s.CoreV1Api);
});

afterEach(async () => {
  await cluster.close();
  expect(cluster.errors).toEqual([]);
  expect(clock.pendingTimers()).toBe(0);
});

const instance = (n: number, extra: Partial<InstanceSpec> = {}): InstanceSpec => ({
  providerID: `aws:///us-east-1a/i-${n}`,
  nodeName: `ip-10-0-0-${n}.ec2.internal`,
  labels: {
    'topology.kubernetes.io/zone': 'us-east-1a',
    'node.kubernetes.io/instance-type': 'm5.xlarge',
    'karpenter.sh/nodepool': 'default',
  },
  capacity: { cpu: '4', memory: '16Gi', pods: '58' },
  allocatable: { cpu: '3920m', memory: '14Gi', pods: '58' },
  ...extra,
});

const inflate = (replicas: number): k8s.V1Deployment => ({
  metadata: { name: 'inflate' },
  spec: {
    replicas,
    selector: { matchLabels: { app: 'inflate' } },
    template: {
      metadata: { labels: { app: 'inflate' } },
      spec: {
        terminationGracePeriodSeconds: 30,
        containers: [{ name: 'inflate', image: 'pause', resources: { requests: { cpu: '1', memory: '1Gi' } } }],
      },
    },
  },
});

const pods = (): KObject[] => cluster.store.list('pods', { namespace: 'default' });
const live = (): KObject[] => pods().filter((p) => !p.metadata.deletionTimestamp);
const nodeName = (p: KObject): string | undefined => (p.spec as { nodeName?: string }).nodeName;
const phase = (p: KObject): string | undefined => (p.status as { phase?: string }).phase;
const scheduledCondition = (p: KObject) =>
  ((p.status as { conditions?: Array<Record<string, unknown>> }).conditions ?? []).find(
    (c) => c.type === 'PodScheduled',
  );
const taintKeys = (name: string): string[] =>
  ((cluster.api.get('nodes', undefined, name).spec as { taints?: Array<{ key: string }> }).taints ?? []).map(
    (t) => t.key,
  );

/** What Karpenter's registration controller does: drop the unregistered taint once the node appears. */
function registerLikeKarpenter(name: string): void {
  const n = cluster.api.get('nodes', undefined, name);
  const taints = ((n.spec as { taints?: Array<{ key: string }> }).taints ?? []).filter(
    (t) => t.key !== 'karpenter.sh/unregistered',
  );
  cluster.api.patch('nodes', undefined, name, 'merge', { spec: { taints } });
}

describe('simulated cluster', () => {
  it('runs a Deployment from Pending/Unschedulable to Running once a node registers and becomes Ready', async () => {
    await apps.createNamespacedDeployment({ namespace: 'default', body: inflate(0) });
    await apps.patchNamespacedDeploymentScale(
      { namespace: 'default', name: 'inflate', body: { spec: { replicas: 3 } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await cluster.settle();
    expect(pods()).toHaveLength(3);
    for (const p of pods()) {
      expect(p.metadata.name).toMatch(/^inflate-[a-z0-9]+-[a-z0-9]{5}$/);
      expect(p.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet', controller: true });
      expect(nodeName(p)).toBeUndefined();
      expect(scheduledCondition(p)).toMatchObject({ status: 'False', reason: 'Unschedulable' });
    }
    // A minute of sim time with no nodes changes nothing.
    await clock.advance(60_000);
    expect(pods().every((p) => phase(p) === 'Pending' && !nodeName(p))).toBe(true);

    const spec = instance(1, { startupTaints: [{ key: 'node.cilium.io/agent-not-ready', effect: 'NoExecute' }] });
    cluster.kubelet.registerInstance(spec);
    await clock.advanceUntil(() => !!cluster.api.find('nodes', undefined, spec.nodeName), 60_000, 'node registration');
    const node = cluster.api.get('nodes', undefined, spec.nodeName);
    expect((node.spec as { providerID: string }).providerID).toBe(spec.providerID);
    expect(taintKeys(spec.nodeName)).toEqual(['node.cilium.io/agent-not-ready', 'karpenter.sh/unregistered']);
    expect(node.metadata.labels).toMatchObject({
      'kubernetes.io/hostname': spec.nodeName,
      'node.kubernetes.io/instance-type': 'm5.xlarge',
    });
    expect((node.status as { allocatable: Record<string, string> }).allocatable).toEqual(spec.allocatable);
    registerLikeKarpenter(spec.nodeName);

    await clock.advanceUntil(() => cluster.kubelet.state(spec.providerID) === 'ready', 60_000, 'node ready');
    // Ready, but the startup taint still keeps the pods off.
    await cluster.settle();
    expect(pods().every((p) => !nodeName(p))).toBe(true);
    expect(scheduledCondition(pods()[0]!)?.message).toBe(
      '0/1 nodes are available: 1 node(s) had untolerated taint {node.cilium.io/agent-not-ready: }.',
    );

    await clock.advanceUntil(() => pods().every((p) => phase(p) === 'Running'), 60_000, 'pods running');
    expect(taintKeys(spec.nodeName)).toEqual([]);
    expect(pods().every((p) => nodeName(p) === spec.nodeName)).toBe(true);
    expect(pods().every((p) => (p.status as { startTime?: string }).startTime)).toBe(true);
    expect(
      (cluster.api.get('deployments.apps', 'default', 'inflate').status as { readyReplicas?: number }).readyReplicas,
    ).toBe(3);
  });

  it('replaces evicted pods, honouring the PodDisruptionBudget it keeps current', async () => {
    cluster.kubelet.registerInstance(instance(1));
    await clock.advanceUntil(() => !!cluster.api.find('nodes', undefined, instance(1).nodeName), 60_000);
    registerLikeKarpenter(instance(1).nodeName);
    await apps.createNamespacedDeployment({ namespace: 'default', body: inflate(3) });
    cluster.api.create('poddisruptionbudgets.policy', 'default', {
      metadata: { name: 'inflate' },
      spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'inflate' } } },
    });
    await clock.advanceUntil(() => pods().filter((p) => phase(p) === 'Running').length === 3, 120_000, 'pods running');
    await cluster.settle();
    const pdbStatus = () =>
      cluster.api.get('poddisruptionbudgets.policy', 'default', 'inflate').status as Record<string, number>;
    expect(pdbStatus()).toMatchObject({ currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1, expectedPods: 3 });

    const [victim, second] = pods().map((p) => p.metadata.name!);
    const evict = (name: string) =>
      core.createNamespacedPodEviction({
        namespace: 'default',
        name,
        body: { metadata: { name, namespace: 'default' } },
      });
    await evict(victim!);
    await cluster.settle();
    expect(cluster.api.get('pods', 'default', victim!).metadata.deletionTimestamp).toBeDefined();
    expect(live()).toHaveLength(3);
    expect(pdbStatus()).toMatchObject({ currentHealthy: 2, disruptionsAllowed: 0 });
    await expect(evict(second!)).rejects.toMatchObject({ code: 429 });

    // The kubelet removes the evicted pod after its 30 s grace period; the replacement starts meanwhile.
    await clock.advanceUntil(() => !cluster.api.find('pods', 'default', victim!), 60_000, 'evicted pod removal');
    await clock.advanceUntil(
      () => live().filter((p) => phase(p) === 'Running').length === 3,
      60_000,
      'replacement running',
    );
    await cluster.settle();
    expect(pdbStatus()).toMatchObject({ currentHealthy: 3, disruptionsAllowed: 1 });
    await evict(second!);
  });

  it('runs one DaemonSet pod per node it tolerates', async () => {
    cluster.kubelet.registerInstance(instance(1));
    cluster.kubelet.registerInstance(instance(2, { taints: [{ key: 'dedicated', effect: 'NoSchedule' }] }));
    await clock.advanceUntil(() => cluster.store.list('nodes').length === 2, 60_000);
    for (const n of cluster.store.list('nodes')) registerLikeKarpenter(n.metadata.name!);
    cluster.api.create('daemonsets.apps', 'kube-system', {
      metadata: { name: 'agent' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: {
          metadata: { labels: { app: 'agent' } },
          spec: { containers: [{ name: 'a', image: 'agent', resources: { requests: { cpu: '100m' } } }] },
        },
      },
    });
    await clock.advanceUntil(
      () => cluster.store.list('pods', { namespace: 'kube-system' }).some((p) => phase(p) === 'Running'),
      60_000,
      'daemon pod running',
    );
    const daemons = cluster.store.list('pods', { namespace: 'kube-system' });
    expect(daemons.map(nodeName)).toEqual([instance(1).nodeName]);
    expect(cluster.api.get('daemonsets.apps', 'kube-system', 'agent').status as Record<string, number>).toMatchObject({
      desiredNumberScheduled: 1,
      numberReady: 1,
    });

    cluster.api.patch('daemonsets.apps', 'kube-system', 'agent', 'merge', {
      spec: { template: { spec: { tolerations: [{ key: 'dedicated', operator: 'Exists' }] } } },
    });
    await clock.advanceUntil(
      () => cluster.store.list('pods', { namespace: 'kube-system' }).filter((p) => phase(p) === 'Running').length === 2,
      60_000,
      'second daemon pod',
    );
    expect(cluster.store.list('pods', { namespace: 'kube-system' }).map(nodeName).sort()).toEqual([
      instance(1).nodeName,
      instance(2).nodeName,
    ]);
  });

  it("takes a terminated instance's node NotReady, removes it, and reschedules the workload as Unschedulable", async () => {
    cluster.kubelet.registerInstance(instance(1));
    await clock.advanceUntil(() => !!cluster.api.find('nodes', undefined, instance(1).nodeName), 60_000);
    registerLikeKarpenter(instance(1).nodeName);
    await apps.createNamespacedDeployment({ namespace: 'default', body: inflate(2) });
    await clock.advanceUntil(() => pods().filter((p) => phase(p) === 'Running').length === 2, 60_000);

    cluster.kubelet.terminateInstance(instance(1).providerID);
    await cluster.settle();
    const ready = (
      cluster.api.get('nodes', undefined, instance(1).nodeName).status as {
        conditions: Array<{ type: string; status: string }>;
      }
    ).conditions.find((c) => c.type === 'Ready');
    expect(ready?.status).toBe('Unknown');
    expect(
      pods().every(
        (p) =>
          (p.status as { conditions: Array<{ type: string; status: string }> }).conditions.find(
            (c) => c.type === 'Ready',
          )?.status === 'False',
      ),
    ).toBe(true);

    await clock.advanceUntil(() => !cluster.api.find('nodes', undefined, instance(1).nodeName), 60_000, 'node removal');
    await cluster.settle();
    expect(pods()).toHaveLength(2);
    expect(pods().every((p) => !nodeName(p) && scheduledCondition(p)?.reason === 'Unschedulable')).toBe(true);
  });

  it('does not register an instance terminated while it boots', async () => {
    cluster.kubelet.registerInstance(instance(3));
    await clock.advance(5_000);
    cluster.kubelet.terminateInstance(instance(3).providerID);
    await clock.advance(120_000);
    expect(cluster.store.list('nodes')).toEqual([]);
    expect(cluster.kubelet.state(instance(3).providerID)).toBe('terminated');
  });
});
