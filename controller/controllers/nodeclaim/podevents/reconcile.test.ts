import { afterEach, describe, expect, it } from 'vitest';
import { deployment, guide, nodeClaims, running, scale, simulation, type Simulation } from '../../../../test/support/environment.ts';
import type { Change } from '../../../state/cluster.ts';
import { podEventNode } from './reconcile.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const podObj = (o: { node?: string; phase?: string; deleting?: boolean; daemon?: boolean }) => ({
  metadata: { name: 'p', namespace: 'default', ...(o.deleting ? { deletionTimestamp: 'x' } : {}), ...(o.daemon ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'd', uid: 'd', controller: true }] } : {}) },
  spec: { ...(o.node ? { nodeName: o.node } : {}) }, status: { phase: o.phase ?? 'Running' },
});
const change = (obj: object, old?: object, type: 'upsert' | 'delete' = 'upsert'): Change => ({ kind: 'Pod', type, name: 'p', obj: obj as never, ...(old ? { old: old as never } : {}) });

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
    sim = await simulation();
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('web', 1));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 1, 180_000, 'running');
    const bound = Date.parse((nodeClaims(sim)[0]!.status as { lastPodEventTime: string }).lastPodEventTime);
    await sim.clock.advance(60_000);
    await scale(sim, 'web', 0);
    await sim.settle();
    const stopped = Date.parse((nodeClaims(sim)[0]!.status as { lastPodEventTime: string }).lastPodEventTime);
    expect(stopped - bound).toBeGreaterThanOrEqual(60_000);
  });
});
