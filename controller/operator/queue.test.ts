import { describe, expect, it } from 'vitest';
import { manualClock } from '../../sim/clock.ts';
import { WorkQueue } from './queue.ts';
import { done, requeueAfter, minResult, type ReconcileResult } from './result.ts';

const idle = async (q: WorkQueue): Promise<void> => {
  while (q.busy()) await new Promise((r) => setImmediate(r));
};

describe('WorkQueue', () => {
  it('runs keys in the order they were added, across thousands of them and adds while it runs', async () => {
    const seen: string[] = [];
    const q = new WorkQueue({
      name: 't',
      clock: manualClock(),
      concurrency: 3,
      reconcile: async (k) => {
        seen.push(k);
        if (k === 'k-2500') for (let i = 0; i < 2000; i++) q.add(`m-${i}`);
        return done;
      },
      onError: () => {},
    });
    for (let i = 0; i < 5000; i++) q.add(`k-${i}`);
    await idle(q);
    const want = [
      ...Array.from({ length: 5000 }, (_, i) => `k-${i}`),
      ...Array.from({ length: 2000 }, (_, i) => `m-${i}`),
    ];
    expect(seen).toEqual(want);
  });

  it('runs a key once however often it is added before it runs', async () => {
    const seen: string[] = [];
    const q = new WorkQueue({
      name: 't',
      clock: manualClock(),
      reconcile: async (k) => (seen.push(k), done),
      onError: () => {},
    });
    q.add('a');
    q.add('a');
    q.add('b');
    await idle(q);
    expect(seen.sort()).toEqual(['a', 'b']);
  });

  it('runs a key again when it is added while it runs', async () => {
    let runs = 0;
    let release: () => void = () => {};
    const q = new WorkQueue({
      name: 't',
      clock: manualClock(),
      reconcile: async () => {
        runs++;
        if (runs === 1) await new Promise<void>((r) => (release = r));
        return done;
      },
      onError: () => {},
    });
    q.add('a');
    while (runs === 0) await new Promise((r) => setImmediate(r));
    q.add('a');
    release();
    await idle(q);
    expect(runs).toBe(2);
  });

  it('requeues after the clock time a reconcile asks for, keeping the earliest timer', async () => {
    const clock = manualClock();
    const at: number[] = [];
    const q = new WorkQueue({
      name: 't',
      clock,
      reconcile: async () => (at.push(clock.now()), at.length === 1 ? requeueAfter(30_000) : done),
      onError: () => {},
    });
    const start = clock.now();
    q.add('a');
    await idle(q);
    q.addAfter('a', 60_000);
    expect(q.pending()).toEqual([{ key: 'a', at: start + 30_000 }]);
    await clock.advance(30_000);
    await idle(q);
    expect(at.map((t) => t - start)).toEqual([0, 30_000]);
  });

  it('backs off a failing key exponentially and resets after a success', async () => {
    const clock = manualClock();
    const retries: number[] = [];
    let fail = 3;
    const q = new WorkQueue({
      name: 't',
      clock,
      baseBackoffMs: 100,
      reconcile: async () => {
        if (fail-- > 0) throw new Error('boom');
        return done;
      },
      onError: (_k, _e, ms) => retries.push(ms),
    });
    q.add('a');
    for (let i = 0; i < 4; i++) {
      await idle(q);
      await clock.advance(1_000);
    }
    expect(retries).toEqual([100, 200, 400]);
  });

  it('minResult picks the soonest requeue', () => {
    const results: ReconcileResult[] = [done, requeueAfter(5_000), requeueAfter(1_000)];
    expect(minResult(...results)).toEqual(requeueAfter(1_000));
    expect(minResult(done, done)).toEqual(done);
  });
  it('starts at most 10 reconciles a turn of the event loop, and goes on to its concurrency over the next turns', async () => {
    let started = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const q = new WorkQueue({
      name: 't',
      clock: manualClock(),
      concurrency: 1000,
      reconcile: async () => {
        started++;
        await gate;
        return done;
      },
      onError: () => {},
    });
    for (let i = 0; i < 45; i++) q.add(`k-${i}`);
    const turn = () => new Promise((r) => setImmediate(r));
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) {
      await turn();
      seen.push(started);
    }
    expect(seen).toEqual([10, 20, 30, 40, 45, 45]);
    release();
    await idle(q);
    expect(q.runs).toBe(45);
  });
});
