// MALLOC_TRIM_INTERVAL: the addon (native/malloc.c, built by `npm run build`) hands glibc's free arena pages back
// to the system; the trimmer calls it on a timer with its metrics; a missing or foreign addon is reported, never
// thrown. The tests that need the built addon skip where the machine could not build it (no C compiler or Node
// headers: scripts/build-native.mjs says so at build time).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { newLogger } from './logger.ts';
import { loadMalloc, MALLOC_ADDON, type MallocAddon, MallocTrimmer, startMallocTrimming } from './malloc.ts';
import { Metrics } from './metrics.ts';

const built = existsSync(MALLOC_ADDON);
/** Node's report names the glibc it runs on; absent on other C libraries. */
const onGlibc = Boolean(
  (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime,
);

/** A stand-in addon that counts its calls. */
function recordingAddon(): MallocAddon & { trims: number } {
  return {
    glibc: true,
    trims: 0,
    trim() {
      this.trims++;
      return Promise.resolve({ released: true, seconds: 0.002 });
    },
    stats: () => ({ arenaBytes: 3 << 20, inUseBytes: 1 << 20, freeBytes: 2 << 20, mmapBytes: 1 << 17 }),
  };
}

function recordingLog() {
  const lines: Array<Record<string, unknown>> = [];
  const log = newLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } });
  return { log, lines };
}

