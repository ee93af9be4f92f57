// Stable hashes of JSON values (object keys sorted), for the nodepool-hash and node-class hash annotations.
// Karpenter writes a hashstructure uint64 as a decimal string; we write the first 64 bits of a SHA-256 of
// the canonical JSON the same way, so the annotation looks alike and compares the same (equal or not).
import { createHash } from 'node:crypto';

export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

export function stableHash(v: unknown): string {
  const digest = createHash('sha256').update(canonicalJson(v)).digest();
  return digest.readBigUInt64BE(0).toString(10);
}
