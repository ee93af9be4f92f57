import { afterEach, describe, expect, it } from 'vitest';
import { guide, simulation, type Simulation } from '../../../../test/support/simulation.ts';
import { nodePoolHash } from '../../provisioning/nodeclaim.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('nodepool.hash', () => {
  it('annotates the NodePool with the hash of its template, and updates it when the template changes', async () => {
    sim = await simulation({ only: ['nodepool.hash'] });
    await sim.apply(guide('guide-01.yaml'));
    const pool = () => sim!.cluster.api.get('nodepools.karpenter.sh', undefined, 'default');
    const first = pool().metadata.annotations!['karpenter.sh/nodepool-hash']!;
    expect(first).toBe(nodePoolHash(pool() as never));
    expect(pool().metadata.annotations!['karpenter.sh/nodepool-hash-version']).toBe('v3');
    await sim.cluster.api.patch('nodepools.karpenter.sh', undefined, 'default', 'merge', { spec: { template: { metadata: { labels: { team: 'data' } } } } });
    await sim.settle();
    expect(pool().metadata.annotations!['karpenter.sh/nodepool-hash']).not.toBe(first);
  });
});
