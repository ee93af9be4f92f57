// The order in which queued tasks reach the workers. Tasks leave in the order they came, except batch work: a task
// that carries an estimate of its work (a what-if job, TaskRouting.work) may be passed by a larger one that came
// after it, so a batch runs its largest jobs first and its smallest last. A batch ends when its last job does: run
// in the order given, a long job taken last keeps one worker busy while the others wait; largest first, the last
// jobs are the short ones and the workers finish close together. No task without an estimate (a cluster model's
// decision, a memory reading) is ever passed by one that came after it. The order depends on the tasks alone
// (estimates, then arrival), never on timing within the queue.
import { Piscina, type TaskQueue } from 'piscina';
import type { TaskRouting } from './balancer.ts';

/** A queued task as piscina hands it over (piscina does not export the type by name). */
type Task = Parameters<TaskQueue['push']>[0];

/** A task's estimate of its work, if it has one (read from its queue options). */
function workOf(task: Task): number | undefined {
  return (task as unknown as Record<symbol, TaskRouting | null | undefined>)[Piscina.queueOptionsSymbol]?.work;
}

export class LargestFirstQueue implements TaskQueue {
  /** In the order they came (a task the balancer could not place yet comes again, at the end). */
  private readonly tasks: Task[] = [];

  get size(): number {
    return this.tasks.length;
  }

  push(task: Task): void {
    this.tasks.push(task);
  }

  remove(task: Task): void {
    const i = this.tasks.indexOf(task);
    if (i >= 0) this.tasks.splice(i, 1);
  }

  /**
   * The first task, unless it has an estimate: then the largest of the estimated tasks ahead of the first one
   * without (the first of equals).
   */
  shift(): Task | null {
    let at = 0;
    let most = -Infinity;
    for (let i = 0; i < this.tasks.length; i++) {
      const work = workOf(this.tasks[i]!);
      if (work === undefined) break;
      if (work > most) {
        most = work;
        at = i;
      }
    }
    return this.tasks.splice(at, 1)[0] ?? null;
  }
}
