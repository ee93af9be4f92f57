// Cron schedules for disruption budgets, evaluated in UTC.
//
// Karpenter parses `spec.disruption.budgets[].schedule` with robfig/cron's standard parser (after prefixing
// "TZ=UTC "), so this follows that parser's rules (facts from robfig/cron v3 parser.go/spec.go):
// - exactly 5 fields: minute 0-59, hour 0-23, day-of-month 1-31, month 1-12 or JAN-DEC, day-of-week 0-6
//   or SUN-SAT (names case-insensitive; 7 is not Sunday);
// - each field is a comma list of `*` or `?`, `N`, `N-M`, each optionally `/step`; `N/step` means N-max;
// - errors: a range whose start is beyond its end, values out of bounds, step 0, negative numbers;
// - descriptors @yearly @annually @monthly @weekly @daily @midnight @hourly;
// - when both day-of-month and day-of-week are restricted (neither written as `*`/`?` without a step >1)
//   a day matches if EITHER matches; otherwise both must.
// Budgets reject time zones (Karpenter prefixes its own TZ=UTC, so a user TZ= fails) and @every.

export interface CronSchedule {
  readonly minute: readonly boolean[];
  readonly hour: readonly boolean[];
  readonly dom: readonly boolean[];
  readonly month: readonly boolean[];
  readonly dow: readonly boolean[];
  /** The day-of-month / day-of-week field was `*` or `?` (robfig's star bit). */
  readonly domStar: boolean;
  readonly dowStar: boolean;
}

type CronResult =
  | { readonly ok: true; readonly schedule: CronSchedule }
  | { readonly ok: false; readonly message: string };

export class CronError extends Error {
  override name = 'CronError';
}

interface Bounds {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: Readonly<Record<string, number>>;
}

const MONTHS = { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 };
const DAYS = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };
const FIELDS: readonly Bounds[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day of week', min: 0, max: 6, names: DAYS },
];

const DESCRIPTORS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

export function parseCron(expr: string): CronResult {
  try {
    return { ok: true, schedule: parseOrThrow(expr) };
  } catch (e) {
    return { ok: false, message: (e as Error).message };
  }
}

function parseOrThrow(expr: string): CronSchedule {
  const spec = expr.trim();
  if (spec === '') throw new CronError('the schedule is empty');
  if (/^(CRON_)?TZ=/.test(spec))
    throw new CronError('time zones are not supported: schedules are always evaluated in UTC');
  if (spec.startsWith('@')) {
    if (spec.startsWith('@every'))
      throw new CronError(
        '"@every" is not supported in budget schedules; use five cron fields or @hourly/@daily/@weekly/@monthly/@yearly',
      );
    const fields = DESCRIPTORS[spec];
    if (fields === undefined)
      throw new CronError(
        `unrecognized descriptor "${spec}" (use @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)`,
      );
    return parseFields(fields);
  }
  return parseFields(spec);
}

function parseFields(spec: string): CronSchedule {
  const fields = spec.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5) {
    throw new CronError(
      `expected exactly 5 fields (minute hour day-of-month month day-of-week), found ${fields.length}: "${spec}"`,
    );
  }
  const parsed = fields.map((f, i) => parseField(f, FIELDS[i]!));
  const [minute, hour, dom, month, dow] = parsed as [Parsed, Parsed, Parsed, Parsed, Parsed];
  return {
    minute: minute.bits,
    hour: hour.bits,
    dom: dom.bits,
    month: month.bits,
    dow: dow.bits,
    domStar: dom.star,
    dowStar: dow.star,
  };
}

interface Parsed {
  bits: boolean[];
  star: boolean;
}

function parseField(field: string, b: Bounds): Parsed {
  const bits: boolean[] = new Array<boolean>(b.max + 1).fill(false);
  let star = false;
  const parts = field.split(',').filter((p) => p !== '');
  if (parts.length === 0) throw new CronError(`the ${b.name} field "${field}" has no values`);
  for (const part of parts) {
    const r = parseRange(part, b);
    for (let v = r.start; v <= r.end; v += r.step) bits[v] = true;
    star ||= r.star;
  }
  return { bits, star };
}

