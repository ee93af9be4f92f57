// FailedScheduling as Karpenter's PodFailedToScheduleEvent dedupes it: on the pod's UID alone for 5 minutes,
// so a pod that fails for one reason and then for another within the window hears only the first.
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../../sim/clock.ts';
import { Recorder } from '../../operator/events.ts';
import { newLogger } from '../../operator/logger.ts';
import { FAILED_SCHEDULING_DEDUPE_MS, failedSchedulingEvent } from './failed.ts';

const web1 = { name: 'web-1', namespace: 'default', uid: 'u1' };
const web2 = { name: 'web-2', namespace: 'default', uid: 'u2' };

describe('failedSchedulingEvent', () => {
  it("is a Warning on the pod in Karpenter's words", () => {
    expect(failedSchedulingEvent(web1, 'no instance type met all requirements')).toMatchObject({
      involved: { kind: 'Pod', name: 'web-1', namespace: 'default', uid: 'u1', apiVersion: 'v1' },
      type: 'Warning',
      reason: 'FailedScheduling',
      message: 'Failed to schedule pod, no instance type met all requirements',
    });
  });

  it('is written once per pod in 5 minutes, whatever the reason, and again once the window ends', async () => {
    const clock = manualClock();
    const r = new Recorder({ clock, log: newLogger({ level: 'silent' }) });
    expect(r.publish(failedSchedulingEvent(web1, 'reason a'))).toBe(1);
    // Another reason for the same pod within the window: held back, as Karpenter's dedupe key has no reason.
    await clock.advance(60_000);
    expect(r.publish(failedSchedulingEvent(web1, 'reason b'))).toBe(0);
    // Another pod is another key.
    expect(r.publish(failedSchedulingEvent(web2, 'reason b'))).toBe(1);
    await clock.advance(FAILED_SCHEDULING_DEDUPE_MS - 60_000 - 1_000);
    expect(r.publish(failedSchedulingEvent(web1, 'reason b'))).toBe(0);
    await clock.advance(1_000);
    expect(r.publish(failedSchedulingEvent(web1, 'reason b'))).toBe(1);
    expect(r.recent({ reason: 'FailedScheduling', name: 'web-1' }).map((e) => e.message)).toEqual([
      'Failed to schedule pod, reason a',
      'Failed to schedule pod, reason b',
    ]);
  });
});
