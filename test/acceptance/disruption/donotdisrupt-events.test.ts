// Karpenter core pkg/utils/pod/suite_test.go (main after v1.14.1), the IsDoNotDisruptActive cases: the events a
// disruption pass publishes on a pod for its karpenter.sh/do-not-disrupt annotation, with Karpenter's texts.
import { describe, expect, it } from 'vitest';
import { doNotDisruptEvent, doNotDisruptEvents, goDurationError } from '../../../engine/index.ts';
import { pod } from '../../fixtures/builders.ts';
import { bigNode, env, pool } from './harness.ts';

const NOW = Date.parse('2026-08-21T12:00:00Z');
const MIN = 60_000;
const annotated = (value: string, startTime: number | null = NOW - 10 * MIN) =>
  pod({
    nodeName: 'n',
    annotations: { 'karpenter.sh/do-not-disrupt': value },
    ...(startTime !== null ? { startTime } : {}),
  });

describe('IsDoNotDisruptActive', () => {
  it("should return true for 'true' annotation", () => {
    expect(doNotDisruptEvent(annotated('true'), NOW)).toBeUndefined();
  });
  it('should return false and emit event for invalid duration format', () => {
    expect(doNotDisruptEvent(annotated('invalid-format'), NOW)).toMatchObject({
      type: 'Warning',
      reason: 'InvalidDoNotDisruptAnnotation',
      message:
        'Invalid karpenter.sh/do-not-disrupt annotation: failed to parse "invalid-format" as a duration: time: invalid duration "invalid-format", ignoring annotation',
    });
  });
  it('should return false and emit event for zero duration', () => {
    expect(doNotDisruptEvent(annotated('0s'), NOW)?.message).toBe(
      'Invalid karpenter.sh/do-not-disrupt annotation: duration "0s" must be positive, ignoring annotation',
    );
  });
  it('should return false and emit event for negative duration', () => {
    expect(doNotDisruptEvent(annotated('-5m'), NOW)?.message).toBe(
      'Invalid karpenter.sh/do-not-disrupt annotation: duration "-5m" must be positive, ignoring annotation',
    );
  });
  it('should return true and emit disruptable-at event when duration has not expired', () => {
    const e = doNotDisruptEvent(annotated('15m', NOW - 5 * MIN), NOW);
    expect(e).toMatchObject({
      type: 'Normal',
      reason: 'DoNotDisruptUntil',
      message: 'The karpenter.sh/do-not-disrupt grace period will elapse at 2026-08-21T12:10:00Z',
    });
  });
  it('should return false and emit grace period elapsed event when duration has expired', () => {
    expect(doNotDisruptEvent(annotated('5m'), NOW)).toMatchObject({
      type: 'Normal',
      reason: 'DoNotDisruptGracePeriodElapsed',
      message: 'The karpenter.sh/do-not-disrupt grace period has elapsed, pod is now disruptable',
    });
  });
  it('should fail safe when start time is nil', () => {
    // Protected, and no event: the end of the grace period is unknown.
    expect(doNotDisruptEvent(annotated('5m', null), NOW)).toBeUndefined();
  });
  it('should not emit disruptable-at event for indefinite protection', () => {
    expect(doNotDisruptEvent(annotated('true'), NOW)).toBeUndefined();
  });
});

describe("Go's time.ParseDuration errors, as the event quotes them", () => {
  it('names a missing unit, an unknown unit and anything else', () => {
    expect(goDurationError('5')).toBe('time: missing unit in duration "5"');
    expect(goDurationError('5x')).toBe('time: unknown unit "x" in duration "5x"');
    expect(goDurationError('soon')).toBe('time: invalid duration "soon"');
    expect(goDurationError('')).toBe('time: invalid duration ""');
    expect(goDurationError('1h30m')).toBe('');
    expect(goDurationError('-5m')).toBe('');
  });
});

describe('a disruption pass', () => {
  it('publishes the events of the active pods of nodes whose pods it checks, not of nodes it never gets that far with', () => {
    const until = annotated('15m', NOW - 5 * MIN);
    const elapsed = annotated('1m');
    const s = env({
      nodePools: [pool()],
      nodes: [
        bigNode({ name: 'checked', pods: [until, elapsed, pod({ nodeName: 'checked' })] }),
        bigNode({
          name: 'protected',
          annotations: { 'karpenter.sh/do-not-disrupt': 'true' },
          pods: [annotated('bogus')],
        }),
      ],
    });
    const events = doNotDisruptEvents({ ...s, now: NOW });
    expect(events.map((e) => [e.pod.uid, e.reason])).toEqual([
      [until.uid, 'DoNotDisruptUntil'],
      [elapsed.uid, 'DoNotDisruptGracePeriodElapsed'],
    ]);
  });
});
