import { describe, expect, it } from 'vitest';
import { durationMs, formatDuration, nillableDurationMs, parseGoDuration } from './duration.ts';

const ns = (s: string): bigint | string => {
  const r = parseGoDuration(s);
  return r.ok ? r.ns : r.message;
};

describe('parseGoDuration', () => {
  it.each([
    ['0', 0n],
    ['1h30m', 5_400_000_000_000n],
    ['72h', 259_200_000_000_000n],
    ['30s', 30_000_000_000n],
    ['500ms', 500_000_000n],
    ['1.5h', 5_400_000_000_000n],
    ['1h0m0s', 3_600_000_000_000n],
    ['2us', 2_000n],
    ['2µs', 2_000n],
    ['2μs', 2_000n],
    ['7ns', 7n],
    ['+5s', 5_000_000_000n],
    ['-1m', -60_000_000_000n],
    ['.5s', 500_000_000n],
    ['1.s', 1_000_000_000n],
    ['1m30.25s', 90_250_000_000n],
    ['0s', 0n],
    ['9223372036854775807ns', 9223372036854775807n],
    ['-9223372036854775808ns', -9223372036854775808n],
  ])('parses %s exactly', (s, want) => {
    expect(ns(s)).toBe(want);
  });

  it.each([
    ['', /empty/],
    ['1', /missing unit/],
    ['1d', /unknown unit "d"/],
    ['h', /expected a number/],
    ['1h 30m', /unknown unit "h "/],
    ['.s', /expected a number/],
    ['9223372036854775808ns', /too large/],
    ['3000000h', /too large/],
    ['1hh', /unknown unit "hh"/],
    ['-', /empty/],
    ['1.2.3s', /missing unit after "1.2"/],
  ])('rejects %j', (s, why) => {
    const r = parseGoDuration(s);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.message).toMatch(why);
    expect(r.message).toContain(`"${s}"`);
  });

  it('converts to milliseconds, keeping fractions below 1 ms', () => {
    expect(durationMs('720h')).toBe(2_592_000_000);
    expect(durationMs('1500us')).toBe(1.5);
    expect(durationMs('bogus')).toBeUndefined();
  });

  it('reads Never as null for Karpenter nillable durations', () => {
    expect(nillableDurationMs('Never')).toBeNull();
    expect(nillableDurationMs('0s')).toBe(0);
    expect(nillableDurationMs('never')).toBeUndefined();
  });

  it('formats milliseconds the way Go prints durations', () => {
    expect(formatDuration(5_400_000)).toBe('1h30m0s');
    expect(formatDuration(500)).toBe('500ms');
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(90_500)).toBe('1m30.5s');
    expect(formatDuration(-30_000)).toBe('-30s');
  });
});
