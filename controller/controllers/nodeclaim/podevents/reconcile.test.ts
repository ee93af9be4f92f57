import { describe, expect, it } from 'vitest';
import { fakeControllerEnv } from '../../../../test/fakes/controller.ts';
import { launchedNode, runningPod } from '../../../../test/fakes/objects.ts';
import type { Change } from '../../../state/cluster.ts';
import { newPodEvents, podEventNode } from './reconcile.ts';

const podObj = (o: { node?: string; phase?: string; deleting?: boolean; daemon?: boolean }) => ({
  metadata: {
    name: 'p',
    namespace: 'default',
    ...(o.deleting ? { deletionTimestamp: 'x' } : {}),
    ...(o.daemon
      ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'd', uid: 'd', controller: true }] }
      : {}),
  },
  spec: { ...(o.node ? { nodeName: o.node } : {}) },
  status: { phase: o.phase ?? 'Running' },
});
const change = (obj: object, old?: object, type: 'upsert' | 'delete' = 'upsert'): Change => ({
  kind: 'Pod',
  type,
  name: 'p',
  obj: obj as never,
  ...(old ? { old: old as never } : {}),
});

describe('nodeclaim.podevents', () => {
  it('counts binding, finishing, terminating and deletion of non-DaemonSet pods as pod events', () => {
    expect(podEventNode(change(podObj({ node: 'n' }), podObj({})))).toBe('n');
    expect(podEventNode(change(podObj({ node: 'n' }), podObj({ node: 'n' })))).toBeUndefined();
    expect(podEventNode(change(podObj({ node: 'n', phase: 'Succeeded' }), podObj({ node: 'n' })))).toBe('n');
    expect(podEventNode(change(podObj({ node: 'n', deleting: true }), podObj({ node: 'n' })))).toBe('n');
    expect(podEventNode(change(podObj({ node: 'n' }), undefined, 'delete'))).toBe('n');
    expect(podEventNode(change(podObj({ node: 'n', daemon: true }), podObj({ daemon: true })))).toBeUndefined();
  });

  it('stamps lastPodEventTime on the NodeClaim when its pods come and go', async () => {
    const env = fakeControllerEnv();
    env.run(newPodEvents(env.ctx));
    const { node } = launchedNode(env, { name: 'default-a' });
    const stamp = () =>
      (env.get('nodeclaims.karpenter.sh', 'default-a').status as { lastPodEventTime?: string }).lastPodEventTime;
    await env.settle();
    expect(stamp()).toBeUndefined();
    runningPod(env, 'web-1', node.metadata.name!);
    await env.settle();
    const bound = Date.parse(stamp()!);
    expect(bound).toBe(env.clock.now());
    await env.clock.advance(60_000);
    env.api.delete('pods', 'default', 'web-1', { gracePeriodSeconds: 0 });
    await env.settle();
    expect(Date.parse(stamp()!) - bound).toBe(60_000);
  });
});
