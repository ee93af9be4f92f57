// The controller in a process of its own, driven over IPC (the controller benchmark forks it:
// bench/controller/harness.ts): the real operator with the simulated cloud (../operator.ts), talking to the
// parent's simulated API server over HTTP; the instances it launches boot in the parent's simulated kubelets
// (IPC). It measures itself: event-loop delay, resident memory, and the timestamps of batch windows closing,
// NodeClaims appearing and disruption passes. It lives in sim/ so that `npm run build` compiles it: the
// benchmark runs the compiled controller (dist/), as the image does, with no TypeScript loader in any thread.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { getHeapSpaceStatistics, getHeapStatistics, writeHeapSnapshot } from 'node:v8';
import type { WorkerMemory } from '../../engine/index.ts';
import { applyHeapPolicy } from '../../controller/operator/heap.ts';
import { startMallocTrimming } from '../../controller/operator/malloc.ts';
import { AllocationProfile } from './allocprofile.ts';
import {
  observeDecisions,
  observeDisruptionPasses,
  startSimOperator,
  wallClockMs,
  type SimOperator,
} from '../operator.ts';
import type {
  ChildInit,
  ChildStatus,
  FromChild,
  ObservedDecision,
  ObservedEvents,
  PhaseStats,
  ToChild,
  WorkerMemoryMiB,
} from './protocol.ts';

const MiB = 1024 * 1024;
/** The RSS timeline's window: the highest of its 100 ms samples is kept per window. */
const RSS_WINDOW_MS = 5_000;

function send(m: FromChild): void {
  process.send!(m);
}

/** Event-loop delay and peak RSS over a phase; paused between phases. */
class PhaseProbe {
  private readonly delay = monitorEventLoopDelay({ resolution: 10 });
  private sampler: NodeJS.Timeout | undefined;
  private peak = 0;
  private startRss = 0;
  private startSpaces: Record<string, number> = {};
  /** The highest RSS sample of each RSS_WINDOW_MS since the phase started. */
  private windows: number[] = [];
  private started = 0;

  // No pause/resume: re-enabling the monitor records the whole pause as one delay.
  start(): void {
    clearInterval(this.sampler);
    this.delay.disable();
    this.delay.reset();
    this.delay.enable();
    this.peak = process.memoryUsage.rss();
    this.startRss = this.peak;
    this.startSpaces = heapSpaces();
    this.windows = [];
    this.started = wallClockMs();
    this.sampler = setInterval(() => this.sample(process.memoryUsage.rss()), 100);
  }

  private sample(rss: number): void {
    this.peak = Math.max(this.peak, rss);
    const w = Math.floor((wallClockMs() - this.started) / RSS_WINDOW_MS);
    while (this.windows.length <= w) this.windows.push(0);
    this.windows[w] = Math.max(this.windows[w]!, rss);
  }

  end(workers: readonly WorkerMemory[]): PhaseStats {
    this.delay.disable();
    clearInterval(this.sampler);
    const mem = process.memoryUsage();
    const heap = getHeapStatistics();
    this.sample(mem.rss);
    const ms = (ns: number) => ns / 1e6;
    return {
      eventLoopP50Ms: ms(this.delay.percentile(50)),
      eventLoopP99Ms: ms(this.delay.percentile(99)),
      eventLoopMaxMs: ms(this.delay.max),
      rssPeakMiB: this.peak / MiB,
      rssStartMiB: this.startRss / MiB,
      rssWindowsMiB: this.windows.map((b) => Math.round(b / MiB)),
      rssEndMiB: mem.rss / MiB,
      heapUsedMiB: mem.heapUsed / MiB,
      heapTotalMiB: mem.heapTotal / MiB,
      externalMiB: mem.external / MiB,
      arrayBuffersMiB: mem.arrayBuffers / MiB,
      heapPhysicalMiB: heap.total_physical_size / MiB,
      mallocedMiB: heap.malloced_memory / MiB,
      heapLimitMiB: heap.heap_size_limit / MiB,
      spacesStartMiB: this.startSpaces,
      spacesEndMiB: heapSpaces(),
      ...residentKinds(),
      ...liveHeap(),
      workers: workers.map(workerMiB),
      seconds: (wallClockMs() - this.started) / 1000,
      ...heapSnapshot(),
    };
  }
}

/** The main thread's heap by space (new, old, code, large objects...): each space's resident pages, MiB. */
function heapSpaces(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of getHeapSpaceStatistics()) out[s.space_name.replace(/_space$/, '')] = s.physical_space_size / MiB;
  return out;
}

/**
 * The process's resident memory by kind (Linux, /proc/self/status): anonymous pages (heaps, malloc, stacks) and
 * file pages (the node binary and shared libraries, resident but shared with every node process); {} elsewhere.
 */
