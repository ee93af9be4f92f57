// Uids and generated names from a seeded generator, so a simulation replays the same names.
import { mulberry32 } from '../../engine/index.ts';

/** The engine's seeded PRNG: plenty for names (not for anything secret). */
export const seededRandom = mulberry32;

/** The alphabet of Kubernetes' rand.String (no vowels, no confusable characters). */
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

export class Ids {
  constructor(private readonly random: () => number) {}

  /** A random-looking RFC 4122 version 4 uid. */
  uid(): string {
    const hex = Array.from({ length: 32 }, () => Math.floor(this.random() * 16).toString(16));
    hex[12] = '4';
    hex[16] = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
    const s = hex.join('');
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
  }

  /** `n` characters of the Kubernetes name-suffix alphabet (generateName appends 5). */
  suffix(n = 5): string {
    let s = '';
    for (let i = 0; i < n; i++) s += ALPHANUMS[Math.floor(this.random() * ALPHANUMS.length)];
    return s;
  }
}

/** A stable short hash of a JSON value, spelled in the name-suffix alphabet (like pod-template-hash). */
export function stableHash(value: unknown): string {
  const text = canonicalJson(value);
  let h = 0x811c9dc5; // FNV-1a, 32 bit
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  let s = '';
  for (let i = 0; i < 10 && (i < 6 || h > 0); i++) {
    s += ALPHANUMS[h % ALPHANUMS.length];
    h = Math.floor(h / ALPHANUMS.length);
  }
  return s;
}

/** JSON with object keys sorted, so equal values hash equally. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const keys = Object.keys(v)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}
