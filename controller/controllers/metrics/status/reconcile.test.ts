// status.metrics on the in-memory API (test/fakes): the condition gauges show each object's conditions as cluster
// state has them at the scrape (never a status it left, never an object that went), the transitions are counted
// once per change, and a terminating object's time shows until it is gone, then is observed once.
import { describe, expect, it } from 'vitest';
import { fakeControllerEnv, type FakeControllerEnv } from '../../../../test/fakes/controller.ts';
import { launchedNode } from '../../../../test/fakes/objects.ts';
import { newStatusMetrics } from './reconcile.ts';

/** The label sets and values of a gauge's series for the object named `name`. */
async function seriesOf(
  env: FakeControllerEnv,
  family: string,
  name: string,
): Promise<Array<Record<string, string | number>>> {
  const metric = env.metrics.registry.getSingleMetric(family)!;
  return (await metric.get()).values
    .filter((v) => v.labels['name'] === name)
    .map((v): Record<string, string | number> => ({ ...v.labels, value: v.value }))
    .sort((a, b) => String(a['type']).localeCompare(String(b['type'])));
}

/** The exposition's lines of `family` for the object named `name`. */
async function linesOf(env: FakeControllerEnv, family: string, name: string): Promise<string[]> {
  return (await env.metrics.text())
    .split('\n')
    .filter((l) => l.startsWith(`${family}{`) && l.includes(`name="${name}"`));
}

describe('status.metrics', () => {
  it("shows each object's conditions as they are at the scrape, and its termination until it is gone", async () => {
    const env = fakeControllerEnv();
    const { claim } = launchedNode(env, { name: 'claim-a', instanceType: 'm5.large' });
    const name = claim.metadata.name!;
    env.run(newStatusMetrics(env.ctx));
    await env.settle();
    const own = { karpenter_k8s_aws_ec2nodeclass: 'default', karpenter_sh_nodepool: 'default' };
    const condition = (type: string, status: string, reason = type) => ({
      namespace: '',
      name,
      type,
      status,
      reason,
    });
    expect(await seriesOf(env, 'operator_nodeclaim_status_condition_count', name)).toEqual(
      ['Initialized', 'Launched', 'Registered'].map((t) => ({ ...condition(t, 'True'), ...own, value: 1 })),
    );
    // The deprecated kind-less family has the same series, labelled with group and kind.
    const deprecated = { group: 'karpenter.sh', kind: 'NodeClaim' };
    expect(await seriesOf(env, 'operator_status_condition_count', name)).toEqual(
      ['Initialized', 'Launched', 'Registered'].map((t) => ({ ...condition(t, 'True'), ...deprecated, value: 1 })),
    );
    // The label order of prom-client's series as this controller set them before: ident, condition, extra labels.
    expect(await linesOf(env, 'operator_nodeclaim_status_condition_count', name)).toContain(
      `operator_nodeclaim_status_condition_count{namespace="",name="${name}",type="Launched",status="True",reason="Launched",karpenter_k8s_aws_ec2nodeclass="default",karpenter_sh_nodepool="default"} 1`,
    );
    const transitions = (status: string) =>
      env.metrics.value('operator_nodeclaim_status_condition_transitions_total', { type: 'Initialized', status });
    expect(await transitions('True')).toBe(1);

    // 30 s on, with nothing changed: the time in status is 30 s at the scrape.
    await env.clock.advance(30_000);
    const seconds = await env.metrics.value('operator_nodeclaim_status_condition_current_status_seconds', {
      name,
      type: 'Launched',
    });
    expect(seconds).toBe(30);

    // Initialized turns False: one transition more, and no series of its True status is left.
    const conditions = (env.get('nodeclaims.karpenter.sh', name).status as { conditions: Array<{ type: string }> })
      .conditions;
    const now = new Date(env.clock.now()).toISOString();
    env.api.patchStatus('nodeclaims.karpenter.sh', undefined, name, {
      conditions: conditions.map((c) =>
        c.type === 'Initialized' ? { ...c, status: 'False', reason: 'NotReady', lastTransitionTime: now } : c,
      ),
    });
    await env.settle();
    expect(await transitions('False')).toBe(1);
    expect(await transitions('True')).toBe(1);
    const initialized = (await seriesOf(env, 'operator_nodeclaim_status_condition_count', name)).filter(
      (s) => s['type'] === 'Initialized',
    );
    expect(initialized).toEqual([{ ...condition('Initialized', 'False', 'NotReady'), ...own, value: 1 }]);
    expect(
      await env.metrics.value('operator_nodeclaim_status_condition_current_status_seconds', {
        name,
        type: 'Initialized',
      }),
    ).toBe(0);
    expect(
      await env.metrics.value('operator_nodeclaim_status_condition_transition_seconds', {
        type: 'Initialized',
        status: 'True',
      }),
    ).toBe(1);

    // Deleted with its finalizer: terminating for 5 s, then gone: no series of it left, its deletion observed once.
    env.api.delete('nodeclaims.karpenter.sh', undefined, name);
    await env.settle();
    await env.clock.advance(5_000);
    expect(await env.metrics.value('operator_nodeclaim_termination_current_time_seconds', { name })).toBe(5);
    expect(await env.metrics.value('operator_termination_current_time_seconds', { name, kind: 'NodeClaim' })).toBe(5);
    env.api.patch('nodeclaims.karpenter.sh', undefined, name, 'merge', { metadata: { finalizers: null } });
    expect(env.api.find('nodeclaims.karpenter.sh', undefined, name)).toBeUndefined();
    await env.settle();
    for (const family of [
      'operator_nodeclaim_status_condition_count',
      'operator_nodeclaim_status_condition_current_status_seconds',
      'operator_nodeclaim_termination_current_time_seconds',
      'operator_status_condition_count',
      'operator_termination_current_time_seconds',
    ])
      expect(await linesOf(env, family, name), family).toEqual([]);
    expect(await env.metrics.value('operator_nodeclaim_termination_duration_seconds')).toBe(1);
    expect(await env.metrics.value('operator_termination_duration_seconds', { kind: 'NodeClaim' })).toBe(1);
    // The Node is still there, with its own families (no deprecated ones for Nodes).
    const node = env.cluster.allNodes()[0]!.info.name;
    expect((await seriesOf(env, 'operator_node_status_condition_count', node)).map((s) => s['type'])).toEqual([
      'Ready',
    ]);
    expect(await seriesOf(env, 'operator_status_condition_count', node)).toEqual([]);
  });
});
