import { afterEach, describe, expect, it } from 'vitest';
import { nodePoolHash, parseNodePool } from '../../../../engine/index.ts';
import { guide, simulation, type Simulation } from '../../../../test/support/environment.ts';
import type { KubeObject } from '../../../operator/kube.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const engineHash = (obj: KubeObject): string => {
  const r = parseNodePool(obj);
  if (!r.ok) throw new Error('pool does not parse');
  return nodePoolHash(r.value);
};

const claim = (name: string, annotations: Record<string, string>): KubeObject => ({
  apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim',
  metadata: { name, labels: { 'karpenter.sh/nodepool': 'default' }, annotations },
  spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [], resources: { requests: { cpu: '1' } } },
});

describe('nodepool.hash', () => {
  it('annotates the NodePool with the engine\'s hash of its template and version v3, and follows template changes', async () => {
    sim = await simulation({ only: ['nodepool.hash'] });
    await sim.apply(guide('guide-01.yaml'));
    const pool = () => sim!.cluster.api.get('nodepools.karpenter.sh', undefined, 'default') as KubeObject;
    const first = pool().metadata.annotations!['karpenter.sh/nodepool-hash']!;
    expect(first).toBe(engineHash(pool()));
    expect(pool().metadata.annotations!['karpenter.sh/nodepool-hash-version']).toBe('v3');
    await sim.cluster.api.patch('nodepools.karpenter.sh', undefined, 'default', 'merge', { spec: { template: { metadata: { labels: { team: 'data' } } } } });
    await sim.settle();
    expect(pool().metadata.annotations!['karpenter.sh/nodepool-hash']).not.toBe(first);
    expect(pool().metadata.annotations!['karpenter.sh/nodepool-hash']).toBe(engineHash(pool()));
    // A requirements change is not a template change (requirements drift is checked on its own); expireAfter is.
    const second = pool().metadata.annotations!['karpenter.sh/nodepool-hash'];
    const spec = (pool().spec as { template: { spec: Record<string, unknown> } }).template.spec;
    await sim.cluster.api.patch('nodepools.karpenter.sh', undefined, 'default', 'merge', { spec: { template: { spec: { requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }] } } } });
    await sim.settle();
    expect(pool().metadata.annotations!['karpenter.sh/nodepool-hash']).toBe(second);
    await sim.cluster.api.patch('nodepools.karpenter.sh', undefined, 'default', 'merge', { spec: { template: { spec: { ...spec, expireAfter: '24h' } } } });
    await sim.settle();
    expect(pool().metadata.annotations!['karpenter.sh/nodepool-hash']).not.toBe(second);
  });

  it('moves NodeClaims of an older hash version to v3, re-hashing only those that have not drifted', async () => {
    sim = await simulation({ only: ['nodepool.hash'] });
    const old = { 'karpenter.sh/nodepool-hash': 'old', 'karpenter.sh/nodepool-hash-version': 'v2' };
    await sim.operator.kube.create('NodeClaim', claim('fresh', old));
    await sim.operator.kube.create('NodeClaim', claim('drifted', old));
    sim.cluster.api.patchStatus('nodeclaims.karpenter.sh', undefined, 'drifted', { conditions: [{ type: 'Drifted', status: 'True', reason: 'NodePoolDrifted', message: '', lastTransitionTime: '2025-01-01T00:00:00Z' }] });
    await sim.settle();
    const text = guide('guide-01.yaml').replace(/^metadata:\n  name: default$/m, "metadata:\n  name: default\n  annotations:\n    karpenter.sh/nodepool-hash: old\n    karpenter.sh/nodepool-hash-version: v2");
    await sim.apply(text);
    const get = (n: string) => sim!.cluster.api.get('nodeclaims.karpenter.sh', undefined, n).metadata.annotations!;
    const hash = sim.cluster.api.get('nodepools.karpenter.sh', undefined, 'default').metadata.annotations!['karpenter.sh/nodepool-hash'];
    expect(hash).not.toBe('old');
    expect(get('fresh')).toMatchObject({ 'karpenter.sh/nodepool-hash': hash, 'karpenter.sh/nodepool-hash-version': 'v3' });
    expect(get('drifted')).toMatchObject({ 'karpenter.sh/nodepool-hash': 'old', 'karpenter.sh/nodepool-hash-version': 'v3' });
  });
});
