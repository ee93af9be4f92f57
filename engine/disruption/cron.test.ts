import { describe, expect, it } from 'vitest';
import { CronError, nextAfter, parseCron, scheduleActive } from './cron.ts';

const t = (iso: string): number => Date.parse(iso);
const next = (expr: string, iso: string): string | null => {
  const n = nextAfter(expr, t(iso));
  return n === null ? null : new Date(n).toISOString();
};

// 2026-01-01 is a Thursday; 2026-01-02 a Friday; 2026-01-05 a Monday.
describe('nextAfter (UTC)', () => {
  it('fires on weekdays only for MON-FRI', () => {
    expect(next('0 9 * * MON-FRI', '2026-01-02T08:59:30Z')).toBe('2026-01-02T09:00:00.000Z');
    expect(next('0 9 * * MON-FRI', '2026-01-02T09:00:00Z')).toBe('2026-01-05T09:00:00.000Z');
    expect(next('0 9 * * mon-fri', '2026-01-03T12:00:00Z')).toBe('2026-01-05T09:00:00.000Z');
  });

  it('is strictly after the given time, at whole minutes', () => {
    expect(next('* * * * *', '2026-01-01T00:00:00Z')).toBe('2026-01-01T00:01:00.000Z');
    expect(next('* * * * *', '2026-01-01T00:00:59.999Z')).toBe('2026-01-01T00:01:00.000Z');
    expect(next('0 2 * * *', '2026-01-01T02:00:00.001Z')).toBe('2026-01-02T02:00:00.000Z');
  });

  it('ORs day-of-month and day-of-week when both are restricted (robfig/cron, like Vixie cron)', () => {
    // the 13th or any Friday
    expect(next('0 0 13 * FRI', '2026-01-01T00:00:00Z')).toBe('2026-01-02T00:00:00.000Z');
    expect(next('0 0 13 * FRI', '2026-01-09T00:00:00Z')).toBe('2026-01-13T00:00:00.000Z');
    // a stepped day-of-month is not a star: days 1, 11, 21, 31 or Mondays
    expect(next('0 0 */10 * 1', '2026-01-01T00:00:00Z')).toBe('2026-01-05T00:00:00.000Z');
  });

  it('ANDs them when either is a star, including */1', () => {
    expect(next('0 0 13 * *', '2026-01-01T00:00:00Z')).toBe('2026-01-13T00:00:00.000Z');
    expect(next('0 0 * * 5', '2026-01-02T00:00:00Z')).toBe('2026-01-09T00:00:00.000Z');
    expect(next('0 0 13 * */1', '2026-01-01T00:00:00Z')).toBe('2026-01-13T00:00:00.000Z');
    expect(next('0 0 13 * ?', '2026-01-01T00:00:00Z')).toBe('2026-01-13T00:00:00.000Z');
  });

  it('handles descriptors', () => {
    expect(next('@hourly', '2026-01-01T10:15:00Z')).toBe('2026-01-01T11:00:00.000Z');
    expect(next('@daily', '2026-01-01T10:15:00Z')).toBe('2026-01-02T00:00:00.000Z');
    expect(next('@midnight', '2026-01-01T10:15:00Z')).toBe('2026-01-02T00:00:00.000Z');
    expect(next('@weekly', '2026-01-01T10:15:00Z')).toBe('2026-01-04T00:00:00.000Z');
    expect(next('@monthly', '2026-01-01T10:15:00Z')).toBe('2026-02-01T00:00:00.000Z');
    expect(next('@yearly', '2026-01-01T10:15:00Z')).toBe('2027-01-01T00:00:00.000Z');
    expect(next('@annually', '2026-12-31T23:59:00Z')).toBe('2027-01-01T00:00:00.000Z');
  });

  it('handles ranges, steps, lists and month names', () => {
    expect(next('5-59/15 * * * *', '2026-01-01T00:21:00Z')).toBe('2026-01-01T00:35:00.000Z');
    expect(next('10/20 * * * *', '2026-01-01T00:31:00Z')).toBe('2026-01-01T00:50:00.000Z');
    expect(next('0 0 1 JAN-MAR,dec *', '2026-04-01T00:00:00Z')).toBe('2026-12-01T00:00:00.000Z');
    expect(next('0 12 * * 0,6', '2026-01-01T00:00:00Z')).toBe('2026-01-03T12:00:00.000Z');
    expect(next('15,45 1-2 * * *', '2026-01-01T01:50:00Z')).toBe('2026-01-01T02:15:00.000Z');
  });

  it('finds leap days and gives up (null) on dates that never come', () => {
    expect(next('30 2 29 2 *', '2026-03-01T00:00:00Z')).toBe('2028-02-29T02:30:00.000Z');
    expect(next('0 0 30 2 *', '2026-01-01T00:00:00Z')).toBeNull();
    expect(next('0 0 31 4 *', '2026-01-01T00:00:00Z')).toBeNull();
  });

  it('accepts a parsed schedule and throws CronError for a bad string', () => {
    const p = parseCron('0 9 * * 1');
    expect(p.ok).toBe(true);
    if (!p.ok) return;
    expect(nextAfter(p.schedule, t('2026-01-01T00:00:00Z'))).toBe(t('2026-01-05T09:00:00Z'));
    expect(() => nextAfter('0 9 * *', 0)).toThrow(CronError);
  });
});

