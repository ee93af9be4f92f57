import { describe, expect, it } from 'vitest';
import { manualClock } from '../../sim/clock.ts';
import type { Kind } from './kube.ts';
import { newLogger } from './logger.ts';
import { Metrics } from './metrics.ts';
import { done } from './result.ts';
import { Runtime, type CacheSync, type Controller } from './runtime.ts';

/** Caches whose kinds sync when the test says so. */
function caches(): CacheSync & { sync(kind: Kind): void } {
  const synced = new Set<Kind>();
  const waiters = new Set<() => void>();
  const all = (kinds: readonly Kind[]) => kinds.every((k) => synced.has(k));
  return {
    synced: all,
    unsynced: (kinds) => kinds.filter((k) => !synced.has(k)),
    waitForSync: (kinds, signal) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!all(kinds)) return;
          waiters.delete(check);
          resolve();
        };
        signal?.addEventListener('abort', () => {
          waiters.delete(check);
          reject(new Error('aborted'));
        });
        waiters.add(check);
        check();
      }),
    sync(kind) {
      synced.add(kind);
      for (const w of [...waiters]) w();
    },
  };
}

function controller(name: string, reads: readonly Kind[], registered: string[]): Controller {
  return {
    name,
    reads,
    reconcile: async () => done,
    register() {
      registered.push(name);
      return () => {};
    },
  };
}

const turns = async (n = 5): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe('Runtime', () => {
  it('starts each controller only once every kind it reads has synced', async () => {
    const c = caches();
    const registered: string[] = [];
    const rt = new Runtime({ clock: manualClock(), log: newLogger({ level: 'silent' }), caches: c }, [
      controller('pools', ['NodePool'], registered),
      controller('drain', ['Node', 'Pod'], registered),
    ]);
    c.sync('NodePool');
    c.sync('Node');
    rt.start();
    await turns();
    expect(registered).toEqual(['pools']);
    expect(rt.waitingForSync()).toEqual(['drain']);
    expect(rt.queue('drain')).toBeUndefined();
    c.sync('Pod');
    await turns();
    expect(registered).toEqual(['pools', 'drain']);
    expect(rt.waitingForSync()).toEqual([]);
    await rt.stop();
  });

  it('a controller still waiting when the runtime halts never starts', async () => {
    const c = caches();
    const registered: string[] = [];
    const rt = new Runtime({ clock: manualClock(), log: newLogger({ level: 'silent' }), caches: c }, [
      controller('drain', ['Pod'], registered),
    ]);
    rt.start();
    rt.halt();
    c.sync('Pod');
    await turns();
    expect(registered).toEqual([]);
  });

  it('without caches (unit tests, control runs) every controller starts at once', async () => {
    const registered: string[] = [];
    const rt = new Runtime({ clock: manualClock(), log: newLogger({ level: 'silent' }) }, [
      controller('drain', ['Pod'], registered),
    ]);
    rt.start();
    expect(registered).toEqual(['drain']);
    await rt.stop();
  });

  it("sets a queue's depth and running reconciles when a scrape is due, not at each add, start and finish", async () => {
    const metrics = new Metrics();
    let add: (key: string) => void = () => {};
    const release: Array<() => void> = [];
    const held: Controller = {
      name: 'held',
      reads: [],
      concurrency: 2,
      reconcile: () => new Promise((resolve) => release.push(() => resolve(done))),
      register(a) {
        add = a;
        return () => {};
      },
    };
    const rt = new Runtime({ clock: manualClock(), log: newLogger({ level: 'silent' }), metrics }, [held]);
    rt.start();
    const gauges = async () => ({
      depth: (await metrics.workqueueDepth.get()).values.find((v) => v.labels.controller === 'held')?.value,
      active: (await metrics.activeWorkers.get()).values.find((v) => v.labels.controller === 'held')?.value,
    });
    for (const k of ['a', 'b', 'c', 'd', 'e']) add(k);
    await turns();
    expect(release).toHaveLength(2);
    expect(await gauges()).toEqual({ depth: 0, active: 0 });
    rt.observe();
    expect(await gauges()).toEqual({ depth: 3, active: 2 });
    for (const r of release.splice(0)) r();
    await turns();
    rt.observe();
    expect(await gauges()).toEqual({ depth: 1, active: 2 });
    while (release.length) {
      for (const r of release.splice(0)) r();
      await turns();
    }
    rt.observe();
    expect(await gauges()).toEqual({ depth: 0, active: 0 });
    await rt.stop();
  });
});
