// Consolidatable follows consolidateAfter from the last pod event.
import { afterEach, describe, expect, it } from 'vitest';
import { condition, deployment, guide, nodeClaims, running, scale, simulation, type Simulation } from '../../../../test/support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('nodeclaim.consolidatable', () => {
  it('is set consolidateAfter (2m in guide-07) after the last pod event, and cleared by a new one', async () => {
    sim = await simulation({ only: ['nodeclass.status', 'nodepool.readiness', 'provisioner', 'nodeclaim.lifecycle', 'nodeclaim.podevents', 'nodeclaim.consolidatable'] });
    await sim.apply(guide('guide-07.yaml'));
    await sim.apply(deployment('web', 1, { cpu: '100m', memory: '128Mi' }));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 1, 180_000, 'running');
    const consolidatable = () => condition(nodeClaims(sim!)[0]!, 'Consolidatable')?.status === 'True';
    expect(consolidatable()).toBe(false);
    const waited = await sim.clock.advanceUntil(consolidatable, 5 * 60_000, 'consolidatable');
    expect(waited).toBeGreaterThan(110_000);
    expect(waited).toBeLessThanOrEqual(120_000);
    await scale(sim, 'web', 2);
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 2, 60_000, 'second pod');
    expect(nodeClaims(sim)).toHaveLength(1);
    expect(consolidatable()).toBe(false);
  });

  it('is never set when consolidateAfter is Never', async () => {
    sim = await simulation({ only: ['nodeclass.status', 'nodepool.readiness', 'provisioner', 'nodeclaim.lifecycle', 'nodeclaim.podevents', 'nodeclaim.consolidatable'] });
    await sim.apply(guide('guide-07.yaml').replace('consolidateAfter: 2m', 'consolidateAfter: Never'));
    await sim.apply(deployment('web', 1));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 1, 180_000, 'running');
    await sim.clock.advance(30 * 60_000);
    expect(condition(nodeClaims(sim)[0]!, 'Consolidatable')).toBeUndefined();
  });
});
