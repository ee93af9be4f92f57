// A growable little-endian writer for the solver's input block: an i32 word stream with 8-byte aligned
// sections, plus the two pools (i32 lists and f64 vectors) that records point into.

export class Words {
  private buf: Int32Array;
  length = 0;

  constructor(capacity = 1024) {
    this.buf = new Int32Array(capacity);
  }

  /** Empties it for the next block, keeping its buffer (only the first `length` words are ever read). */
  clear(): void {
    this.length = 0;
  }

  push(v: number): number {
    if (this.length === this.buf.length) {
      const next = new Int32Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length] = v;
    return this.length++;
  }

  /** Appends a list [count, items...] and returns its word index; -1 for an empty list. */
  list(items: ArrayLike<number>): number {
    if (items.length === 0) return -1;
    const at = this.push(items.length);
    for (let i = 0; i < items.length; i++) this.push(items[i]!);
    return at;
  }

  /** Appends words as they are (no count) and returns the index of the first. */
  append(items: Int32Array): number {
    const at = this.length;
    this.buf = grown(this.buf, at, at + items.length, (n) => new Int32Array(n));
    this.buf.set(items, at);
    this.length += items.length;
    return at;
  }

  view(): Int32Array {
    return this.buf.subarray(0, this.length);
  }
}

/** `buf` if it holds `need` elements, else a copy of its first `used` in one twice as large (or more). */
function grown<T extends Int32Array | Float64Array>(buf: T, used: number, need: number, make: (n: number) => T): T {
  if (need <= buf.length) return buf;
  let n = buf.length * 2;
  while (need > n) n *= 2;
  const next = make(n);
  next.set(buf.subarray(0, used));
  return next;
}

export class F64s {
  private buf: Float64Array;
  length = 0;

  constructor(capacity = 1024) {
    this.buf = new Float64Array(capacity);
  }

  /** Empties it for the next block, keeping its buffer (only the first `length` values are ever read). */
  clear(): void {
    this.length = 0;
  }

  /** Appends a vector and returns the index of its first element. */
  vector(values: ArrayLike<number>): number {
    const at = this.length;
    this.buf = grown(this.buf, at, at + values.length, (n) => new Float64Array(n));
    for (let i = 0; i < values.length; i++) this.buf[at + i] = values[i]!;
    this.length += values.length;
    return at;
  }

  /** Appends values and returns the index of the first (what `vector` does, in bulk). */
  append(values: Float64Array): number {
    const at = this.length;
    this.buf = grown(this.buf, at, at + values.length, (n) => new Float64Array(n));
    this.buf.set(values, at);
    this.length += values.length;
    return at;
  }

  view(): Float64Array {
    return this.buf.subarray(0, this.length);
  }
}

/**
 * Lays out sections one after another, each 8-byte aligned, and writes them where the block is to go: into the
 * solver's linear memory (writeInto), or into a buffer of their own (build). A solve's block goes straight into linear
 * memory: a copy of it first would allocate the block's size in array buffers per solve, off the JavaScript heap but
 * counted by V8 against the old generation's room until a scavenge frees it (docs/engine.md, "Workers, affinity and
 * failure").
 */
export class Block {
  private readonly sections: Array<{ readonly parts: readonly Uint8Array[]; readonly offset: number }> = [];
  private size = 0;

  add(bytes: Uint8Array): number {
    return this.addParts([bytes]);
  }

  /** Adds one section made of `parts` back to back (no alignment between them) and returns its offset. */
  addParts(parts: readonly Uint8Array[]): number {
    const offset = (this.size + 7) & ~7;
    let end = offset;
    for (const p of parts) end += p.byteLength;
    this.sections.push({ parts, offset });
    this.size = end;
    return offset;
  }

  /** Reserves `n` bytes (zeroed) and returns their offset. */
  reserve(n: number): number {
    return this.add(new Uint8Array(n));
  }

  /** The block's length in bytes (a multiple of 8). */
  get byteLength(): number {
    return (this.size + 7) & ~7;
  }

  /** Writes the block into `out` (byteLength bytes): each section at its offset, zeros between and after them. */
  writeInto(out: Uint8Array): void {
    let at = 0;
    for (const s of this.sections) {
      out.fill(0, at, s.offset);
      at = s.offset;
      for (const p of s.parts) {
        out.set(p, at);
        at += p.byteLength;
      }
    }
    out.fill(0, at, this.byteLength);
  }

  build(): Uint8Array {
    const out = new Uint8Array(this.byteLength);
    this.writeInto(out);
    return out;
  }
}

export function bytesOf(a: Int32Array | Float64Array | Uint8Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** A host port as one word: port (16 bits), protocol (2), interned IP (0 = unspecified, any address). */
export function encodePort(p: { ip: string; port: number; protocol: string }, ips: Map<string, number>): number {
  const unspecified = p.ip === '' || p.ip === '0.0.0.0' || p.ip === '::';
  let ip = 0;
  if (!unspecified) {
    ip = ips.get(p.ip) ?? ips.size + 1;
    ips.set(p.ip, ip);
  }
  const proto = p.protocol === 'UDP' ? 1 : p.protocol === 'SCTP' ? 2 : 0;
  return (p.port & 0xffff) | (proto << 16) | (ip << 18);
}
