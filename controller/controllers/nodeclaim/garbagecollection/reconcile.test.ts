// Garbage collection on the in-memory API with the recording cloud (test/fakes): instances no NodeClaim owns,
// and registered NodeClaims whose instance is gone.
import { describe, expect, it } from 'vitest';
import { fakeControllerEnv, type FakeControllerEnv } from '../../../../test/fakes/controller.ts';
import { launchedNode } from '../../../../test/fakes/objects.ts';
import { guide } from '../../../../test/support/environment.ts';
import type { LaunchRequest } from '../../../cloudprovider/types.ts';
import { newGarbageCollection } from './reconcile.ts';

async function gcEnv(): Promise<FakeControllerEnv> {
  const env = fakeControllerEnv();
  env.run(newGarbageCollection(env.ctx));
  await env.apply(guide('guide-03.yaml'));
  return env;
}

const request = (nodeClaimName: string): LaunchRequest => ({
  nodeClaimName,
  nodePoolName: 'x',
  nodeClassName: 'default',
  requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['c5.large'] }],
  requests: {},
  labels: {},
  annotations: {},
  taints: [],
  startupTaints: [],
});

const state = (env: FakeControllerEnv, providerID: string) => env.cloud.instances.get(providerID)!.state;

describe('nodeclaim.garbagecollection', () => {
  it('terminates an instance without a NodeClaim once it is 30 s old, at the next pass', async () => {
    const env = await gcEnv();
    const orphan = await env.cloud.create(request('never-created'));
    await env.clock.advance(9_000);
    expect(state(env, orphan.providerID)).toBe('running');
    // The first pass (10 s in) finds it younger than 30 s; the next, two minutes later, terminates it.
    await env.clock.advance(2_000);
    expect(env.cloud.callsOf('list')).toHaveLength(1);
    expect(state(env, orphan.providerID)).toBe('running');
    await env.clock.advance(2 * 60_000);
    expect(env.cloud.callsOf('delete')).toEqual([orphan.providerID]);
    expect(state(env, orphan.providerID)).toBe('terminated');
  });

  it('keeps an instance whose NodeClaim has not recorded it yet (a launch in flight), and collects it once the NodeClaim records another', async () => {
    const env = await gcEnv();
    const spec = {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In' as const, values: ['c5.large'] }],
    };
    await env.kube.create('NodeClaim', { metadata: { name: 'slow', labels: { 'karpenter.sh/nodepool': 'x' } }, spec });
    const first = await env.cloud.create(request('slow'));
    await env.clock.advance(2 * 60_000 + 12_000);
    expect(state(env, first.providerID)).toBe('running');
    // A restarted controller launched again and recorded the second instance: the first is an orphan now.
    const second = await env.cloud.create(request('slow'));
    await env.kube.patchStatus('NodeClaim', 'slow', { providerID: second.providerID });
    await env.clock.advance(2 * 60_000);
    expect(state(env, first.providerID)).toBe('terminated');
    expect(state(env, second.providerID)).toBe('running');
  });

  it('deletes a registered NodeClaim whose instance is gone once its node is not Ready', async () => {
    const env = await gcEnv();
    const { providerID, node } = launchedNode(env, { name: 'default-a' });
    // The instance vanishes behind the controller's back (terminated in the console); the node is still Ready.
    env.cloud.instances.set(providerID, { ...env.cloud.instances.get(providerID)!, state: 'terminated' });
    const gone = () =>
      env.api.find('nodeclaims.karpenter.sh', undefined, 'default-a')?.metadata.deletionTimestamp !== undefined;
    await env.clock.advance(3 * 60_000);
    expect(gone()).toBe(false);
    // The kubelet stops reporting: the node turns NotReady, and the next pass deletes the NodeClaim.
    env.api.patchStatus('nodes', undefined, node.metadata.name!, {
      conditions: [
        {
          type: 'Ready',
          status: 'Unknown',
          reason: 'NodeStatusUnknown',
          message: '',
          lastTransitionTime: new Date(env.clock.now()).toISOString(),
        },
      ],
    });
    await env.clock.advanceUntil(gone, 3 * 60_000, 'nodeclaim deleted');
    expect(await env.metrics.value('karpenter_nodeclaims_disrupted_total', { reason: 'garbage_collected' })).toBe(1);
  });
});
