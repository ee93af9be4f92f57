// client-node's ListWatch with its cache a view of the handlers' own maps (keptcache.ts): the informer still tells
// adds from updates, drops an event of the version held, and on a relist removes what the list no longer has, while
// holding no entry of its own; an object the handlers did not keep is handled again at its next event.
import { ListWatch, type KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../operator/kube.ts';
import { viewCache } from './keptcache.ts';

type Obj = KubeObject & { metadata: { name: string; namespace: string; resourceVersion: string } };

const pod = (namespace: string, name: string, rv: number, bad = false): Obj =>
  ({ metadata: { namespace, name, resourceVersion: String(rv) }, ...(bad ? { bad } : {}) }) as Obj;

/** A ListWatch on a fake list and watch, its handlers keeping what they apply in `kept` (but not objects marked bad). */
function informer(first: Obj[]) {
  const kept = new Map<string, Map<string, Obj>>();
  const calls: string[] = [];
  let items = first;
  let event: ((phase: string, o: Obj) => void) | undefined;
  let done: ((err: unknown) => void) | undefined;
  const watch = {
    watch: async (_path: string, _q: unknown, cb: typeof event, d: typeof done) => {
      event = cb;
      done = d;
      return new AbortController();
    },
  };
  const lw = new ListWatch<KubernetesObject>(
    '/api/v1/pods',
    watch as never,
    async () => ({ metadata: { resourceVersion: '100' }, items }) as never,
    false,
  );
  viewCache(lw, kept);
  const key = (o: Obj) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`;
  const apply = (verb: string) => (x: KubernetesObject) => {
    const o = x as unknown as Obj;
    calls.push(`${verb} ${key(o)}`);
    if ((o as { bad?: boolean }).bad) return;
    let names = kept.get(o.metadata.namespace);
    if (!names) kept.set(o.metadata.namespace, (names = new Map()));
    names.set(o.metadata.name, o);
  };
  lw.on('add', apply('add'));
  lw.on('update', apply('update'));
  lw.on('delete', (x) => {
    const o = x as unknown as Obj;
    calls.push(`delete ${key(o)}`);
    const names = kept.get(o.metadata.namespace);
    names?.delete(o.metadata.name);
    if (names?.size === 0) kept.delete(o.metadata.namespace);
  });
  return {
    lw,
    kept,
    calls,
    event: (phase: string, o: Obj) => event!(phase, o),
    /** The watch ends with 410 Gone: ListWatch lists again (these items) and watches from there. */
    relist: async (next: Obj[]) => {
      items = next;
      done!({ statusCode: 410 });
      await new Promise((r) => setTimeout(r, 0));
    },
  };
}

describe("client-node's cache as a view of the handlers' maps", () => {
  it('tells adds from updates and drops the version it has, with no entry of its own', async () => {
    const t = informer([pod('a', 'p1', 1), pod('a', 'p2', 2)]);
    await t.lw.start();
    t.event('MODIFIED', pod('a', 'p1', 1));
    t.event('MODIFIED', pod('a', 'p1', 3));
    t.event('ADDED', pod('b', 'p3', 4));
    t.event('DELETED', pod('a', 'p2', 5));
    t.event('DELETED', pod('a', 'nope', 6));
    expect(t.calls).toEqual(['add a/p1@1', 'add a/p2@2', 'update a/p1@3', 'add b/p3@4', 'delete a/p2@5']);
    // The cache reads the handlers' maps: what it lists and gets is theirs.
    expect(t.lw.get('p1', 'a')).toBe(t.kept.get('a')!.get('p1'));
    expect(t.lw.list().map((o) => o.metadata!.name)).toEqual(['p1', 'p3']);
    expect((t.lw as unknown as { objects: unknown }).objects).not.toBeInstanceOf(Map);
  });

  it('handles again an event of an object the handlers did not keep', async () => {
    const t = informer([]);
    await t.lw.start();
    t.event('ADDED', pod('a', 'p1', 1, true));
    t.event('MODIFIED', pod('a', 'p1', 1, true));
    t.event('DELETED', pod('a', 'p1', 2));
    // Kept by nobody: each event is an add, and the deletion of what nobody holds is no event.
    expect(t.calls).toEqual(['add a/p1@1', 'add a/p1@1']);
    expect(t.lw.list()).toEqual([]);
  });

  it('removes on a relist what the list no longer has, in a namespace kept and in one gone', async () => {
    const t = informer([pod('a', 'p1', 1), pod('a', 'p2', 2), pod('b', 'p3', 3), pod('b', 'p4', 4)]);
    await t.lw.start();
    t.calls.length = 0;
    await t.relist([pod('a', 'p1', 1), pod('a', 'p5', 7)]);
    expect(t.calls.sort()).toEqual(['add a/p5@7', 'delete a/p2@2', 'delete b/p3@3', 'delete b/p4@4']);
    expect([...t.kept.keys()]).toEqual(['a']);
    expect([...t.kept.get('a')!.keys()]).toEqual(['p1', 'p5']);
  });

  it('refuses a ListWatch whose cache is not an empty `objects` map', () => {
    const lw = new ListWatch<KubernetesObject>(
      '/api/v1/pods',
      {} as never,
      async () => ({ items: [] }) as never,
      false,
    );
    (lw as unknown as { objects: unknown }).objects = undefined;
    expect(() => viewCache(lw, new Map())).toThrow(/ListWatch keeps no empty `objects` map/);
  });
});
