// scripts/heap-snapshot-read.mjs reads a heap snapshot section by section from its bytes (heap-owners.mjs uses it,
// because a snapshot over 512 MiB is longer than any string V8 can make): it must give what JSON.parse gives,
// however the reads cut the file, strings with escapes and multi-byte characters included.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain script, no type declarations
import { readSnapshot } from '../../scripts/heap-snapshot-read.mjs';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'heap-read-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Snapshot {
  snapshot: unknown;
  nodes: ArrayLike<number>;
  edges: ArrayLike<number>;
  strings: string[];
}

/** The first index where a and b differ (in length too), or -1: toEqual over millions of numbers takes seconds. */
function firstDifference<T>(a: ArrayLike<T>, b: ArrayLike<T>): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

describe('reading a heap snapshot a chunk at a time', () => {
  const file = path.join(dir, 'small.heapsnapshot');
  v8.writeHeapSnapshot(file);
  const whole = JSON.parse(fs.readFileSync(file, 'utf8')) as Snapshot;

  it("has strings that need escapes and multi-byte characters to read (this process's sources do)", () => {
    for (const c of ['"', '\\', '\n']) expect(whole.strings.some((s) => s.includes(c))).toBe(true);
    expect(whole.strings.some((s) => /[^\x00-\x7f]/.test(s))).toBe(true);
  });

  it.each([4093, 65_521, 16 * 2 ** 20])('gives what JSON.parse gives, read %i bytes at a time', (chunk) => {
    const got = readSnapshot(file, chunk) as Snapshot;
    expect(got.snapshot).toEqual(whole.snapshot);
    expect(firstDifference(got.nodes, whole.nodes)).toBe(-1);
    expect(firstDifference(got.edges, whole.edges)).toBe(-1);
    expect(firstDifference(got.strings, whole.strings)).toBe(-1);
  });

  it('names what is wrong with a file that is not a whole snapshot', () => {
    const cut = path.join(dir, 'cut.heapsnapshot');
    fs.writeFileSync(cut, fs.readFileSync(file).subarray(0, 100_000));
    expect(() => readSnapshot(cut)).toThrow(/ends before its nodes and edges do/);
    const other = path.join(dir, 'other.json');
    fs.writeFileSync(other, '{"a":1}');
    expect(() => readSnapshot(other)).toThrow(/not a V8 heap snapshot/);
  });
});
