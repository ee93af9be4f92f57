// An engine worker for compiles.test.ts that counts the WebAssembly modules compiled in its thread: it wraps the
// WebAssembly.Module constructor before the engine worker loads, and adds the count to its memory readings.
import type { EngineTask, TaskReply } from './engine.worker.ts';

let compiled = 0;
WebAssembly.Module = new Proxy(WebAssembly.Module, {
  construct(target, args, newTarget) {
    compiled++;
    return Reflect.construct(target, args, newTarget) as object;
  },
});
const worker = await import('./engine.worker.ts');

export default async function run(task: EngineTask): Promise<TaskReply> {
  const reply = await worker.default(task);
  return task.kind === 'memory' && reply.ok ? { ok: true, value: { ...(reply.value as object), compiled } } : reply;
}
