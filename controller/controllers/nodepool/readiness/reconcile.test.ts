import { afterEach, describe, expect, it } from 'vitest';
import { condition, guide, simulation, type Simulation } from '../../../../test/support/simulation.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('nodepool.readiness', () => {
  it('mirrors the EC2NodeClass: not found, then Ready once the class is', async () => {
    sim = await simulation({ only: ['nodeclass.status', 'nodepool.readiness'] });
    await sim.apply(guide('guide-05.yaml'));
    const pool = () => sim!.cluster.api.get('nodepools.karpenter.sh', undefined, 'spot-diverse');
    expect(condition(pool(), 'NodeClassReady')).toMatchObject({ status: 'False', reason: 'NodeClassNotFound' });
    expect(condition(pool(), 'ValidationSucceeded')?.status).toBe('True');
    expect(condition(pool(), 'Ready')?.status).toBe('False');
    await sim.apply(guide('guide-03.yaml'));
    expect(condition(pool(), 'NodeClassReady')?.status).toBe('True');
    expect(condition(pool(), 'Ready')?.status).toBe('True');
    expect((pool().status as { nodeClassObservedGeneration: number }).nodeClassObservedGeneration).toBe(1);
  });
});
