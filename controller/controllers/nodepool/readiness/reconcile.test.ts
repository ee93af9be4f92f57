import { afterEach, describe, expect, it } from 'vitest';
import { condition, guide, simulation, type Simulation } from '../../../../test/support/environment.ts';

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

  it('does not mirror a Ready that the EC2NodeClass computed for an older generation of its spec', async () => {
    sim = await simulation({ only: ['nodepool.readiness'] });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    const api = sim.cluster.api;
    const pool = () => api.get('nodepools.karpenter.sh', undefined, 'spot-diverse');
    const setReady = async (observedGeneration: number) => {
      api.patchStatus('ec2nodeclasses.karpenter.k8s.aws', undefined, 'default', {
        conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: '', observedGeneration, lastTransitionTime: new Date(0).toISOString() }],
      });
      await sim!.settle();
    };
    await setReady(1);
    expect(condition(pool(), 'NodeClassReady')?.status).toBe('True');
    // A spec change bumps the class to generation 2; its Ready still speaks of generation 1.
    await sim.apply(guide('guide-03.yaml').replace(/amiSelectorTerms:\n(\s+)- alias: \S+/, 'amiSelectorTerms:\n$1- alias: al2023@v20240807'));
    expect(api.get('ec2nodeclasses.karpenter.k8s.aws', undefined, 'default').metadata.generation).toBe(2);
    expect(condition(pool(), 'NodeClassReady')).toMatchObject({ status: 'Unknown', reason: 'NodeClassReadinessUnknown' });
    expect(condition(pool(), 'NodeClassReady')?.message).toContain('generation 1');
    expect(condition(pool(), 'Ready')?.status).toBe('Unknown');
    await setReady(2);
    expect(condition(pool(), 'NodeClassReady')?.status).toBe('True');
    expect(condition(pool(), 'Ready')?.status).toBe('True');
  });
});
