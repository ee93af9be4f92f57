// An engine worker for pool-alloc.ts: the engine worker with V8's sampling heap profiler, started by the first
// memory reading and stopped by the next, which hands back the profile (objects the collections freed counted too).
import { Session } from 'node:inspector/promises';
import type { EngineTask, TaskReply } from '../../engine/pool/engine.worker.ts';

const root = process.env['POOL_THREADS_ROOT'] ?? new URL('../..', import.meta.url).href;
const worker = (await import(new URL('engine/pool/engine.worker.ts', root).href)) as {
  default(task: EngineTask): Promise<TaskReply>;
};
const session = new Session();
session.connect();
let sampling = false;
const interval = Number(process.env['POOL_ALLOC_INTERVAL'] ?? 16384);

export default async function run(task: EngineTask): Promise<TaskReply> {
  if (task.kind !== 'memory') return worker.default(task);
  if (!sampling) {
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: interval,
      includeObjectsCollectedByMajorGC: process.env['POOL_ALLOC_MAJOR'] !== '0',
      includeObjectsCollectedByMinorGC: process.env['POOL_ALLOC_MINOR'] !== '0',
    });
    sampling = true;
    return { ok: true, value: undefined };
  }
  const { profile } = await session.post('HeapProfiler.stopSampling');
  sampling = false;
  return { ok: true, value: profile };
}
