// The heap policy takes effect: the same allocation pattern in a process of its own, with a small and with a large
// growing factor, peaks at a smaller heap with the small one (V8 collects sooner); and bad values are refused.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { applyHeapPolicy } from './heap.ts';

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
