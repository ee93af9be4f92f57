// Numbers for people: money with thousands separators and the sign before the currency ("-$17.99"),
// percentages, counts with their noun in the right number. The JSON report keeps raw numbers; only the
// terminal, HTML and batch tables go through these.

const grouped = (v: number, digits: number): string =>
  v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/**
 * Dollars: "$1,234.57", "-$17.99"; amounts below a dollar keep three decimals ("$0.844"), below a cent
 * four ("$0.0061"), so an hourly price is never shown as $0.00. Zero is "$0.00".
 */
export function usd(v: number): string {
  const a = Math.abs(v);
  const digits = a === 0 || a >= 1 ? 2 : a >= 0.01 ? 3 : 4;
  const text = grouped(a, digits);
  return `${v < 0 && Number(text.replace(/,/g, '')) !== 0 ? '-' : ''}$${text}`;
}

/** $/h: "$0.844/h". */
export const perHour = (v: number): string => `${usd(v)}/h`;

/** $/month, whole cents: "$1,234.57/month". */
export const perMonth = (v: number): string => {
  const text = grouped(Math.abs(v), 2);
  return `${v < 0 && Number(text.replace(/,/g, '')) !== 0 ? '-' : ''}$${text}/month`;
};

/** A signed change for people: "saves $1.20/h", "adds $0.30/h". */
export function change(savedPerHour: number): string {
  return savedPerHour >= 0 ? `saves ${perHour(savedPerHour)}` : `adds ${perHour(-savedPerHour)}`;
}

/** 0.1180 -> "11.8%"; null -> "n/a". */
export const pct = (v: number | null | undefined, digits = 1): string =>
  v === null || v === undefined || !Number.isFinite(v) ? 'n/a' : `${(v * 100).toFixed(digits)}%`;

/** Whole numbers with separators: 12345 -> "12,345". */
export const count = (n: number): string => grouped(n, 0);

/** "1 node", "3 nodes", "1,204 pods"; irregular plurals by argument. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** "a, b and 3 more" (at most `max` names shown). */
export function someOf(names: readonly string[], max = 3): string {
  if (names.length <= max)
    return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
  return `${names.slice(0, max).join(', ')} and ${count(names.length - max)} more`;
}

/** Seconds for people: "4 s", "1 min 05 s". */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return m < 60
    ? `${m} min ${String(s % 60).padStart(2, '0')} s`
    : `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}
