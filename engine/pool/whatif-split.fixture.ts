// An engine worker for whatif-split.test.ts that counts the what-if tasks it runs by part (whole, plan, bound) and
// adds the counts to its memory readings.
import type { EngineTask, TaskReply } from './engine.worker.ts';

const parts: Record<string, number> = {};
const worker = await import('./engine.worker.ts');

export default async function run(task: EngineTask): Promise<TaskReply> {
  if (task.kind === 'whatIf') parts[task.part ?? 'all'] = (parts[task.part ?? 'all'] ?? 0) + 1;
  const reply = await worker.default(task);
  return task.kind === 'memory' && reply.ok ? { ok: true, value: { ...(reply.value as object), parts } } : reply;
}
