// Interruption messages from the cloud provider's feed.
import { afterEach, describe, expect, it } from 'vitest';
import { deployment, events, guide, nodeClaims, running, simulation, type Simulation } from '../../../test/support/simulation.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function oneNode(): Promise<{ sim: Simulation; claim: string; pid: string }> {
  const s = await simulation();
  await s.apply(guide('guide-03.yaml'));
  await s.apply(guide('guide-05.yaml'));
  await s.apply(deployment('web', 1));
  await s.clock.advanceUntil(() => running(s, 'web') === 1, 180_000, 'running');
  const c = nodeClaims(s)[0]!;
  return { sim: s, claim: c.metadata.name!, pid: (c.status as { providerID: string }).providerID };
}

describe('interruption', () => {
  it('only records a rebalance recommendation', async () => {
    const r = await oneNode();
    sim = r.sim;
    sim.provider.interrupt(r.pid, 'rebalanceRecommendation');
    await sim.settle();
    expect(events(sim, 'SpotRebalanceRecommendation')).toHaveLength(2);
    expect(sim.cluster.api.get('nodeclaims.karpenter.sh', undefined, r.claim).metadata.deletionTimestamp).toBeUndefined();
    expect(sim.provider.interruptions.acknowledged).toHaveLength(1);
    expect(await sim.operator.metrics.value('karpenter_interruption_received_messages_total', { message_type: 'rebalance_recommendation' })).toBe(1);
  });

  it('deletes the NodeClaim of an instance with scheduled maintenance, and acknowledges the message', async () => {
    const r = await oneNode();
    sim = r.sim;
    sim.provider.interrupt(r.pid, 'scheduledChange');
    await sim.settle();
    expect(events(sim, 'InstanceUnhealthy').length).toBeGreaterThan(0);
    expect(sim.cluster.api.get('nodeclaims.karpenter.sh', undefined, r.claim).metadata.deletionTimestamp).toBeDefined();
    expect(sim.provider.interruptions.pending()).toBe(0);
    expect(await sim.operator.metrics.value('karpenter_nodeclaims_disrupted_total', { reason: 'interrupted' })).toBe(1);
  });
});