function residentKinds(): { rssAnonMiB?: number; rssFileMiB?: number } {
  let status: string;
  try {
    status = readFileSync('/proc/self/status', 'utf8');
  } catch {
    return {};
  }
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  const anon = kib('RssAnon');
  const file = kib('RssFile');
  return Number.isFinite(anon) && Number.isFinite(file) ? { rssAnonMiB: anon / 1024, rssFileMiB: file / 1024 } : {};
}

let snapshots = 0;

/**
 * With BENCH_CONTROLLER_HEAP_SNAPSHOTS=<dir>: a heap snapshot of the main thread at each phase's end, after the
 * figures above (writing one holds the thread for seconds at 100,000 pods, and doubles the heap meanwhile).
 */
function heapSnapshot(): { heapSnapshot?: string } {
  const dir = process.env['BENCH_CONTROLLER_HEAP_SNAPSHOTS'];
  if (!dir) return {};
  return { heapSnapshot: writeHeapSnapshot(join(dir, `controller-${process.pid}-${++snapshots}.heapsnapshot`)) };
}

/**
 * The main thread's heap in use after a full collection, when the process runs with --expose-gc; and what of the
 * ArrayBuffers and the RSS was left then (a buffer's memory is freed only when its object is collected).
 */
function liveHeap(): { liveHeapMiB?: number; liveArrayBuffersMiB?: number; rssAfterGcMiB?: number } {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return {};
  gc();
  const mem = process.memoryUsage();
  return { liveHeapMiB: mem.heapUsed / MiB, liveArrayBuffersMiB: mem.arrayBuffers / MiB, rssAfterGcMiB: mem.rss / MiB };
}

const workerMiB = (w: WorkerMemory): WorkerMemoryMiB => ({
  heapUsedMiB: w.heapUsed / MiB,
  heapTotalMiB: w.heapTotal / MiB,
  heapPhysicalMiB: w.heapPhysical / MiB,
  heapLimitMiB: w.heapLimit / MiB,
  ...(w.live !== undefined ? { liveHeapMiB: w.live / MiB } : {}),
  wasmMiB: w.wasm / MiB,
  models: w.models,
});

/** What the observers saw since the last phase-start. */
class Recorder {
  windowsClosed: number[] = [];
  nodeClaimsAdded: Array<{ at: number; name: string }> = [];
  decisions: ObservedDecision[] = [];
  disruptionPasses: ObservedEvents['disruptionPasses'][number][] = [];

  reset(): void {
    this.windowsClosed = [];
    this.nodeClaimsAdded = [];
    this.decisions = [];
    this.disruptionPasses = [];
  }

  snapshot(): ObservedEvents {
    return {
      windowsClosed: [...this.windowsClosed],
      nodeClaimsAdded: [...this.nodeClaimsAdded],
      decisions: [...this.decisions],
      disruptionPasses: [...this.disruptionPasses],
    };
  }
}

const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/**
 * BENCH_CONTROLLER_LOG=debug|info|warn|error: the controller's log lines at that level, on stderr (stdout carries
 * the benchmark's JSON). Unset: silent.
 */
function logLevel(): (typeof LOG_LEVELS)[number] | 'silent' {
  const v = process.env['BENCH_CONTROLLER_LOG'];
  if (!v) return 'silent';
  const level = LOG_LEVELS.find((l) => l === v);
  if (!level) throw new Error(`BENCH_CONTROLLER_LOG: "${v}" is not one of ${LOG_LEVELS.join(', ')}`);
  return level;
}

/**
 * Scrapes the operator's metrics every BENCH_CONTROLLER_SCRAPE_SECONDS (default 30, as a Prometheus would; 0: never)
 * the way /metrics serves them: the exposition's pieces as they are made, each handed on and dropped. The metrics
 * families derived from cluster state at each scrape (node, pod state, status conditions) cost their work here.
 * Returns what stops it.
 */
function scrapeEvery(sim: SimOperator): () => void {
  const raw = process.env['BENCH_CONTROLLER_SCRAPE_SECONDS'] ?? '30';
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new Error(`BENCH_CONTROLLER_SCRAPE_SECONDS: "${raw}" is not a number of seconds >= 0`);
  if (seconds === 0) return () => {};
  let scraping = false;
  const timer = setInterval(() => {
    if (scraping) return;
    scraping = true;
    void (async () => {
      try {
        for await (const _ of sim.operator.metrics.exposition());
      } finally {
        scraping = false;
      }
    })();
  }, seconds * 1000);
  return () => clearInterval(timer);
}

/** The malloc trims so far, from startMallocTrimming's histogram: how many, their time in all (ms), and its buckets. */
interface TrimTotals {
  readonly count: number;
  readonly totalMs: number;
  /** The histogram's cumulative counts by upper bound (ms), in the order of its buckets. */
  readonly buckets: ReadonlyArray<readonly [number, number]>;
}

