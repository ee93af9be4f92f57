// An engine worker for pool-threads.ts: the engine worker with each task's start and end (wall, on the process's
// shared clock) and its thread's CPU time recorded; a memory reading hands over and clears the records.
import { readFileSync, readlinkSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
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

export default async function run(task: EngineTask): Promise<TaskReply> {
  if (task.kind === 'memory') {
    const out = { tid, tasks, gcs, gcMs, kinds, cpu: cpuMs() };
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