describe('parseCron errors', () => {
  it.each([
    ['0 9 * *', /exactly 5 fields.*found 4/],
    ['0 0 9 * * *', /exactly 5 fields.*found 6/],
    ['60 * * * *', /minute 60 is above the maximum 59/],
    ['* 24 * * *', /hour 24 is above the maximum 23/],
    ['* * 0 * *', /day of month 0 is below the minimum 1/],
    ['* * * 13 *', /month 13 is above the maximum 12/],
    ['* * * * 7', /day of week 7 is above the maximum 6/],
    ['x * * * *', /"x" is not a number in the minute field/],
    ['* * * FOO *', /"FOO" is not a number \(or a name such as JAN/],
    ['*/0 * * * *', /step in "\*\/0" must be a positive number/],
    ['1-2-3 * * * *', /too many hyphens/],
    ['1/2/3 * * * *', /too many slashes/],
    ['5-1 * * * *', /starts \(5\) after it ends \(1\)/],
    ['* * * * FRI-MON', /day of week range "FRI-MON" starts \(5\) after it ends \(1\)/],
    ['-1 * * * *', /is not a number|negative/],
    [', * * * *', /no values/],
    ['@every 1h', /@every.*not supported/],
    ['@reboot', /unrecognized descriptor "@reboot"/],
    ['TZ=Asia/Seoul 0 9 * * *', /time zones are not supported/],
    ['CRON_TZ=UTC 0 9 * * *', /time zones are not supported/],
    ['', /empty/],
  ])('rejects %j', (expr, why) => {
    const r = parseCron(expr);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.message).toMatch(why);
  });

  it('accepts the guide examples and whitespace runs', () => {
    for (const e of ['0 9 * * MON-FRI', '0 2 * * *', '0  9 *  * 1-5', '@daily', '? ? ? ? ?'])
      expect(parseCron(e).ok).toBe(true);
  });
});

describe('scheduleActive (Karpenter budget windows)', () => {
  it('is active from each hit for the duration, never at the instant the window ends', () => {
    const expr = '0 9 * * MON-FRI';
    const hour = 3_600_000;
    expect(scheduleActive(expr, hour, t('2026-01-02T08:59:00Z'))).toBe(false);
    expect(scheduleActive(expr, hour, t('2026-01-02T09:00:00Z'))).toBe(true);
    expect(scheduleActive(expr, hour, t('2026-01-02T09:59:59Z'))).toBe(true);
    expect(scheduleActive(expr, hour, t('2026-01-02T10:00:00Z'))).toBe(false);
    expect(scheduleActive(expr, hour, t('2026-01-03T09:30:00Z'))).toBe(false);
  });

  it('keeps overlapping windows active and treats a never-firing schedule as active, like Karpenter', () => {
    expect(scheduleActive('@hourly', 2 * 3_600_000, t('2026-01-01T10:30:00Z'))).toBe(true);
    expect(scheduleActive('0 0 30 2 *', 3_600_000, t('2026-01-01T10:30:00Z'))).toBe(true);
  });
});
