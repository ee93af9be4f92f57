// An engine worker for pool-threads.ts: the engine worker with each task's start and end (wall, on the process's
// shared clock) and its thread's CPU time recorded; a memory reading hands over and clears the records.
import { readFileSync, readlinkSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { GCProfiler, getHeapSpaceStatistics } from 'node:v8';
import type { EngineTask, TaskReply } from '../../engine/pool/engine.worker.ts';

// POOL_THREADS_ROOT (a worker copies the environment when it starts): the checkout whose engine worker to wrap
// (pool-threads.ts sets it per engine); default this one.
const root = process.env['POOL_THREADS_ROOT'] ?? new URL('../..', import.meta.url).href;
const worker = (await import(new URL('engine/pool/engine.worker.ts', root).href)) as {
  default(task: EngineTask): Promise<TaskReply>;
};
const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
const cpuMs = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
const now = () => performance.timeOrigin + performance.now();
let tasks: { start: number; end: number; cpu: number; newSpace: number }[] = [];
/** The young generation's capacity now (new space, both semi-spaces), MiB. */
const newSpaceMiB = () =>
  (getHeapSpaceStatistics().find((x) => x.space_name === 'new_space')?.space_size ?? 0) / 2 ** 20;
let gcs = 0;
let gcMs = 0;
let kinds: Record<string, number> = {};
new PerformanceObserver((l) => {
  for (const e of l.getEntries()) {
    gcs++;
    gcMs += e.duration;
    const k = String((e as unknown as { detail: { kind: number } }).detail?.kind);
    kinds[k] = (kinds[k] ?? 0) + 1;
  }
}).observe({ entryTypes: ['gc'] });

/** One collection as V8's GC profiler reports it: each space's used bytes before and after. */
interface GcHeap {
  readonly heapSpaceStatistics: readonly { spaceName: string; spaceUsedSize: number }[];
}
interface GcStat {
  readonly gcType: string;
  readonly beforeGC: GcHeap;
  readonly afterGC: GcHeap;
}
/** The old generation's used bytes (every space but the young generation's and the read-only one). */
const oldUsed = (spaces: readonly { spaceName: string; spaceUsedSize: number }[]) =>
  spaces
    .filter((x) => !/^(new_space|new_large_object_space|read_only_space)$/.test(x.spaceName))
    .reduce((a, x) => a + x.spaceUsedSize, 0);
/**
 * What the old generation took in over the collections since the last reading, bytes: what scavenges promoted (its
 * growth across each scavenge), what was allocated in it directly between collections (code, large objects, ...),
 * and its size after the last full collection (what the next one's limit is set from).
 */
function oldGeneration(stats: readonly GcStat[]): { promoted: number; direct: number; liveAfterMc: number } {
  let promoted = 0;
  let direct = 0;
  let liveAfterMc = 0;
  let last: number | undefined;
  for (const g of stats) {
    const before = oldUsed(g.beforeGC.heapSpaceStatistics);
    const after = oldUsed(g.afterGC.heapSpaceStatistics);
    if (last !== undefined) direct += Math.max(0, before - last);
    if (g.gcType === 'Scavenge') promoted += Math.max(0, after - before);
    if (g.gcType === 'MarkSweepCompact') liveAfterMc = after;
    last = after;
  }
  return { promoted, direct, liveAfterMc };
}
let profiler = new GCProfiler();
profiler.start();

export default async function run(task: EngineTask): Promise<TaskReply> {
  if (task.kind === 'memory') {
    const old = oldGeneration((profiler.stop()?.statistics ?? []) as unknown as GcStat[]);
    profiler = new GCProfiler();
    profiler.start();
    const out = { tid, tasks, gcs, gcMs, kinds, cpu: cpuMs(), ...old };
    kinds = {};
    tasks = [];
    gcs = 0;
    gcMs = 0;
    return { ok: true, value: out };
  }
  const start = now();
  const c0 = cpuMs();
  try {
    return await worker.default(task);
  } finally {
    tasks.push({ start, end: now(), cpu: cpuMs() - c0, newSpace: newSpaceMiB() });
  }
}
