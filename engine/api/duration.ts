// Go durations (time.ParseDuration), parsed exactly into nanoseconds.
//
// Grammar: [-+]? ( digits? [. digits?] unit )+ with at least one digit per element, or the bare "0".
// Units: ns, us, µs (U+00B5), μs (U+03BC), ms, s, m, h. The total must fit in an int64 of nanoseconds,
// as in Go. Karpenter's API fields narrow this further with patterns (see schemas/common.ts); this parser
// is the general one, used for every duration string we accept.

const UNIT_NS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const MAX_NS = (1n << 63n) - 1n;

type DurationResult = { readonly ok: true; readonly ns: bigint } | { readonly ok: false; readonly message: string };

export function parseGoDuration(input: string): DurationResult {
  const bad = (why: string): DurationResult => ({ ok: false, message: `"${input}" is not a valid duration: ${why}` });
  let s = input;
  let negative = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    negative = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return { ok: true, ns: 0n };
  if (s === '') return bad('it is empty (write e.g. 30s, 5m, 1h30m)');
  let total = 0n;
  while (s !== '') {
    const m = /^(\d*)(?:\.(\d*))?/.exec(s)!;
    const intDigits = m[1] ?? '';
    const fracDigits = m[2] ?? '';
    if (intDigits === '' && fracDigits === '') return bad('expected a number');
    s = s.slice(m[0].length);
    const u = /^[^\d.]+/.exec(s);
    if (!u) return bad(`missing unit after "${m[0]}" (use ns, us, ms, s, m or h)`);
    const unit = UNIT_NS[u[0]];
    if (unit === undefined) return bad(`unknown unit "${u[0]}" (use ns, us, ms, s, m or h)`);
    s = s.slice(u[0].length);
    let v = BigInt(intDigits || '0') * unit;
    if (fracDigits !== '') v += (BigInt(fracDigits) * unit) / 10n ** BigInt(fracDigits.length);
    total += v;
    if (total > MAX_NS + (negative ? 1n : 0n)) return bad('it is too large');
  }
  return { ok: true, ns: negative ? -total : total };
}

/** Milliseconds of a Go duration string (fractional below 1 ms), or undefined when it does not parse. */
export function durationMs(input: string): number | undefined {
  const r = parseGoDuration(input);
  return r.ok ? Number(r.ns) / 1e6 : undefined;
}

/**
 * A Karpenter "NillableDuration": a duration or the word Never (null). Returns undefined when the text is
 * neither, so callers can report it.
 */
export function nillableDurationMs(input: string): number | null | undefined {
  if (input === 'Never') return null;
  return durationMs(input);
}

/** Formats milliseconds the way Go prints durations ("1h30m0s", "500ms", "0s"). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < 1000) return `${sign}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = rest / 1000;
  if (h > 0) return `${sign}${h}h${m}m${s}s`;
  if (m > 0) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}
