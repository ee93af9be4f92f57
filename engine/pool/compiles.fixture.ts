// An engine worker for compiles.test.ts that counts the WebAssembly modules compiled in its thread: `compiled`, by
// the WebAssembly.Module constructor (how the solver's module is made); `fromBytes`, by WebAssembly.compile or
// WebAssembly.instantiate given bytes rather than a module (how HiGHS' loader makes its own). It wraps them before
// the engine worker loads, and adds the counts to its memory readings.
import type { EngineTask, TaskReply } from './engine.worker.ts';

let compiled = 0;
let fromBytes = 0;
WebAssembly.Module = new Proxy(WebAssembly.Module, {
  construct(target, args, newTarget) {
    compiled++;
    return Reflect.construct(target, args, newTarget) as object;
  },
});
const { compile, instantiate } = WebAssembly;
WebAssembly.compile = (bytes) => {
  fromBytes++;
  return compile(bytes);
};
WebAssembly.instantiate = ((source: WebAssembly.Module | BufferSource, imports?: WebAssembly.Imports) => {
  if (!(source instanceof WebAssembly.Module)) fromBytes++;
  return instantiate(source as BufferSource, imports);
}) as typeof WebAssembly.instantiate;
const worker = await import('./engine.worker.ts');

export default async function run(task: EngineTask): Promise<TaskReply> {
  const reply = await worker.default(task);
  return task.kind === 'memory' && reply.ok
    ? { ok: true, value: { ...(reply.value as object), compiled, fromBytes } }
    : reply;
}