async function trimTotals(sim: SimOperator): Promise<TrimTotals> {
  const { values } = await sim.operator.metrics.mallocTrimDuration.get();
  const value = (suffix: string) =>
    values.find((v) => v.metricName === `karpenter_ts_malloc_trim_duration_seconds${suffix}`)?.value ?? 0;
  // A histogram's bucket series carry `le`, a label its own type does not declare.
  const le = (v: (typeof values)[number]) => (v.labels as Record<string, string | number | undefined>)['le'];
  const buckets = values
    .filter((v) => v.metricName?.endsWith('_bucket') && le(v) !== '+Inf')
    .map((v) => [Number(le(v)) * 1000, v.value] as const);
  return { count: value('_count'), totalMs: value('_sum') * 1000, buckets };
}

/** The trims between two readings; `atMostMs` is the least bucket bound that holds all of them (absent past the last). */
function trimsBetween(a: TrimTotals, b: TrimTotals): NonNullable<PhaseStats['mallocTrims']> {
  const count = b.count - a.count;
  const bound = b.buckets.find(([le, n], i) => n - (a.buckets[i]?.[1] ?? 0) === count)?.[0];
  return { count, totalMs: b.totalMs - a.totalMs, ...(count > 0 && bound !== undefined ? { atMostMs: bound } : {}) };
}

async function start(init: ChildInit): Promise<void> {
  const sim: SimOperator = await startSimOperator({
    logLevel: logLevel(),
    logOutputPaths: ['stderr'],
    kubeConfig: init.kubeConfig,
    kubelet: {
      registerInstance: (spec) => send({ t: 'kubelet', op: 'register', spec }),
      terminateInstance: (providerID) => send({ t: 'kubelet', op: 'terminate', providerID }),
    },
    ...(init.options ? { options: init.options } : {}),
    ...(init.launchMs !== undefined ? { launchMs: init.launchMs } : {}),
    ...(init.terminateMs !== undefined ? { terminateMs: init.terminateMs } : {}),
  });
  // As `karpenter-ts controller` does (cli/commands/controller.ts), from the same option and its default; the
  // cluster is still empty here, so the whole set-up runs under it.
  applyHeapPolicy(sim.options.heapGrowingPercent);
  startMallocTrimming(sim.options.mallocTrimIntervalMs, sim.operator.metrics, sim.operator.log);
  const probe = new PhaseProbe();
  const allocations = new AllocationProfile();
  const seen = new Recorder();
  observeDecisions(sim, {
    onWindowClosed: (at) => seen.windowsClosed.push(at),
    onNodeClaimAdded: (at, name) => seen.nodeClaimsAdded.push({ at, name }),
    onDecision: (at, speculative, account) => seen.decisions.push({ at, speculative, ...account }),
  });
  observeDisruptionPasses(sim.operator, (p) => seen.disruptionPasses.push(p));
  const stopScraping = scrapeEvery(sim);
  let trimsBefore = await trimTotals(sim);
  const handlers: Record<string, () => unknown> = {
    'phase-start': async () => {
      seen.reset();
      await allocations.start();
      trimsBefore = await trimTotals(sim);
      probe.start();
    },
    // The workers are read first (each when idle), then the main thread, so the figures are of one moment.
    'phase-end': async () => {
      const stats = probe.end(await sim.operator.engineMemory());
      const mallocTrims = trimsBetween(trimsBefore, await trimTotals(sim));
      const allocationProfile = await allocations.end();
      return { ...stats, mallocTrims, ...(allocationProfile ? { allocationProfile } : {}) };
    },
    events: () => seen.snapshot(),
    status: (): ChildStatus => ({
      synced: sim.operator.cluster.synced(),
      busy: sim.operator.busy(),
      pendingPods: sim.operator.cluster.workloads.pendingPods().length,
    }),
    stop: async () => {
      stopScraping();
      await sim.stop();
      setImmediate(() => process.exit(0));
    },
  };
  process.on('message', (m: ToChild) => {
    if (m.t !== 'req') return;
    Promise.resolve()
      .then(() => handlers[m.op]!())
      .then(
        (value) => send({ t: 'res', id: m.id, value }),
        (e: unknown) => send({ t: 'res', id: m.id, error: String((e as Error)?.stack ?? e) }),
      );
  });
  send({ t: 'ready' });
}

process.once('message', (m: ToChild) => {
  if (m.t !== 'init') return;
  start(m).catch((e: unknown) => {
    send({ t: 'fatal', error: String((e as Error)?.stack ?? e) });
    process.exit(1);
  });
});
process.on('disconnect', () => process.exit(0));
