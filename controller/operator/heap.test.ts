// The heap policy takes effect: the same allocation pattern in a process of its own, with a small and with a large
// growing factor, peaks at a smaller heap with the small one (V8 collects sooner); the engine workers' own limit
// holds in a process started with --max-old-space-size, and the main thread keeps that one; bad values are refused.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { applyHeapPolicy, engineSemiSpace, engineWorkerHeap } from './heap.ts';

const HEAP_TS = join(dirname(fileURLToPath(import.meta.url)), 'heap.ts');

/** Peak heap (bytes) of a process holding ~400,000 small objects that it keeps replacing, under `percent`. */
function peakHeap(percent: number): number {
  const script = `
    const { applyHeapPolicy } = await import(${JSON.stringify(HEAP_TS)});
    applyHeapPolicy(${percent});
    const live = [];
    for (let i = 0; i < 400000; i++) live.push({ i, s: 'v' + i });
    let peak = 0;
    for (let r = 0; r < 40; r++) {
      for (let i = 0; i < 100000; i++) live[(r * 100000 + i) % live.length] = { i, s: 'w' + r + i };
      peak = Math.max(peak, process.memoryUsage().heapTotal);
    }
    process.stdout.write(String(peak));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  return Number(out);
}

describe('applyHeapPolicy', () => {
  it('makes V8 collect before the heap grows far past its live data', () => {
    const small = peakHeap(10);
    const large = peakHeap(300);
    expect(small).toBeGreaterThan(0);
    expect(small).toBeLessThan(large * 0.75);
  }, 60_000);

  it('refuses a value that is not a whole number >= 0', () => {
    expect(() => applyHeapPolicy(-1)).toThrow(/heap growing percent must be a whole number >= 0, got -1/);
    expect(() => applyHeapPolicy(1.5)).toThrow(/got 1.5/);
  });
});

/** Heap limits (MiB) of the main thread and of a worker started with engineWorkerHeap(mib), in a process of its own. */
function limits(nodeArgs: readonly string[], mib: number): { main: number; worker: number } {
  const script = `
    const { Worker } = await import('node:worker_threads');
    const { getHeapStatistics } = await import('node:v8');
    const { engineWorkerHeap } = await import(${JSON.stringify(HEAP_TS)});
    const resourceLimits = engineWorkerHeap(${mib});
    const src = "Promise.all([import('node:worker_threads'), import('node:v8')]).then(([t, v]) => t.parentPort.postMessage(v.getHeapStatistics().heap_size_limit))";
    const w = new Worker(src, { eval: true, ...(resourceLimits ? { resourceLimits } : {}) });
    const worker = await new Promise((r) => w.once('message', r));
    await w.terminate();
    const MiB = 2 ** 20;
    process.stdout.write(JSON.stringify({ main: getHeapStatistics().heap_size_limit / MiB, worker: worker / MiB }));`;
  const out = execFileSync(process.execPath, [...nodeArgs, '--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  return JSON.parse(out) as { main: number; worker: number };
}

describe('engineWorkerHeap', () => {
  it("gives the workers their own limit while the main thread keeps the process's", () => {
    const own = limits(['--max-old-space-size=300'], 100);
    // heap_size_limit is the old generation's limit plus the young generation's.
    expect(own.main).toBeGreaterThanOrEqual(300);
    expect(own.main).toBeLessThan(400);
    expect(own.worker).toBeGreaterThanOrEqual(100);
    expect(own.worker).toBeLessThan(200);
  }, 60_000);

  it("leaves the workers at the process's limit when given 0", () => {
    const same = limits(['--max-old-space-size=300'], 0);
    expect(same.worker).toBe(same.main);
  }, 60_000);

  it('refuses a value that is not a whole number >= 0', () => {
    expect(() => engineWorkerHeap(-1)).toThrow(/engine worker heap must be a whole number of MiB >= 0, got -1/);
    expect(() => engineWorkerHeap(2.5)).toThrow(/got 2.5/);
  });
});

describe('engineSemiSpace', () => {
  it("leaves the flag to a process whose NODE_OPTIONS sets it, in any of V8's spellings", () => {
    expect(engineSemiSpace('--min-semi-space-size=8')).toBe(0);
    expect(engineSemiSpace('--max-old-space-size=1024 --min_semi_space_size=4')).toBe(0);
    expect(engineSemiSpace('--min-semi-space-size 8')).toBe(0);
  });

  it("keeps the pool's default otherwise", () => {
    expect(engineSemiSpace(undefined)).toBeUndefined();
    expect(engineSemiSpace('--max-old-space-size=1024 --max-semi-space-size=32')).toBeUndefined();
  });
});
