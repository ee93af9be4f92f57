// Interning of label keys and values for the solver, and the dense set encoding of requirements
// (solver-as/abi.ts). Values are interned per key in sorted string order, so "the smallest value index"
// in the solver means the same as "the first domain in sorted order" in the reference solver.
import { KEYF_WELL_KNOWN, SF_COMPLEMENT, SF_DEFINED, SF_EXCL, SREC_BYTES } from '../../solver-as/abi.ts';
import type { Requirement, Requirements } from '../domain/types.ts';
import { has } from '../scheduling/requirements.ts';

export class KeySpace {
  private readonly collecting = new Map<string, Set<string>>();
  keys: string[] = [];
  readonly index = new Map<string, number>();
  values: string[][] = [];
  valueIndex: Array<Map<string, number>> = [];
  words: number[] = [];
  bitOff: number[] = [];
  setWords = 0;
  setBytes = 0;

  /**
   * `relevant`: the keys any requirement on the pod or NodePool side mentions (plus the offering keys). Only
   * those can ever decide a compatibility test (Compatible looks at the pod side's keys, Intersects at keys
   * both sides define), so an instance type's other forty labels are left out of the encoding.
   */
  constructor(
    private readonly wellKnown: ReadonlySet<string>,
    private readonly excluded: ReadonlySet<string>,
    private readonly relevant?: ReadonlySet<string>,
  ) {}

  addValues(key: string, values: Iterable<string>): void {
    if (this.excluded.has(key)) return;
    if (this.relevant && !this.relevant.has(key)) return;
    let s = this.collecting.get(key);
    if (!s) this.collecting.set(key, (s = new Set()));
    for (const v of values) s.add(v);
  }

  addRequirements(reqs: Requirements): void {
    for (const r of reqs.values()) this.addValues(r.key, r.values);
  }

  freeze(): void {
    const keys = [...this.collecting.keys()].sort();
    let off = 0;
    for (const k of keys) {
      const vals = [...this.collecting.get(k)!].sort();
      const i = this.keys.length;
      this.keys.push(k);
      this.index.set(k, i);
      this.values.push(vals);
      this.valueIndex.push(new Map(vals.map((v, j) => [v, j])));
      const w = Math.max(1, Math.ceil(vals.length / 32));
      this.words.push(w);
      this.bitOff.push(off);
      off += w;
    }
    this.setWords = off + (off & 1); // keep sets 8-byte aligned
    this.setBytes = keys.length * SREC_BYTES + this.setWords * 4;
  }

  keyTable(): Int32Array {
    const out = new Int32Array(this.keys.length * 4);
    this.keys.forEach((k, i) => {
      out[i * 4] = this.words[i]!;
      out[i * 4 + 1] = this.bitOff[i]!;
      out[i * 4 + 2] = this.wellKnown.has(k) ? KEYF_WELL_KNOWN : 0;
    });
    return out;
  }

  value(key: string, v: string): number {
    const k = this.index.get(key);
    return k === undefined ? -1 : (this.valueIndex[k]!.get(v) ?? -1);
  }

  /** Sets the value bits of requirement r into `bits` at word `at` (universe values r allows). */
  private writeBits(r: Requirement, k: number, bits: Uint32Array, at: number): void {
    if (!r.complement && r.gte === undefined && r.lte === undefined) {
      const idx = this.valueIndex[k]!;
      for (const v of r.values) {
        const j = idx.get(v);
        if (j !== undefined) bits[at + (j >>> 5)]! |= 1 << (j & 31);
      }
      return;
    }
    const vals = this.values[k]!;
    for (let j = 0; j < vals.length; j++) if (has(r, vals[j]!)) bits[at + (j >>> 5)]! |= 1 << (j & 31);
  }

