// The pool's task queue (queue.ts): batch work largest first, the first of equals first, and nothing without an
// estimate passed by what came after it; then the same order through a real pool (one worker, busy while the batch
// queues), as what-if jobs of different sizes.
import { Piscina } from 'piscina';
import { afterAll, describe, expect, it } from 'vitest';
import { nodePool, pods, snapshot } from '../../test/fixtures/builders.ts';
import { defaultFakeInstanceTypes } from '../../test/fixtures/instancetypes.ts';
import { createEngine } from '../engine.ts';
import type { Built } from '../whatif/build.ts';
import { whatIfWork } from '../whatif/work.ts';
import type { TaskRouting } from './balancer.ts';
import { LargestFirstQueue } from './queue.ts';

type QueuedTask = Parameters<LargestFirstQueue['push']>[0];

function task(name: string, routing: TaskRouting = {}): QueuedTask & { name: string } {
  return { name, [Piscina.queueOptionsSymbol]: routing } as unknown as QueuedTask & { name: string };
}

function drain(q: LargestFirstQueue): string[] {
  const out: string[] = [];
  for (let t = q.shift(); t; t = q.shift()) out.push((t as unknown as { name: string }).name);
  return out;
}

describe('the largest-first task queue', () => {
  it('hands out estimated tasks largest first, the first of equals first', () => {
    const q = new LargestFirstQueue();
    for (const [name, work] of [
      ['a', 3],
      ['b', 9],
      ['c', 1],
      ['d', 9],
      ['e', 5],
    ] as const)
      q.push(task(name, { work }));
    expect(q.size).toBe(5);
    expect(drain(q)).toEqual(['b', 'd', 'e', 'a', 'c']);
    expect(q.size).toBe(0);
  });

  it('passes no task without an estimate: those before it go first, those after it after', () => {
    const q = new LargestFirstQueue();
    q.push(task('small', { work: 1 }));
    q.push(task('large', { work: 50 }));
    q.push(task('decision', { model: 'cluster' }));
    q.push(task('larger', { work: 100 }));
    q.push(task('memory', { worker: 7 }));
    expect(drain(q)).toEqual(['large', 'small', 'decision', 'larger', 'memory']);
  });

  it('keeps arrival order for tasks without estimates, and removes what it is told to', () => {
    const q = new LargestFirstQueue();
    const tasks = ['x', 'y', 'z'].map((n) => task(n));
    for (const t of tasks) q.push(t);
    q.remove(tasks[1]!);
    expect(drain(q)).toEqual(['x', 'z']);
  });
});

/** A built snapshot with `n` pending pods (a what-if job whose estimate is n). */
function built(n: number): Built {
  const its = defaultFakeInstanceTypes();
  const s = snapshot({
    nodePools: [nodePool()],
    instanceTypes: its,
    pendingPods: pods(n, { cpu: '1', memory: '1Gi' }).map((p) => ({ ...p, unschedulable: true })),
  });
  return { snapshot: s, region: 'us-east-1', catalog: new Map(its.map((t) => [t.name, t])), warnings: [] };
}

describe('a batch of what-if jobs on one worker', () => {
  const engine = createEngine({ threads: 1 });
  afterAll(() => engine.close());

  it('runs the queued jobs largest first, whatever order they were given in', async () => {
    const sizes = [2, 40, 5, 40, 20, 1, 12];
    const job = (n: number) => ({ built: built(n), sources: [`pods-${n}`], mode: 'provision' as const, exact: true });
    expect(sizes.map((n) => whatIfWork(job(n)))).toEqual(sizes);
    const finished: string[] = [];
    // The first job takes the worker at once; the rest queue behind it and leave the queue in its order.
    const all = sizes.map((n, i) =>
      engine.whatIf(job(n)).then((r) => {
        finished.push(`${i}:${r.input.sources[0]}`);
        return r;
      }),
    );
    const reports = await Promise.all(all);
    expect(reports.map((r) => r.counts.pending)).toEqual(sizes);
    expect(finished).toEqual(['0:pods-2', '1:pods-40', '3:pods-40', '4:pods-20', '6:pods-12', '2:pods-5', '5:pods-1']);
  });
});