describe('loading the malloc addon', () => {
  it('names a missing file and how it comes to be missing', () => {
    const r = loadMalloc('/nonexistent/malloc.node');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/\/nonexistent\/malloc\.node is missing \(npm run build:native/);
  });

  it('names a file that is not a loadable addon', () => {
    const dir = mkdtempSync(join(tmpdir(), 'malloc-'));
    try {
      const path = join(dir, 'malloc.node');
      writeFileSync(path, 'not a shared object');
      const r = loadMalloc(path);
      expect(r.ok).toBe(false);
      expect(!r.ok && r.reason).toContain(`${path} did not load:`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!built)(
    "loads the built addon, which knows whether it runs on glibc and counts glibc's arenas",
    async () => {
      const r = loadMalloc();
      expect(r.ok).toBe(true);
      if (!r.ok) return;
      expect(r.addon.glibc).toBe(onGlibc);
      const s = r.addon.stats();
      if (!onGlibc) return expect(s).toBeNull();
      expect(s!.inUseBytes).toBeGreaterThan(0);
      expect(s!.arenaBytes).toBeGreaterThanOrEqual(s!.inUseBytes);
      const t = await r.addon.trim();
      expect(typeof t.released).toBe('boolean');
      expect(t.seconds).toBeGreaterThanOrEqual(0);
      expect(t.seconds).toBeLessThan(10);
    },
  );
});

describe.skipIf(!built || !onGlibc)('malloc_trim in a process that freed the middle of its arena', () => {
  it('gives the freed pages back, where waiting alone does not', () => {
    // 4,000 blocks of 40 KB (below the mmap threshold, so in the main arena), every eighth kept: after the
    // collection frees the rest, the arena's free space lies between blocks still in use, under its top.
    const script = `
      const m = { exports: {} };
      process.dlopen(m, process.env.ADDON);
      function fragment() {
        const keep = [];
        const drop = [];
        for (let i = 0; i < 4000; i++) {
          const b = Buffer.allocUnsafeSlow(40000);
          b.fill(1);
          (i % 8 === 0 ? keep : drop).push(b);
        }
        return keep;
      }
      const keep = fragment();
      gc();
      const rss = () => process.memoryUsage.rss();
      setTimeout(() => {
        const freed = rss();
        setTimeout(async () => {
          const waited = rss();
          const { released, seconds } = await m.exports.trim();
          console.log(JSON.stringify({ freed, waited, trimmed: rss(), released, seconds, kept: keep.length }));
        }, 200);
      }, 300);`;
    const out = execFileSync(process.execPath, ['--expose-gc', '-e', script], {
      env: { ...process.env, ADDON: MALLOC_ADDON, MALLOC_MMAP_THRESHOLD_: '131072' },
      encoding: 'utf8',
    });
    const r = JSON.parse(out) as { freed: number; waited: number; trimmed: number; released: boolean; seconds: number };
    const MiB = 2 ** 20;
    expect(r.released).toBe(true);
    expect(r.seconds).toBeGreaterThan(0);
    // 3,500 blocks (133 MB) were freed; waiting gives back little of it, the trim most.
    expect((r.freed - r.waited) / MiB).toBeLessThan(16);
    expect((r.waited - r.trimmed) / MiB).toBeGreaterThan(64);
  });
});

/**
 * The trimmer's timer is a setInterval; faking only that leaves setTimeout and performance real, so nothing that
 * shares this process (the wall clock's one timeout, in controller/operator/clock.ts) is armed on a fake timer.
 */
const ONLY_INTERVALS: Parameters<typeof vi.useFakeTimers>[0] = { toFake: ['setInterval', 'clearInterval'] };

describe('the trimmer', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('trims every interval until stopped, and reports how long each trim took', async () => {
    vi.useFakeTimers(ONLY_INTERVALS);
    const addon = recordingAddon();
    const seen: number[] = [];
    const t = new MallocTrimmer(addon, 10_000, { observe: (s) => seen.push(s) });
    t.start();
    t.start();
    await vi.advanceTimersByTimeAsync(35_000);
    expect(addon.trims).toBe(3);
    expect(seen).toEqual([0.002, 0.002, 0.002]);
    t.stop();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(addon.trims).toBe(3);
  });

  it('runs one trim at a time, and reports a trim that failed', async () => {
    let finish: (v: { released: boolean; seconds: number }) => void = () => {};
    let calls = 0;
    const slow: MallocAddon = {
      glibc: true,
      trim: () => {
        calls++;
        return new Promise((resolve) => (finish = resolve));
      },
      stats: () => null,
    };
    const t = new MallocTrimmer(slow, 10_000);
    const first = t.trim();
    expect(await t.trim()).toBe(false);
    expect(calls).toBe(1);
    finish({ released: true, seconds: 0.03 });
    expect(await first).toBe(true);

    const failures: string[] = [];
    const broken: MallocAddon = { glibc: true, trim: () => Promise.reject(new Error('no')), stats: () => null };
    const b = new MallocTrimmer(broken, 10_000, { failed: (e) => failures.push(e.message) });
    expect(await b.trim()).toBe(false);
    expect(failures).toEqual(['no']);
    expect(await b.trim()).toBe(false);
    expect(failures).toEqual(['no', 'no']);
  });

  it('refuses an interval that is not positive', () => {
    expect(() => new MallocTrimmer(recordingAddon(), 0)).toThrow('malloc trim interval must be > 0 ms, got 0');
    expect(() => new MallocTrimmer(recordingAddon(), Number.NaN)).toThrow(/got NaN/);
  });

  it('starts with its metrics when the addon loads, and says why not when it does not', async () => {
    vi.useFakeTimers(ONLY_INTERVALS);
    const metrics = new Metrics();
    const addon = recordingAddon();
    const { log, lines } = recordingLog();
    const t = startMallocTrimming(10_000, metrics, log, () => ({ ok: true, addon }));
    expect(t).toBeDefined();
    await vi.advanceTimersByTimeAsync(10_000);
    t!.stop();
    expect(addon.trims).toBe(1);
    const text = await metrics.text();
    expect(text).toContain('karpenter_ts_malloc_trim_duration_seconds_count 1');
    expect(text).toContain('karpenter_ts_malloc_arena_bytes{state="in_use"} 1048576');
    expect(text).toContain('karpenter_ts_malloc_arena_bytes{state="free"} 2097152');
    expect(text).toContain('karpenter_ts_malloc_arena_bytes{state="mmap"} 131072');
    expect(lines).toEqual([]);

    const missing = startMallocTrimming(10_000, new Metrics(), log, () => ({ ok: false, reason: 'no addon here' }));
    expect(missing).toBeUndefined();
    expect(lines).toMatchObject([
      { level: 'WARN', reason: 'no addon here', message: expect.stringContaining('MALLOC_TRIM_INTERVAL') },
    ]);

    const musl = startMallocTrimming(10_000, new Metrics(), log, () => ({
      ok: true,
      addon: { ...addon, glibc: false },
    }));
    expect(musl).toBeUndefined();
    expect(lines[1]).toMatchObject({ level: 'INFO', message: expect.stringContaining('not glibc') });

    let loaded = false;
    expect(startMallocTrimming(0, new Metrics(), log, () => ((loaded = true), { ok: true, addon }))).toBeUndefined();
    expect(loaded).toBe(false);
  });
});