function parseRange(expr: string, b: Bounds): { start: number; end: number; step: number; star: boolean } {
  const rangeAndStep = expr.split('/');
  if (rangeAndStep.length > 2) throw new CronError(`too many slashes in the ${b.name} field: "${expr}"`);
  const lowAndHigh = rangeAndStep[0]!.split('-');
  if (lowAndHigh.length > 2) throw new CronError(`too many hyphens in the ${b.name} field: "${expr}"`);
  let start: number;
  let end: number;
  let star = false;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    if (lowAndHigh.length > 1) throw new CronError(`"${expr}": a range cannot start with * in the ${b.name} field`);
    start = b.min;
    end = b.max;
    star = true;
  } else {
    start = intOrName(lowAndHigh[0]!, b);
    end = lowAndHigh.length === 2 ? intOrName(lowAndHigh[1]!, b) : start;
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = nonNegativeInt(rangeAndStep[1]!, b);
    if (lowAndHigh.length === 1) end = b.max; // "N/step" means "N-max/step"
    if (step > 1) star = false;
  }
  if (start < b.min) throw new CronError(`${b.name} ${start} is below the minimum ${b.min}: "${expr}"`);
  if (end > b.max) throw new CronError(`${b.name} ${end} is above the maximum ${b.max}: "${expr}"`);
  if (start > end) throw new CronError(`the ${b.name} range "${expr}" starts (${start}) after it ends (${end})`);
  if (step === 0) throw new CronError(`the step in "${expr}" must be a positive number`);
  return { start, end, step, star };
}

function intOrName(s: string, b: Bounds): number {
  const named = b.names?.[s.toLowerCase()];
  if (named !== undefined) return named;
  return nonNegativeInt(s, b);
}

function nonNegativeInt(s: string, b: Bounds): number {
  if (!/^[+-]?\d+$/.test(s)) {
    const hint = b.names ? ` (or a name such as ${Object.keys(b.names).slice(0, 3).join(', ').toUpperCase()})` : '';
    throw new CronError(`"${s}" is not a number${hint} in the ${b.name} field`);
  }
  const n = Number(s);
  if (n < 0) throw new CronError(`negative number ${n} is not allowed in the ${b.name} field`);
  return n;
}

function dayMatches(s: CronSchedule, day: number, weekday: number): boolean {
  const domMatch = s.dom[day] === true;
  const dowMatch = s.dow[weekday] === true;
  return s.domStar || s.dowStar ? domMatch && dowMatch : domMatch || dowMatch;
}

/**
 * The first time (ms since the epoch, a whole UTC minute) strictly after `timeMs` at which the schedule
 * fires, or null when it does not fire within five years (robfig gives up there too; e.g. "0 0 30 2 *").
 * Throws CronError when `expr` is a string that does not parse; parse first with parseCron to report it.
 */
export function nextAfter(expr: string | CronSchedule, timeMs: number): number | null {
  const s = typeof expr === 'string' ? parseOrThrow(expr) : expr;
  let t = Math.floor(timeMs / 60_000) * 60_000 + 60_000;
  const yearLimit = new Date(t).getUTCFullYear() + 5;
  for (;;) {
    const d = new Date(t);
    const y = d.getUTCFullYear();
    const mo = d.getUTCMonth();
    const day = d.getUTCDate();
    const h = d.getUTCHours();
    if (y > yearLimit) return null;
    if (!s.month[mo + 1]) {
      t = Date.UTC(y, mo + 1, 1);
    } else if (!dayMatches(s, day, d.getUTCDay())) {
      t = Date.UTC(y, mo, day + 1);
    } else if (!s.hour[h]) {
      t = Date.UTC(y, mo, day, h + 1);
    } else if (!s.minute[d.getUTCMinutes()]) {
      t += 60_000;
    } else {
      return t;
    }
  }
}

/**
 * Karpenter's budget window test: active at `nowMs` iff the first hit strictly after now - duration is not
 * after now. A schedule that never fires makes robfig return the zero time, which Karpenter's test treats
 * as active; we keep that behaviour.
 */
export function scheduleActive(expr: string | CronSchedule, durationMs: number, nowMs: number): boolean {
  const next = nextAfter(expr, nowMs - durationMs);
  return next === null || next <= nowMs;
}
