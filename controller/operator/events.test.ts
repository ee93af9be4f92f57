import { describe, expect, it, vi } from 'vitest';
import { manualClock } from '../../sim/clock.ts';
import { POD_NOMINATION_RATE, Recorder } from './events.ts';
import { newLogger } from './logger.ts';
import type { KubeClient } from './kube.ts';
import { fakeKube } from '../../test/fakes/kube.ts';

const pod = { kind: 'Pod', name: 'web-1', namespace: 'default', uid: 'u1' };

describe('Recorder', () => {
  it('publishes an event once per dedupe window (2 min by default)', async () => {
    const clock = manualClock();
    const r = new Recorder({ clock, log: newLogger({ level: 'silent' }) });
    const e = { involved: pod, type: 'Warning' as const, reason: 'FailedDraining', message: 'x' };
    expect(r.publish(e)).toBe(1);
    expect(r.publish(e)).toBe(0);
    await clock.advance(119_000);
    expect(r.publish(e)).toBe(0);
    await clock.advance(1_000);
    expect(r.publish(e)).toBe(1);
    expect(r.recent({ reason: 'FailedDraining' })).toHaveLength(2);
  });

  it('keeps FailedScheduling for 5 minutes and tells different messages apart', async () => {
    const clock = manualClock();
    const r = new Recorder({ clock, log: newLogger({ level: 'silent' }) });
    const e = (message: string) => ({ involved: pod, type: 'Warning' as const, reason: 'FailedScheduling', message });
    expect(r.publish(e('a'), e('a'), e('b'))).toBe(2);
    await clock.advance(4 * 60_000);
    expect(r.publish(e('a'))).toBe(0);
    await clock.advance(60_000);
    expect(r.publish(e('a'))).toBe(1);
  });

  it('forgets each dedupe key once its own window has ended', async () => {
    const clock = manualClock();
    const r = new Recorder({ clock, log: newLogger({ level: 'silent' }) });
    const nominated = (i: number) => ({
      involved: { ...pod, name: `web-${i}`, uid: `u${i}` },
      type: 'Normal' as const,
      reason: 'Nominated',
      message: 'Pod should schedule on: nodeclaim/default-abcde',
      dedupeValues: [`u${i}`],
    });
    const blocked = { involved: pod, type: 'Normal' as const, reason: 'Unconsolidatable', message: 'x' };
    expect(r.publish(...Array.from({ length: 100 }, (_, i) => nominated(i)), blocked)).toBe(101);
    expect(r.dedupeKeys()).toBe(101);
    // The nominations' 2-minute windows have ended; Unconsolidatable's 15 minutes have not.
    await clock.advance(2 * 60_000 + 10_000);
    expect(r.publish(nominated(0), blocked)).toBe(1);
    expect(r.dedupeKeys()).toBe(2);
    await clock.advance(13 * 60_000);
    expect(r.publish(blocked)).toBe(1);
    expect(r.dedupeKeys()).toBe(1);
  });

  it('ends each key at its own time when keys of one message are published apart, and tells held news by key', async () => {
    const clock = manualClock();
    const r = new Recorder({ clock, log: newLogger({ level: 'silent' }) });
    const nominated = (uid: string, message = 'Pod should schedule on: nodeclaim/default-abcde') => ({
      involved: { ...pod, uid },
      type: 'Normal' as const,
      reason: 'Nominated',
      message,
      dedupeValues: [uid],
    });
    expect(r.publish(nominated('u1'), nominated('u2'))).toBe(2);
    await clock.advance(60_000);
    expect(r.publish(nominated('u3'))).toBe(1);
    await clock.advance(60_000);
    // u1's and u2's windows have ended, u3's (the same message, a minute later) has not.
    expect(r.publishAll([nominated('u1'), nominated('u3'), nominated('u3', 'elsewhere')])).toEqual({
      published: 1,
      heldNews: 1,
    });
    expect(r.publishAll([nominated('u2', 'elsewhere'), nominated('u1', 'elsewhere')])).toEqual({
      published: 1,
      heldNews: 1,
    });
    await clock.advance(60_000);
    expect(r.publish(nominated('u3'))).toBe(1);
  });

  it('dedupes on the given values when the caller names them', () => {
    const r = new Recorder({ clock: manualClock(), log: newLogger({ level: 'silent' }) });
    const e = (message: string) => ({
      involved: pod,
      type: 'Normal' as const,
      reason: 'Nominated',
      message,
      dedupeValues: ['u1'],
    });
    expect(r.publish(e('on node a'), e('on node b'))).toBe(1);
  });

  it("keeps each reason's keys apart, one dedupe value and the default values alike, and counts them all", () => {
    const r = new Recorder({ clock: manualClock(), log: newLogger({ level: 'silent' }) });
    const e = (reason: string, dedupeValues?: string[]) => ({
      involved: pod,
      type: 'Normal' as const,
      reason,
      message: 'u1',
      ...(dedupeValues ? { dedupeValues } : {}),
    });
    // The same single value under two reasons, and a default key whose joined values are not that value.
    expect(r.publish(e('Nominated', ['u1']), e('FailedScheduling', ['u1']), e('Nominated'))).toBe(3);
    expect(r.publish(e('Nominated', ['u1']), e('FailedScheduling', ['u1']), e('Nominated'))).toBe(0);
    expect(r.publish(e('Nominated', ['u1', 'x']), e('Nominated', ['u1\u0000x']))).toBe(1);
    expect(r.dedupeKeys()).toBe(4);
  });

  it('writes pod nominations at 5 a second after a burst of 10, as Karpenter, and drops the rest', async () => {
    const clock = manualClock();
    const r = new Recorder({ clock, log: newLogger({ level: 'silent' }) });
    const nominated = (i: number) => ({
      involved: { ...pod, name: `web-${i}`, uid: `u${i}` },
      type: 'Normal' as const,
      reason: 'Nominated',
      message: 'Pod should schedule on: nodeclaim/default-abcde',
      dedupeValues: [`u${i}`],
      rateLimit: POD_NOMINATION_RATE,
    });
    expect(r.publish(...Array.from({ length: 30 }, (_, i) => nominated(i)))).toBe(10);
    await clock.advance(1_000);
    expect(r.publish(...Array.from({ length: 30 }, (_, i) => nominated(100 + i)))).toBe(5);
    // A deduplicated event takes no token; events without the rate are not limited.
    await clock.advance(200);
    expect(r.publish(nominated(100), nominated(200))).toBe(1);
    expect(r.publish({ involved: pod, type: 'Warning', reason: 'FailedDraining', message: 'x' })).toBe(1);
    expect(r.recent({ reason: 'Nominated' })).toHaveLength(16);
  });

  it('writes through a few workers and a bounded queue, dropping (and counting) what does not fit', async () => {
    const pending: Array<() => void> = [];
    let created = 0;
    let inFlight = 0;
    let maxInFlight = 0;
    const kube = {
      create: () => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        return new Promise<void>((resolve) =>
          pending.push(() => {
            inFlight--;
            created++;
            resolve();
          }),
        );
      },
    } as unknown as KubeClient;
    const r = new Recorder({
      kube,
      clock: manualClock(),
      log: newLogger({ level: 'silent' }),
      writers: 3,
      maxQueued: 10,
    });
    const e = (i: number) => ({
      involved: { ...pod, name: `web-${i}`, uid: `u${i}` },
      type: 'Normal' as const,
      reason: 'Nominated',
      message: 'x',
    });
    // 3 go out at once, 10 wait, the other 7 are dropped.
    expect(r.publish(...Array.from({ length: 20 }, (_, i) => e(i)))).toBe(20);
    expect(pending).toHaveLength(3);
    expect(r.dropped).toBe(7);
    while (pending.length) {
      pending.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(created).toBe(13);
    expect(maxInFlight).toBe(3);
    // Once drained, the queue takes events again.
    r.publish(e(99));
    expect(pending).toHaveLength(1);
  });
  it("writes through a token bucket of its own: a burst of events does not hold up the controller's requests", async () => {
    // The client-side rate limit counts wall time (ratelimit.ts): fake timers stand still until told.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const { kube, api } = fakeKube({ client: { rateLimit: { qps: 1, burst: 2 } } });
      const turns = async (n: number) => {
        for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
      };
      const written = () => api.store.list('events').length;
      // As the operator wires it (main.ts): the recorder writes through the client's sibling.
      const r = new Recorder({
        kube: kube.withOwnRateLimit(),
        clock: manualClock(),
        log: newLogger({ level: 'silent' }),
      });
      const e = (i: number) => ({
        involved: { ...pod, name: `web-${i}`, uid: `u${i}` },
        type: 'Normal' as const,
        reason: 'Nominated',
        message: 'x',
      });
      expect(r.publish(...Array.from({ length: 12 }, (_, i) => e(i)))).toBe(12);
      await turns(20);
      // The events' burst of 2 is spent and the rest wait for their bucket to refill...
      expect(written()).toBe(2);
      // ...while the controller's own bucket is untouched: a reconcile's request goes at once, twice.
      let answered = 0;
      void kube.list('Node').then(() => answered++);
      void kube.list('Pod').then(() => answered++);
      await turns(20);
      expect(answered).toBe(2);
      expect(written()).toBe(2);
      // The events go on at their own rate, one a second.
      await vi.advanceTimersByTimeAsync(10_000);
      await turns(20);
      expect(written()).toBe(12);
    } finally {
      vi.useRealTimers();
    }
  });
});
