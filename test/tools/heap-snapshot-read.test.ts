// scripts/heap-snapshot-read.mjs reads a heap snapshot section by section from its bytes (heap-owners.mjs uses it,
// because a snapshot over 512 MiB is longer than any string V8 can make): it must give what JSON.parse gives,
// however the reads cut the file, strings with escapes and multi-byte characters included.
//
// The snapshot is taken by a child node process, not by this one: test files share a worker process
// (vitest.config.ts, isolate: false), so a snapshot of the worker holds every module the files before this one
// loaded, and writing and parsing it stalled whole-suite runs on a loaded machine. A fresh process's snapshot
// (a few MiB) still has thousands of strings and is read in hundreds of chunks at the smallest size below.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

/** Strings the child keeps alive so that its snapshot must escape quotes, backslashes and newlines and hold
 * characters of two and three UTF-8 bytes (V8's snapshot writer drops characters outside the BMP, so none here). */
const KEPT = ['a "quoted" word', 'a back\\slash', 'two\nlines', 'naïve – 日本'];

/** Writes a heap snapshot of a fresh node process that holds KEPT to `file`. */
async function writeChildSnapshot(file: string): Promise<void> {
  const script = `globalThis.kept = ${JSON.stringify(KEPT)}; require('node:v8').writeHeapSnapshot(process.argv[1]);`;
  await promisify(execFile)(process.execPath, ['-e', script, file]);
  if (!fs.existsSync(file)) throw new Error(`the child node process wrote no heap snapshot at ${file}`);
}

/** The first index where a and b differ (in length too), or -1: toEqual over millions of numbers takes seconds. */
function firstDifference<T>(a: ArrayLike<T>, b: ArrayLike<T>): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

describe('reading a heap snapshot a chunk at a time', () => {
  const file = path.join(dir, 'small.heapsnapshot');
  let whole: Snapshot;
  beforeAll(async () => {
    await writeChildSnapshot(file);
    whole = JSON.parse(fs.readFileSync(file, 'utf8')) as Snapshot;
  });

  it('has strings that need escapes and multi-byte characters to read (the child kept some)', () => {
    for (const s of KEPT) expect(whole.strings).toContain(s);
    for (const c of ['"', '\\', '\n']) expect(whole.strings.some((s) => s.includes(c))).toBe(true);
    expect(whole.strings.some((s) => /[^\x00-\x7f]/.test(s))).toBe(true);
    expect(whole.strings.length).toBeGreaterThan(1000);
  });

  it.each([4093, 65_521, 2 ** 20, 16 * 2 ** 20])('gives what JSON.parse gives, read %i bytes at a time', (chunk) => {
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
