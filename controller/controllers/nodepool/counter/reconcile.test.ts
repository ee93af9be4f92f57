import { afterEach, describe, expect, it } from 'vitest';
import { deployment, guide, nodes, running, simulation, type Simulation } from '../../../../test/support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('nodepool.counter', () => {
  it('writes the resources and node count of the pool\'s nodes into its status and the usage gauges', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-07.yaml'));
    const status = () => sim!.cluster.api.get('nodepools.karpenter.sh', undefined, 'production').status as { resources: Record<string, string>; nodes: number };
    expect(status().resources).toMatchObject({ cpu: '0', memory: '0', pods: '0', nodes: '0' });
    await sim.apply(deployment('web', 3));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 3, 180_000, 'running');
    await sim.settle();
    const node = nodes(sim)[0]!;
    const capacity = (node.status as { capacity: Record<string, string> }).capacity;
    expect(status()).toMatchObject({ nodes: 1, resources: { cpu: capacity['cpu'], pods: capacity['pods'], nodes: '1' } });
    expect(await sim.operator.metrics.value('karpenter_nodepools_usage', { nodepool: 'production', resource_type: 'nodes' })).toBe(1);
    expect(await sim.operator.metrics.value('karpenter_nodepools_limit', { nodepool: 'production', resource_type: 'cpu' })).toBe(1_000_000);
  });
});
