// metrics.pod on the in-memory API (test/fakes).
import { describe, expect, it } from 'vitest';
import { fakeControllerEnv } from '../../../../test/fakes/controller.ts';
import { launchedNode } from '../../../../test/fakes/objects.ts';
import { newPodMetrics, REFRESH_KEY } from './reconcile.ts';

const pod = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'app', image: 'pause' }] },
});

/** The waiting pods' gauge lines of a scrape, in order (what the sweep and the reconciles set). */
async function waitingLines(env: ReturnType<typeof fakeControllerEnv>): Promise<string[]> {
  return (await env.metrics.text())
    .split('\n')
    .filter((l) => /^karpenter_pods_(provisioning_)?(unbound|unstarted|scheduling_undecided)_time_seconds\{/.test(l))
    .sort();
}

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

  it("refreshes every waiting pod's gauges each 15 s, in one sweep, to what a reconcile of the pod then sets", async () => {
    const env = fakeControllerEnv();
    const ctrl = newPodMetrics(env.ctx);
    env.run(ctrl);
    const { node } = launchedNode(env, { name: 'production-a', nodePool: 'production', instanceType: 'm5.large' });
    env.add('pods', pod('early'));
    await env.settle();
    await env.clock.advance(4_000);
    env.add('pods', pod('late'), pod('runs'));
    await env.settle();
    env.metrics.podTimes.seen([env.ctx.cluster.workloads.pod('default', 'late')!.pod], env.clock.now());
    await env.clock.advance(2_000);
    env.api.bind('default', 'runs', node.metadata.name!);
    env.api.patchStatus('pods', 'default', 'runs', { phase: 'Running' });
    await env.settle();
    const unbound = (name: string) => env.metrics.value('karpenter_pods_unbound_time_seconds', { name });
    expect(await unbound('early')).toBe(0);
    // The sweep at 15 s: each waiting pod's age then; the running one has no waiting gauge.
    await env.clock.advance(9_000);
    expect(await unbound('early')).toBe(15);
    expect(await unbound('late')).toBe(11);
    expect(
      await env.metrics.value('karpenter_pods_provisioning_scheduling_undecided_time_seconds', { name: 'late' }),
    ).toBe(11);
    expect(await env.metrics.value('karpenter_pods_unstarted_time_seconds', { name: 'runs' })).toBeUndefined();
    // The same series and values as a reconcile of each pod at this instant (the way a pod refreshed before).
    const swept = await waitingLines(env);
    expect(swept).toHaveLength(5);
    for (const name of ['early', 'late', 'runs']) await ctrl.reconcile(`default/${name}`);
    expect(await waitingLines(env)).toEqual(swept);
    // And again 15 s later; a pod deleted meanwhile drops out of the sweep and loses its gauges.
    env.api.delete('pods', 'default', 'early', { gracePeriodSeconds: 0 });
    await env.settle();
    await env.clock.advance(15_000);
    expect(await unbound('early')).toBeUndefined();
    expect(await unbound('late')).toBe(26);
  });

  it('sweeps the waiting pods a chunk at a time, letting the event loop turn between chunks', async () => {
    const env = fakeControllerEnv();
    const ctrl = newPodMetrics(env.ctx);
    env.run(ctrl);
    env.add('pods', ...Array.from({ length: 250 }, (_, i) => pod(`p-${i}`)));
    await env.settle();
    let turns = 0;
    let ticking = true;
    const tick = (): void => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    const gauge = env.metrics.podUnstartedTime;
    const set = gauge.set.bind(gauge);
    const setAt: number[] = [];
    gauge.set = ((labels: Record<string, string>, value: number) => {
      setAt.push(turns);
      set(labels, value);
    }) as typeof gauge.set;
    setImmediate(tick);
    try {
      await ctrl.reconcile(REFRESH_KEY);
    } finally {
      ticking = false;
      gauge.set = set;
    }
    expect(setAt).toHaveLength(250);
    // 100, 100 and 50 pods: one turn each.
    const perTurn = [...new Set(setAt)].map((t) => setAt.filter((x) => x === t).length);
    expect(perTurn).toEqual([100, 100, 50]);
  });
});
