// metrics.pod on the in-memory API (test/fakes).
import { describe, expect, it } from 'vitest';
import { fakeControllerEnv } from '../../../../test/fakes/controller.ts';
import { launchedNode } from '../../../../test/fakes/objects.ts';
import { newPodMetrics } from './reconcile.ts';

describe('metrics.pod', () => {
  it('keeps one karpenter_pods_state series per pod, following its phase and node', async () => {
    const env = fakeControllerEnv();
    env.run(newPodMetrics(env.ctx));
    const { node } = launchedNode(env, { name: 'production-a', nodePool: 'production', instanceType: 'm5.large' });
    env.add('pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'web-1',
        namespace: 'default',
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d8f', uid: 'rs-1', controller: true },
        ],
      },
      spec: { containers: [{ name: 'app', image: 'pause' }] },
    });
    await env.settle();
    expect(await env.metrics.value('karpenter_pods_state', { namespace: 'default', phase: 'Pending', node: '' })).toBe(
      1,
    );
    env.api.bind('default', 'web-1', node.metadata.name!);
    env.api.patchStatus('pods', 'default', 'web-1', { phase: 'Running' });
    await env.settle();
    expect(await env.metrics.value('karpenter_pods_state', { phase: 'Pending' })).toBeUndefined();
    const series = (await env.metrics.podsState.get()).values;
    expect(series).toHaveLength(1);
    expect(series[0]!.labels).toMatchObject({
      phase: 'Running',
      node: node.metadata.name,
      nodepool: 'production',
      capacity_type: 'on-demand',
      instance_type: 'm5.large',
      owner: 'ReplicaSet/web-5d8f',
    });
    // The exposition line as Karpenter's labels in their order, worked out at the scrape.
    const line = (await env.metrics.text()).split('\n').find((l) => l.startsWith('karpenter_pods_state{'));
    expect(line).toBe(
      `karpenter_pods_state{name="web-1",namespace="default",owner="ReplicaSet/web-5d8f",node="${node.metadata.name}",` +
        'scheduled="True",nodepool="production",zone="ap-northeast-2a",arch="amd64",capacity_type="on-demand",' +
        'instance_type="m5.large",phase="Running",ready="",managed="true"} 1',
    );
    env.api.delete('pods', 'default', 'web-1', { gracePeriodSeconds: 0 });
    await env.settle();
    expect((await env.metrics.podsState.get()).values).toHaveLength(0);
  });

  it("times a pod's binding from the provisioner's first decision, across the pod's updates, and forgets it with the pod", async () => {
    const env = fakeControllerEnv();
    env.run(newPodMetrics(env.ctx));
    const { node } = launchedNode(env, { name: 'production-a', nodePool: 'production', instanceType: 'm5.large' });
    const web = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-1', namespace: 'default' },
      spec: { containers: [{ name: 'app', image: 'pause' }] },
    };
    env.add('pods', web);
    await env.settle();
    const pod = () => env.ctx.cluster.workloads.pod('default', 'web-1')!.pod;
    const times = env.metrics.podTimes;
    times.seen([pod()], env.clock.now());
    await env.clock.advance(2_000);
    expect(times.decided([pod()], env.clock.now())).toEqual([2_000]);
    // An update makes a new record of the pod: the decision's time goes with it.
    env.api.patchStatus('pods', 'default', 'web-1', { phase: 'Pending' });
    await env.settle();
    expect(times.decided([pod()], env.clock.now())).toEqual([]);
    await env.clock.advance(3_000);
    env.api.bind('default', 'web-1', node.metadata.name!);
    await env.settle();
    const sum = async (name: string) =>
      (await env.metrics.registry.getSingleMetric(name)!.get()).values.find(
        (v) => (v as { metricName?: string }).metricName === `${name}_sum`,
      )?.value;
    expect(await env.metrics.value('karpenter_pods_provisioning_bound_duration_seconds')).toBe(1);
    expect(await sum('karpenter_pods_provisioning_bound_duration_seconds')).toBe(3);
    // Deleted and made again under the same name: a new pod, seen afresh.
    env.api.delete('pods', 'default', 'web-1', { gracePeriodSeconds: 0 });
    await env.settle();
    env.add('pods', web);
    await env.settle();
    expect(times.decided([pod()], env.clock.now())).toEqual([]);
    times.seen([pod()], env.clock.now());
    await env.clock.advance(1_000);
    expect(times.decided([pod()], env.clock.now())).toEqual([1_000]);
  });
});
