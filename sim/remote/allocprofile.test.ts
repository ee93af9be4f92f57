import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AllocationProfile } from './allocprofile.ts';

interface Node {
  callFrame: { functionName: string };
  selfSize: number;
  children: Node[];
}

const bytesIn = (n: Node, name: string): number =>
  (n.callFrame.functionName === name ? n.selfSize : 0) + n.children.reduce((a, c) => a + bytesIn(c, name), 0);

describe('the benchmark controller process: allocation profiles per phase', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('writes one profile a phase, in which garbage made during the phase shows', async () => {
    dir = mkdtempSync(join(tmpdir(), 'allocprofile-'));
    const p = new AllocationProfile(dir);
    const files: string[] = [];
    for (let phase = 0; phase < 2; phase++) {
      await p.start();
      let kept = 0;
      // Garbage only: every array is dropped at once.
      (function makeGarbage() {
        for (let i = 0; i < 20_000; i++) kept += new Array(64).fill(i).length;
      })();
      expect(kept).toBe(20_000 * 64);
      files.push((await p.end())!);
    }
    expect(new Set(files).size).toBe(2);
    for (const f of files) {
      const profile = JSON.parse(readFileSync(f, 'utf8')) as { head: Node };
      expect(bytesIn(profile.head, 'makeGarbage')).toBeGreaterThan(1024 * 1024);
    }
  });

  it('does nothing without a directory', async () => {
    const p = new AllocationProfile(undefined);
    await p.start();
    expect(await p.end()).toBeUndefined();
  });
});
