// Free malloc memory back to the system (MALLOC_TRIM_INTERVAL). The main thread's C++ allocations (socket reads,
// Buffers, the HTTP parser's state) and each worker's live in glibc arenas, and glibc returns an arena's memory
// only from its top: after a burst (the first list of 100,000 pods, a consolidation pass) the chunks freed between
// ones still in use stay resident until the process ends. At 5,000 nodes the main arena held 31-79 MiB resident
// with 7-12 MiB of it in use (docs/controller-benchmark.md, "glibc's main arena"). glibc's malloc_trim(0) gives
// every whole free page back; Node never calls it, so the controller does, from a small addon (native/malloc.c)
// on a timer. Where the addon could not be built, or the C library is not glibc, the controller says so at start
// and runs without it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';

/** glibc's view of its arenas (mallinfo2, all arenas summed); not resident memory. */
interface MallocStats {
  readonly arenaBytes: number;
  readonly inUseBytes: number;
  readonly freeBytes: number;
  readonly mmapBytes: number;
}

/** The addon's calls (native/malloc.c). */
export interface MallocAddon {
  /** Whether the addon was built against glibc (otherwise trim() does nothing). */
  readonly glibc: boolean;
  /**
   * malloc_trim(0) on libuv's thread pool (off the event loop): whether glibc gave any memory back, and how long it
   * took, seconds.
   */
  trim(): Promise<{ readonly released: boolean; readonly seconds: number }>;
  /** mallinfo2(), or null where glibc is older than 2.33 or absent. */
  stats(): MallocStats | null;
}

type MallocLoad = { readonly ok: true; readonly addon: MallocAddon } | { readonly ok: false; readonly reason: string };

/** Where `npm run build` puts the addon, beside this module's place in dist/ (and in the source tree). */
export const MALLOC_ADDON = fileURLToPath(new URL('../../native/build/malloc.node', import.meta.url));

/** Loads the addon at `path`; a missing or unloadable file is a reason, never a throw. */
export function loadMalloc(path: string = MALLOC_ADDON): MallocLoad {
  if (!existsSync(path))
    return { ok: false, reason: `${path} is missing (npm run build:native found no C compiler or Node headers)` };
  const mod: { exports: Partial<MallocAddon> } = { exports: {} };
  try {
    process.dlopen(mod, path);
  } catch (e) {
    return { ok: false, reason: `${path} did not load: ${(e as Error).message}` };
  }
  const a = mod.exports;
  if (typeof a.trim !== 'function' || typeof a.stats !== 'function' || typeof a.glibc !== 'boolean')
    return { ok: false, reason: `${path} is not the malloc addon (no trim/stats/glibc exports)` };
  return { ok: true, addon: a as MallocAddon };
}

/** What the trimmer reports: each trim's time (the metrics' hook), and a trim that failed. */
interface TrimHooks {
  readonly observe?: (seconds: number) => void;
  readonly failed?: (e: Error) => void;
}

/**
 * Calls malloc_trim every `intervalMs` of wall time (memory is the process's, whatever clock the controller's
 * cluster runs on), one trim at a time. The timer never keeps the process alive. A trim walks the arenas' free
 * chunks and returns their whole pages (madvise): 2.9-3.7 ms on average at 5,000 nodes, at most 25 after a burst
 * (docs/controller-benchmark.md, "Free malloc pages handed back"), on libuv's thread pool rather than the event loop.
 */
export class MallocTrimmer {
  private timer: ReturnType<typeof setInterval> | undefined;
  private running = false;

  constructor(
    private readonly addon: MallocAddon,
    private readonly intervalMs: number,
    private readonly hooks: TrimHooks = {},
  ) {
    if (!(intervalMs > 0)) throw new Error(`malloc trim interval must be > 0 ms, got ${intervalMs}`);
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.trim(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One trim now, unless one is still running: whether glibc gave memory back (false when skipped or failed). */
  async trim(): Promise<boolean> {
    if (this.running) return false;
    this.running = true;
    try {
      const r = await this.addon.trim();
      this.hooks.observe?.(r.seconds);
      return r.released;
    } catch (e) {
      this.hooks.failed?.(e as Error);
      return false;
    } finally {
      this.running = false;
    }
  }
}

/**
 * Starts trimming every `intervalMs` (0: never) with its metrics, as a process-wide policy: `karpenter-ts
 * controller` and the controller benchmark's process call it once (as they apply the heap policy), never an
 * operator that shares its process with tests or the simulator. Returns the trimmer to stop, or undefined when it
 * does not run, having logged why.
 */
export function startMallocTrimming(
  intervalMs: number,
  metrics: Metrics,
  log: Logger,
  loader: () => MallocLoad = loadMalloc,
): MallocTrimmer | undefined {
  if (intervalMs === 0) return undefined;
  const load = loader();
  if (!load.ok) {
    log.warn({ reason: load.reason }, 'free malloc memory is not returned to the system (MALLOC_TRIM_INTERVAL)');
    return undefined;
  }
  if (!load.addon.glibc) {
    log.info({}, 'the C library is not glibc: MALLOC_TRIM_INTERVAL has nothing to trim');
    return undefined;
  }
  metrics.watchMalloc(() => load.addon.stats());
  const trimmer = new MallocTrimmer(load.addon, intervalMs, {
    observe: (s) => metrics.mallocTrimDuration.observe(s),
    failed: (e) => log.warn({ err: e.message }, 'malloc_trim failed'),
  });
  trimmer.start();
  return trimmer;
}
