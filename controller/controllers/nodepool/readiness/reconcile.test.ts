// nodepool.readiness on the in-memory API (test/fakes), with the EC2NodeClass status controller where a test
// needs the class resolved (the recording cloud has no node-class resolution: the simulated account's does).
import { describe, expect, it } from 'vitest';
import { fakeControllerEnv } from '../../../../test/fakes/controller.ts';
import { condition, guide } from '../../../../test/support/environment.ts';
import { simNetwork } from '../../../../sim/cloud/network.ts';
import { simNodeClasses } from '../../../../sim/cloud/nodeclass-status.ts';
import { newNodeClassStatus } from '../../nodeclass/status/reconcile.ts';
import { newNodePoolReadiness } from './reconcile.ts';

describe('nodepool.readiness', () => {
  it('mirrors the EC2NodeClass: not found, then Ready once the class is', async () => {
    const env = fakeControllerEnv();
    env.run(
      newNodeClassStatus(env.ctx, simNodeClasses(simNetwork('ap-northeast-2', 'my-cluster'), env.clock, true)),
      newNodePoolReadiness(env.ctx),
    );
    await env.apply(guide('guide-05.yaml'));
    const pool = () => env.get('nodepools.karpenter.sh', 'spot-diverse');
    expect(condition(pool(), 'NodeClassReady')).toMatchObject({ status: 'False', reason: 'NodeClassNotFound' });
    expect(condition(pool(), 'ValidationSucceeded')?.status).toBe('True');
    expect(condition(pool(), 'Ready')?.status).toBe('False');
    await env.apply(guide('guide-03.yaml'));
    expect(condition(pool(), 'NodeClassReady')?.status).toBe('True');
    expect(condition(pool(), 'Ready')?.status).toBe('True');
    expect((pool().status as { nodeClassObservedGeneration: number }).nodeClassObservedGeneration).toBe(1);
  });

  it('does not mirror a Ready that the EC2NodeClass computed for an older generation of its spec', async () => {
    const env = fakeControllerEnv();
    env.run(newNodePoolReadiness(env.ctx));
    await env.apply(guide('guide-03.yaml'));
    await env.apply(guide('guide-05.yaml'));
    const api = env.api;
    const pool = () => api.get('nodepools.karpenter.sh', undefined, 'spot-diverse');
    const setReady = async (observedGeneration: number) => {
      api.patchStatus('ec2nodeclasses.karpenter.k8s.aws', undefined, 'default', {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Ready',
            message: '',
            observedGeneration,
            lastTransitionTime: new Date(0).toISOString(),
          },
        ],
      });
      await env.settle();
    };
    await setReady(1);
    expect(condition(pool(), 'NodeClassReady')?.status).toBe('True');
    // A spec change bumps the class to generation 2; its Ready still speaks of generation 1.
    await env.apply(
      guide('guide-03.yaml').replace(
        /amiSelectorTerms:\n(\s+)- alias: \S+/,
        'amiSelectorTerms:\n$1- alias: al2023@v20240807',
      ),
    );
    expect(api.get('ec2nodeclasses.karpenter.k8s.aws', undefined, 'default').metadata.generation).toBe(2);
    expect(condition(pool(), 'NodeClassReady')).toMatchObject({
      status: 'Unknown',
      reason: 'NodeClassReadinessUnknown',
    });
    expect(condition(pool(), 'NodeClassReady')?.message).toContain('generation 1');
    expect(condition(pool(), 'Ready')?.status).toBe('Unknown');
    await setReady(2);
    expect(condition(pool(), 'NodeClassReady')?.status).toBe('True');
    expect(condition(pool(), 'Ready')?.status).toBe('True');
  });
});
