// The informers' sliced delivery: each lane's steps run in the order queued, a bounded slice per turn of the
// event loop, lanes take turns, and timers run before a long queue is done; a watch stream's queued versions of an
// object merge into one, and no delete or error is merged or lost.
import { type KubernetesObject, ListWatch, type Watch } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { SlicedDelivery, WatchEvents } from './delivery.ts';

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

type Ev = [phase: string, obj: { metadata: { uid?: string; name: string; resourceVersion: string }; v?: number }];

const pod = (name: string, uid: string, rv: number): Ev[1] => ({
  metadata: { uid, name, resourceVersion: String(rv) },
  v: rv,
});

/** Queues `events` as one watch stream into a fresh delivery and returns what the handler got, once drained. */
async function handled(
  events: readonly Ev[],
): Promise<{ got: Array<[string, string, number | string]>; merged: number }> {
  const d = new SlicedDelivery(rethrow);
  const got: Array<[string, string, number | string]> = [];
  const stream = new WatchEvents(d, 'Pod', (phase, o) => {
    const obj = o as Ev[1];
    got.push([phase, obj.metadata.uid ?? '', obj.v ?? obj.metadata.resourceVersion]);
  });
  for (const [phase, obj] of events) stream.event(phase, obj);
  stream.end(() => got.push(['END', '', '']));
  await drained(d);
  return { got, merged: stream.merged };
}

/**
 * Feeds `script` as one watch stream to client-node's ListWatch through the delivery, merged (WatchEvents) or one
 * event a step as before; returns ListWatch's cache, its handler calls per uid and the version it would resume from.
 */
async function throughListWatch(script: readonly Ev[], merge: boolean) {
  const d = new SlicedDelivery(rethrow);
  let feed: ((phase: string, obj: unknown) => void) | undefined;
  const watch = {
    watch: async (_p: string, _q: unknown, cb: (phase: string, obj: unknown) => void) => {
      feed = cb;
      return new AbortController();
    },
  } as unknown as Watch;
  const lw = new ListWatch<KubernetesObject>(
    '/api/v1/pods',
    watch,
    async () => ({ items: [], metadata: { resourceVersion: '0' } }),
    false,
  );
  const calls = new Map<string, string[]>();
  const log = (verb: string) => (o: { metadata?: { uid?: string; resourceVersion?: string } }) => {
    const uid = o.metadata!.uid!;
    calls.set(uid, [...(calls.get(uid) ?? []), `${verb}@${o.metadata!.resourceVersion}`]);
  };
  lw.on('add', log('add'));
  lw.on('update', log('update'));
  lw.on('delete', log('delete'));
  await lw.start();
  const stream = new WatchEvents(d, 'Pod', (phase, o) => void feed!(phase, o));
  for (const [phase, obj] of script) {
    if (merge) stream.event(phase, obj);
    else d.push('Pod', () => void feed!(phase, obj));
  }
  // The stream goes on (no end yet): the version ListWatch holds once the queue has drained is what a restart
  // resumes from and what a reader takes as "seen up to".
  await drained(d);
  const caughtUpAt = lw.latestResourceVersion();
  let resumedFrom = '';
  const ended = () => (resumedFrom = lw.latestResourceVersion());
  if (merge) stream.end(ended);
  else d.push('Pod', ended);
  await drained(d);
  return {
    cache: lw
      .list()
      .map((o) => o.metadata!.uid + '@' + o.metadata!.resourceVersion)
      .sort(),
    calls,
    caughtUpAt,
    resumedFrom,
  };
}

