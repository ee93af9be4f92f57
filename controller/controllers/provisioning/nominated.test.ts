// The Nominated event's builder against the recorder: a pod hears where it goes once a dedupe window, as Karpenter's.
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../../sim/clock.ts';
import { POD_NOMINATION_RATE, Recorder } from '../../operator/events.ts';
import { newLogger } from '../../operator/logger.ts';
import { nominatedEvent } from './nominated.ts';

describe('nominatedEvent', () => {
  it('names the NodeClaim, the Node or both, under the shared nomination rate', () => {
    const web = { name: 'web-1', namespace: 'default', uid: 'u1' };
    expect(nominatedEvent(web, { nodeClaim: 'default-a', node: 'ip-10-0-0-2' })).toMatchObject({
      involved: { kind: 'Pod', name: 'web-1', namespace: 'default', uid: 'u1' },
      type: 'Normal',
      reason: 'Nominated',
      message: 'Pod should schedule on: nodeclaim/default-a, node/ip-10-0-0-2',
      rateLimit: POD_NOMINATION_RATE,
    });
    expect(nominatedEvent(web, { node: 'ip-10-0-0-2' }).message).toBe('Pod should schedule on: node/ip-10-0-0-2');
  });

  it('tells a pod where it goes once a window, as Karpenter (dedupe on the pod UID), wherever a later pass sends it', async () => {
    const clock = manualClock();
    const r = new Recorder({ clock, log: newLogger({ level: 'silent' }) });
    const web = { name: 'web-1', namespace: 'default', uid: 'u1' };
    expect(r.publish(nominatedEvent(web, { nodeClaim: 'default-a' }))).toBe(1);
    // A later pass (provisioning, or a disruption command) sends it elsewhere: nothing new within the window.
    expect(r.publish(nominatedEvent(web, { nodeClaim: 'default-b', node: 'ip-10-0-0-2' }))).toBe(0);
    // Another pod to the same place is its own event.
    expect(r.publish(nominatedEvent({ ...web, name: 'web-2', uid: 'u2' }, { nodeClaim: 'default-a' }))).toBe(1);
    await clock.advance(2 * 60_000);
    expect(r.publish(nominatedEvent(web, { node: 'ip-10-0-0-3' }))).toBe(1);
    expect(r.recent({ name: 'web-1' }).map((e) => e.message)).toEqual([
      'Pod should schedule on: nodeclaim/default-a',
      'Pod should schedule on: node/ip-10-0-0-3',
    ]);
  });
});
