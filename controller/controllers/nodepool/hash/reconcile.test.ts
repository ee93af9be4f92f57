// nodepool.hash on the in-memory API (test/fakes): the controller alone, with its watches and queue.
import { describe, expect, it } from 'vitest';
import { nodePoolHash, parseNodePool } from '../../../../engine/index.ts';
import { fakeControllerEnv } from '../../../../test/fakes/controller.ts';
import { guide } from '../../../../test/support/environment.ts';
import type { KubeObject } from '../../../operator/kube.ts';
import { newNodePoolHash } from './reconcile.ts';

function hashEnv() {
  const env = fakeControllerEnv();
  env.run(newNodePoolHash(env.ctx));
  return env;
}

const engineHash = (obj: KubeObject): string => {
  const r = parseNodePool(obj);
  if (!r.ok) throw new Error('pool does not parse');
  return nodePoolHash(r.value);
};

const claim = (name: string, annotations: Record<string, string>): KubeObject => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodeClaim',
  metadata: { name, labels: { 'karpenter.sh/nodepool': 'default' }, annotations },
  spec: {
    nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
    requirements: [],
    resources: { requests: { cpu: '1' } },
  },
});

describe('nodepool.hash', () => {
  it("annotates the NodePool with the engine's hash of its template and version v3, and follows template changes", async () => {
    const env = hashEnv();
    await env.apply(guide('guide-01.yaml'));
    const pool = () => env.get('nodepools.karpenter.sh', 'default') as KubeObject;
    const first = pool().metadata.annotations!['karpenter.sh/nodepool-hash']!;
    expect(first).toBe(engineHash(pool()));
    expect(pool().metadata.annotations!['karpenter.sh/nodepool-hash-version']).toBe('v3');
    await env.api.patch('nodepools.karpenter.sh', undefined, 'default', 'merge', {
      spec: { template: { metadata: { labels: { team: 'data' } } } },
    });
    await env.settle();
    expect(pool().metadata.annotations!['karpenter.sh/nodepool-hash']).not.toBe(first);
    expect(pool().metadata.annotations!['karpenter.sh/nodepool-hash']).toBe(engineHash(pool()));
    // A requirements change is not a template change (requirements drift is checked on its own); expireAfter is.
    const second = pool().metadata.annotations!['karpenter.sh/nodepool-hash'];
    const spec = (pool().spec as { template: { spec: Record<string, unknown> } }).template.spec;
    await env.api.patch('nodepools.karpenter.sh', undefined, 'default', 'merge', {
      spec: {
        template: { spec: { requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }] } },
      },
    });
    await env.settle();
    expect(pool().metadata.annotations!['karpenter.sh/nodepool-hash']).toBe(second);
    await env.api.patch('nodepools.karpenter.sh', undefined, 'default', 'merge', {
      spec: { template: { spec: { ...spec, expireAfter: '24h' } } },
    });
    await env.settle();
    expect(pool().metadata.annotations!['karpenter.sh/nodepool-hash']).not.toBe(second);
  });

  it('moves NodeClaims of an older hash version to v3, re-hashing only those that have not drifted', async () => {
    const env = hashEnv();
    const old = { 'karpenter.sh/nodepool-hash': 'old', 'karpenter.sh/nodepool-hash-version': 'v2' };
    await env.kube.create('NodeClaim', claim('fresh', old));
    await env.kube.create('NodeClaim', claim('drifted', old));
    env.api.patchStatus('nodeclaims.karpenter.sh', undefined, 'drifted', {
      conditions: [
        {
          type: 'Drifted',
          status: 'True',
          reason: 'NodePoolDrifted',
          message: '',
          lastTransitionTime: '2025-01-01T00:00:00Z',
        },
      ],
    });
    await env.settle();
    const text = guide('guide-01.yaml').replace(
      /^metadata:\n {2}name: default$/m,
      'metadata:\n  name: default\n  annotations:\n    karpenter.sh/nodepool-hash: old\n    karpenter.sh/nodepool-hash-version: v2',
    );
    await env.apply(text);
    const get = (n: string) => env.get('nodeclaims.karpenter.sh', n).metadata.annotations!;
    const hash = env.get('nodepools.karpenter.sh', 'default').metadata.annotations!['karpenter.sh/nodepool-hash'];
    expect(hash).not.toBe('old');
    expect(get('fresh')).toMatchObject({
      'karpenter.sh/nodepool-hash': hash,
      'karpenter.sh/nodepool-hash-version': 'v3',
    });
    expect(get('drifted')).toMatchObject({
      'karpenter.sh/nodepool-hash': 'old',
      'karpenter.sh/nodepool-hash-version': 'v3',
    });
  });
});