describe('a watch stream into the delivery', () => {
  it("keeps one queued version of an object: the newest, in the place of the object's first queued event", async () => {
    const { got, merged } = await handled([
      ['ADDED', pod('a', 'ua', 1)],
      ['ADDED', pod('b', 'ub', 2)],
      ['MODIFIED', pod('a', 'ua', 3)],
      ['MODIFIED', pod('b', 'ub', 4)],
      ['MODIFIED', pod('a', 'ua', 5)],
    ]);
    expect(got).toEqual([
      ['ADDED', 'ua', 5],
      ['ADDED', 'ub', 4],
      ['BOOKMARK', '', '5'], // the newest event was merged: ListWatch resumes from it, not from b's 4
      ['END', '', ''],
    ]);
    expect(merged).toBe(3);
  });

  it('never merges or drops a delete: the waiting update is handled first, and an add after it is new', async () => {
    const { got } = await handled([
      ['ADDED', pod('a', 'ua', 1)],
      ['MODIFIED', pod('a', 'ua', 2)],
      ['DELETED', pod('a', 'ua', 3)],
      ['ADDED', pod('a', 'ua2', 4)], // the same name, a new object
      ['MODIFIED', pod('a', 'ua2', 5)],
      ['DELETED', pod('a', 'ua2', 6)],
      ['DELETED', pod('c', 'uc', 7)], // an object no queued event added
    ]);
    expect(got).toEqual([
      ['ADDED', 'ua', 2],
      ['DELETED', 'ua', 3],
      ['ADDED', 'ua2', 5],
      ['DELETED', 'ua2', 6],
      ['DELETED', 'uc', 7],
      ['END', '', ''],
    ]);
  });

  it('queues an update afresh once the queued version was handled, and leaves errors and uid-less objects alone', async () => {
    const d = new SlicedDelivery(rethrow);
    const got: string[] = [];
    const stream = new WatchEvents(d, 'Pod', (phase, o) =>
      got.push(`${phase}:${(o as Ev[1]).metadata.resourceVersion}`),
    );
    stream.event('ADDED', pod('a', 'ua', 1));
    await drained(d);
    stream.event('MODIFIED', pod('a', 'ua', 2));
    stream.event('MODIFIED', { metadata: { name: 'n', resourceVersion: '3' } });
    stream.event('MODIFIED', { metadata: { name: 'n', resourceVersion: '4' } });
    stream.event('ERROR', { metadata: { resourceVersion: '5' } });
    stream.event('MODIFIED', pod('a', 'ua', 6));
    await drained(d);
    // a's 6 was the newest event and was handled in a's earlier place: once drained, a bookmark of it follows.
    expect(got).toEqual(['ADDED:1', 'MODIFIED:6', 'MODIFIED:3', 'MODIFIED:4', 'ERROR:5', 'BOOKMARK:6']);
  });

  it('hands on a bookmark of the newest version once its queue drains, the stream still open', async () => {
    const d = new SlicedDelivery(rethrow);
    const got: string[] = [];
    const stream = new WatchEvents(d, 'Pod', (phase, o) =>
      got.push(`${phase}:${(o as Ev[1]).metadata.resourceVersion}`),
    );
    stream.event('ADDED', pod('a', 'ua', 1));
    stream.event('ADDED', pod('b', 'ub', 2));
    stream.event('MODIFIED', pod('a', 'ua', 3)); // into a's place, before b's 2
    await drained(d);
    // Without the bookmark the last version handled would be b's 2, below the 3 already handled, until the next
    // event or the stream's end: an informer that has seen everything would look behind.
    expect(got).toEqual(['ADDED:3', 'ADDED:2', 'BOOKMARK:3']);
    // Nothing merged since: the next drain hands on none.
    stream.event('MODIFIED', pod('b', 'ub', 4));
    await drained(d);
    expect(got.slice(3)).toEqual(['MODIFIED:4']);
  });

  it('leaves ListWatch with the same cache, handler calls per object and resume version as one event at a time', async () => {
    const script: Ev[] = [];
    // Three objects' lives interleaved: adds, status writes, deletes (not the last life's), re-creates by name.
    let rv = 1;
    for (let life = 0; life < 3; life++) {
      const names = ['p0', 'p1', 'p2'];
      for (const n of names) script.push(['ADDED', pod(n, `${n}-${life}`, rv++)]);
      for (let w = 0; w < 4; w++) for (const n of names) script.push(['MODIFIED', pod(n, `${n}-${life}`, rv++)]);
      if (life < 2) for (const n of names) script.push(['DELETED', pod(n, `${n}-${life}`, rv++)]);
    }
    // The last life's final writes in reverse order: the newest event (p0's) is merged into the place of p0's add,
    // ahead of p1's and p2's.
    for (const n of ['p2', 'p1', 'p0']) script.push(['MODIFIED', pod(n, `${n}-2`, rv++)]);
    const one = await throughListWatch(script, false);
    const merged = await throughListWatch(script, true);
    expect(merged.cache).toEqual(one.cache);
    expect(merged.resumedFrom).toBe(String(script.length));
    expect(one.resumedFrom).toBe(String(script.length));
    // Once drained (the stream still open), ListWatch is at the newest event, not at p2's, the last one handled.
    expect(one.caughtUpAt).toBe(String(script.length));
    expect(merged.caughtUpAt).toBe(String(script.length));
    for (const [uid, calls] of one.calls) {
      const got = merged.calls.get(uid)!;
      // Each object: added once, then (merged) fewer updates, and removed exactly when it was, at the same version.
      expect(got[0]!.startsWith('add@')).toBe(true);
      expect(got.filter((c) => c.startsWith('delete')).length).toBe(calls.filter((c) => c.startsWith('delete')).length);
      const version = (c: string | undefined) => c?.split('@')[1];
      expect(version(got.at(-1))).toBe(version(calls.at(-1)));
      expect(got.at(-1)!.startsWith('delete')).toBe(calls.at(-1)!.startsWith('delete'));
      expect(got.length).toBeLessThan(calls.length);
    }
  });

  it('hands on no bookmark after an error: a 410 leaves ListWatch to relist', async () => {
    const { got } = await handled([
      ['ADDED', pod('a', 'ua', 1)],
      ['MODIFIED', pod('a', 'ua', 2)],
      ['ERROR', { metadata: { name: 'Status', resourceVersion: '' } }],
    ]);
    expect(got.map((g) => g[0])).toEqual(['ADDED', 'ERROR', 'END']);
  });
});

describe('a backlog of watch events', () => {
  it('is reported once it drains, with its peak and the versions merged meanwhile; a short queue is not', async () => {
    const reports: unknown[] = [];
    const d = new SlicedDelivery(rethrow, { onBacklog: (b) => reports.push(b) });
    const stream = new WatchEvents(d, 'Pod', () => {});
    for (let i = 0; i < 100; i++) stream.event('ADDED', pod(`p${i}`, `u${i}`, i));
    await drained(d);
    expect(reports).toEqual([]);
    for (let i = 0; i < 12_000; i++) stream.event('ADDED', pod(`p${i}`, `u${i}`, i));
    for (let i = 0; i < 3_000; i++) stream.event('MODIFIED', pod(`p${i}`, `u${i}`, 20_000 + i));
    expect(d.pending).toBe(12_000);
    await drained(d);
    expect(reports).toEqual([{ peak: 12_000, merged: 3_000 }]);
  });
});