  /** Writes a dense set for `reqs` into `buf` at byte offset `at` (buf zeroed beforehand). */
  writeSet(reqs: Requirements, buf: ArrayBuffer, at: number): void {
    const i32 = new Int32Array(buf, at, this.setBytes / 4);
    const f64 = new Float64Array(buf, at, (this.keys.length * SREC_BYTES) / 8);
    const bits = new Uint32Array(buf, at + this.keys.length * SREC_BYTES, this.setWords);
    for (let k = 0; k < this.keys.length; k++) {
      f64[k * 3 + 1] = -Infinity;
      f64[k * 3 + 2] = Infinity;
    }
    for (const r of reqs.values()) {
      const k = this.index.get(r.key);
      if (k === undefined) continue;
      const flags = SF_DEFINED | (r.complement ? SF_COMPLEMENT : 0) | (r.complement && r.values.size > 0 ? SF_EXCL : 0);
      i32[k * 6] = flags;
      i32[k * 6 + 1] = r.minValues ?? 0;
      if (r.complement) {
        if (r.gte !== undefined) f64[k * 3 + 1] = r.gte;
        if (r.lte !== undefined) f64[k * 3 + 2] = r.lte;
      }
      this.writeBits(r, k, bits, this.bitOff[k]!);
    }
  }

  /**
   * Appends an instance type's sparse requirement list [n, (key, flags, bits...) x n] to `words` and returns the
   * index of its first word; -1, with nothing appended, when none of its keys is in this space. Writes straight
   * into `words` through one scratch bit buffer (an array per type and a typed array per key were a what-if job's
   * garbage, docs/benchmarks.md).
   */
  sparseInto(reqs: Requirements, words: { push(v: number): number }): number {
    let n = 0;
    for (const r of reqs.values()) if (this.index.has(r.key)) n++;
    if (n === 0) return -1;
    const at = words.push(n);
    for (const r of reqs.values()) {
      const k = this.index.get(r.key);
      if (k === undefined) continue;
      const w = this.words[k]!;
      if (this.scratch.length < w) this.scratch = new Uint32Array(w);
      const bits = this.scratch.fill(0, 0, w);
      this.writeBits(r, k, bits, 0);
      words.push(k);
      words.push(SF_DEFINED | (r.complement ? SF_COMPLEMENT : 0) | (r.complement && r.values.size > 0 ? SF_EXCL : 0));
      for (let i = 0; i < w; i++) words.push(bits[i]! | 0);
    }
    return at;
  }

  /** sparseInto's bits of one key. */
  private scratch = new Uint32Array(8);
}

/** Reads set `i` of a block of dense sets back into requirements (for NodeClaims the solver returns). */
export function decodeSet(ks: KeySpace, buf: ArrayBuffer, at: number): Map<string, Requirement> {
  const i32 = new Int32Array(buf, at, ks.setBytes / 4);
  const f64 = new Float64Array(buf, at, (ks.keys.length * SREC_BYTES) / 8);
  const bits = new Uint32Array(buf, at + ks.keys.length * SREC_BYTES, ks.setWords);
  const out = new Map<string, Requirement>();
  for (let k = 0; k < ks.keys.length; k++) {
    const flags = i32[k * 6]!;
    if (!(flags & SF_DEFINED)) continue;
    const key = ks.keys[k]!;
    const vals = ks.values[k]!;
    const off = ks.bitOff[k]!;
    const allowed: string[] = [];
    const excluded: string[] = [];
    for (let j = 0; j < vals.length; j++)
      ((bits[off + (j >>> 5)]! >>> (j & 31)) & 1 ? allowed : excluded).push(vals[j]!);
    const minValues = i32[k * 6 + 1]! || undefined;
    const complement = (flags & SF_COMPLEMENT) !== 0;
    const r: { key: string; complement: boolean; values: Set<string>; gte?: number; lte?: number; minValues?: number } =
      {
        key,
        complement,
        values: new Set(complement ? [] : allowed),
      };
    if (complement) {
      const gte = f64[k * 3 + 1]!;
      const lte = f64[k * 3 + 2]!;
      if (gte !== -Infinity) r.gte = gte;
      if (lte !== Infinity) r.lte = lte;
      // Values the bounds exclude are implied by them; list only values the set itself excludes.
      r.values = new Set(excluded.filter((v) => withinBounds(v, r.gte, r.lte)));
    }
    if (minValues !== undefined) r.minValues = minValues;
    out.set(key, r);
  }
  return out;
}

function withinBounds(v: string, gte: number | undefined, lte: number | undefined): boolean {
  if (gte === undefined && lte === undefined) return true;
  if (!/^-?\d+$/.test(v)) return false;
  const n = Number(v);
  return (gte === undefined || n >= gte) && (lte === undefined || n <= lte);
}
