import { afterEach, describe, expect, it } from 'vitest';
import { deployment, guide, nodes, running, simulation, type Simulation } from '../../../../test/support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('metrics.pod', () => {
  it('keeps one karpenter_pods_state series per pod, following its phase and node', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-07.yaml'));
    await sim.apply(deployment('web', 1));
    await sim.settle();
    expect(await sim.operator.metrics.value('karpenter_pods_state', { namespace: 'default', phase: 'Pending', node: '' })).toBe(1);
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 1, 180_000, 'running');
    await sim.settle();
    const node = nodes(sim)[0]!;
    expect(await sim.operator.metrics.value('karpenter_pods_state', { phase: 'Pending' })).toBeUndefined();
    const series = (await sim.operator.metrics.podsState.get()).values;
    expect(series).toHaveLength(1);
    expect(series[0]!.labels).toMatchObject({ phase: 'Running', node: node.metadata.name, nodepool: 'production', capacity_type: 'on-demand', owner: expect.stringMatching(/^ReplicaSet\/web-/) });
  });
});
