// Small formatting helpers shared by explanations: money, durations, times, and Karpenter's event wording.
import type { Explanation, ExplanationCode } from './types.ts';

export function usd(pricePerHour: number): string {
  return `$${pricePerHour.toFixed(4)}/h`;
}

/** Karpenter's event savings form ($X.XX). */
export function usd2(pricePerHour: number): string {
  return `$${pricePerHour.toFixed(2)}`;
}

/** "2m12s", "5m", "1h30m", "45s": short human durations, rounded up to the second. */
export function shortDuration(ms: number): string {
  let s = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  const parts: string[] = [];
  if (h) parts.push(`${h}h`);
  if (m) parts.push(`${m}m`);
  if (s || parts.length === 0) parts.push(`${s}s`);
  return parts.join('');
}

/** "10:00 UTC" within a day of `now`, else "2026-01-05 10:00 UTC". */
export function utcTime(ms: number, now: number): string {
  const iso = new Date(ms).toISOString();
  const hm = iso.slice(11, 16);
  return ms - now < 24 * 3600_000 ? `${hm} UTC` : `${iso.slice(0, 10)} ${hm} UTC`;
}

export function capitalize(s: string): string {
  return s.length ? s[0]!.toUpperCase() + s.slice(1) : s;
}

export function explanation(
  node: string,
  code: ExplanationCode,
  message: string,
  data: Record<string, unknown> = {},
  event?: Explanation['event'],
): Explanation {
  return { node, code, message, data, ...(event ? { event } : {}) };
}
