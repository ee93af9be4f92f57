// The informers' sliced delivery: each lane's steps run in the order queued, a bounded slice per turn of the
// event loop, lanes take turns, and timers run before a long queue is done.
import { describe, expect, it } from 'vitest';
import { SlicedDelivery } from './delivery.ts';

/** Counts turns of the event loop: a self-renewing setImmediate, which runs once per loop iteration. */
function turnCounter(): { readonly turn: () => number; stop: () => void } {
  let n = 0;
  let t: ReturnType<typeof setImmediate> | undefined;
  const tick = (): void => {
    n++;
    t = setImmediate(tick);
  };
  t = setImmediate(tick);
  return { turn: () => n, stop: () => clearImmediate(t!) };
}

const drained = (d: SlicedDelivery): Promise<void> =>
  new Promise((resolve) => {
    const check = (): void => {
      if (d.pending === 0) resolve();
      else setImmediate(check);
    };
    check();
  });

const rethrow = (err: unknown): never => {
  throw err;
};

function perTurn(ran: ReadonlyArray<{ turn: number }>): number[] {
  const m = new Map<number, number>();
  for (const r of ran) m.set(r.turn, (m.get(r.turn) ?? 0) + 1);
  return [...m.values()];
}

describe('sliced delivery', () => {
  it('runs a burst in order, at most maxEvents per turn, with timers running before the burst is done', async () => {
    const d = new SlicedDelivery(rethrow, { maxEvents: 10, budgetMs: 1_000 });
    const turns = turnCounter();
    const ran: Array<{ i: number; turn: number }> = [];
    let pendingWhenTimerFired = -1;
    setTimeout(() => (pendingWhenTimerFired = d.pending), 0);
    // Each step holds the loop for 50 us, as handling a watch event does: 25 ms in all, a timer is due long before.
    const work = (): void => {
      const until = performance.now() + 0.05;
      while (performance.now() < until);
    };
    for (let i = 0; i < 500; i++) d.push('Pod', () => (work(), ran.push({ i, turn: turns.turn() })));
    expect(ran).toEqual([]); // nothing runs in the turn that queued it
    await drained(d);
    turns.stop();
    expect(ran.map((r) => r.i)).toEqual([...Array(500).keys()]);
    expect(perTurn(ran)).toEqual(Array(50).fill(10));
    // The timer was due at once and ran between two slices, long before the 50th.
    expect(pendingWhenTimerFired).toBeGreaterThan(0);
    expect(pendingWhenTimerFired).toBeLessThan(500);
  });

  it('ends a turn once its time budget is spent (the clock read every 8 steps)', async () => {
    let t = 0;
    const d = new SlicedDelivery(rethrow, { budgetMs: 4, now: () => t });
    const turns = turnCounter();
    const ran: Array<{ turn: number }> = [];
    // Every step takes 1 ms of this clock: a turn runs 8 steps, reads the clock (8 >= 4 ms) and yields.
    for (let i = 0; i < 40; i++) d.push('Pod', () => ((t += 1), ran.push({ turn: turns.turn() })));
    await drained(d);
    turns.stop();
    expect(perTurn(ran)).toEqual([8, 8, 8, 8, 8]);
  });

  it('takes a step from each lane in turn: a Node event does not wait behind a burst of pod events', async () => {
    const d = new SlicedDelivery(rethrow, { maxEvents: 4, budgetMs: 1_000 });
    const ran: string[] = [];
    for (let i = 0; i < 100; i++) d.push('Pod', () => ran.push(`pod-${i}`));
    d.push('Node', () => ran.push('node-0'));
    d.push('Node', () => ran.push('node-1'));
    await drained(d);
    expect(ran.slice(0, 4)).toEqual(['pod-0', 'node-0', 'pod-1', 'node-1']);
    expect(ran.filter((x) => x.startsWith('pod'))).toEqual(Array.from({ length: 100 }, (_, i) => `pod-${i}`));
  });

  it('reports a step that throws and runs the rest; a step queued by a step runs after those queued before it', async () => {
    const errors: unknown[] = [];
    const d = new SlicedDelivery((err) => errors.push(err), { maxEvents: 3 });
    const ran: string[] = [];
    d.push('Pod', () => ran.push('a'));
    d.push('Pod', () => {
      throw new Error('bad event');
    });
    d.push('Pod', () => {
      ran.push('c');
      d.push('Pod', () => ran.push('e'));
    });
    d.push('Pod', () => ran.push('d'));
    await drained(d);
    expect(ran).toEqual(['a', 'c', 'd', 'e']);
    expect(errors.map((e) => (e as Error).message)).toEqual(['bad event']);
  });

  it('drops what is queued on clear, even mid-turn, and delivers what is queued after', async () => {
    const d = new SlicedDelivery(() => {}, { maxEvents: 2 });
    const ran: number[] = [];
    for (let i = 0; i < 5; i++) d.push('Pod', () => ran.push(i));
    await new Promise((r) => setImmediate(r));
    d.clear();
    d.push('Pod', () => ran.push(99));
    await drained(d);
    expect(ran).toEqual([0, 1, 99]);
    const e = new SlicedDelivery(() => {}, { maxEvents: 10 });
    const ran2: number[] = [];
    for (let i = 0; i < 5; i++) e.push('Pod', () => (ran2.push(i), i === 1 && e.clear()));
    await drained(e);
    expect(ran2).toEqual([0, 1]);
  });
});
