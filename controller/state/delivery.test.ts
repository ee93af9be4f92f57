// The informers' sliced delivery: steps run in the order queued, at most a slice per turn of the event loop, and
// timers get their turns before a long queue is done.
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

describe('sliced delivery', () => {
  it('runs a burst in order, at most a slice per turn, with timers running before the burst is done', async () => {
    const d = new SlicedDelivery((err) => {
      throw err;
    }, 10);
    const turns = turnCounter();
    const ran: Array<{ i: number; turn: number }> = [];
    let pendingWhenTimerFired = -1;
    setTimeout(() => (pendingWhenTimerFired = d.pending), 0);
    // Each step holds the loop for 50 us, as handling a watch event does: 25 ms in all, a timer is due long before.
    const work = (): void => {
      const until = performance.now() + 0.05;
      while (performance.now() < until);
    };
    for (let i = 0; i < 500; i++) d.push(() => (work(), ran.push({ i, turn: turns.turn() })));
    expect(ran).toEqual([]); // nothing runs in the turn that queued it
    await drained(d);
    turns.stop();
    expect(ran.map((r) => r.i)).toEqual([...Array(500).keys()]);
    const perTurn = new Map<number, number>();
    for (const r of ran) perTurn.set(r.turn, (perTurn.get(r.turn) ?? 0) + 1);
    expect(Math.max(...perTurn.values())).toBe(10);
    expect(perTurn.size).toBe(50);
    // The timer was due at once and ran between two slices, long before the 50th.
    expect(pendingWhenTimerFired).toBeGreaterThan(0);
    expect(pendingWhenTimerFired).toBeLessThan(500);
  });

  it('reports a step that throws and runs the rest; a step queued by a step runs after those queued before it', async () => {
    const errors: unknown[] = [];
    const d = new SlicedDelivery((err) => errors.push(err), 3);
    const ran: string[] = [];
    d.push(() => ran.push('a'));
    d.push(() => {
      throw new Error('bad event');
    });
    d.push(() => {
      ran.push('c');
      d.push(() => ran.push('e'));
    });
    d.push(() => ran.push('d'));
    await drained(d);
    expect(ran).toEqual(['a', 'c', 'd', 'e']);
    expect(errors.map((e) => (e as Error).message)).toEqual(['bad event']);
  });

  it('drops what is queued on clear, and delivers what is queued after', async () => {
    const d = new SlicedDelivery(() => {}, 2);
    const ran: number[] = [];
    for (let i = 0; i < 5; i++) d.push(() => ran.push(i));
    await new Promise((r) => setImmediate(r));
    d.clear();
    d.push(() => ran.push(99));
    await drained(d);
    expect(ran).toEqual([0, 1, 99]);
  });
});
