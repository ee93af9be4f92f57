// Watches and informers through client-node against the simulated API server.
import * as k8s from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '../clock.ts';
import { kubeConfigFor } from '../kubeconfig.ts';
import { startApiServer, type ApiServer } from './index.ts';

let server: ApiServer | undefined;
const stops: Array<() => unknown> = [];

afterEach(async () => {
  for (const s of stops.splice(0)) await s();
  await server?.close();
  server = undefined;
});

async function start(heartbeatMs = 10_000): Promise<{ server: ApiServer; kc: k8s.KubeConfig }> {
  server = await startApiServer({ clock: manualClock(), heartbeatMs });
  return { server, kc: kubeConfigFor(server) };
}

const pod = (name: string, labels: Record<string, string> = {}) => ({
  metadata: { name, labels },
  spec: { containers: [] },
});

/** Collects watch events; `next(n)` resolves once n events have arrived. */
function collector() {
  const events: Array<{ type: string; name: string; rv: string; code?: number }> = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  let done: unknown = 'open';
  let onDone: (() => void) | undefined;
  return {
    events,
    callback(type: string, obj: any) {
      events.push({
        type,
        name: obj?.metadata?.name ?? '',
        rv: obj?.metadata?.resourceVersion ?? '',
        ...(obj?.code ? { code: obj.code } : {}),
      });
      for (const w of waiters.filter((x) => events.length >= x.n)) w.resolve();
    },
    done(err: unknown) {
      done = err ?? null;
      onDone?.();
    },
    next(n: number): Promise<void> {
      if (events.length >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    ended(): Promise<unknown> {
      if (done !== 'open') return Promise.resolve(done);
      return new Promise((resolve) => (onDone = () => resolve(done)));
    },
  };
}

describe('watch', () => {
  it('streams ADDED, MODIFIED and DELETED after the given resourceVersion, in order', async () => {
    const { server, kc } = await start();
    server.api.create('pods', 'default', pod('before'));
    const rv = server.api.list('pods', 'default').resourceVersion;
    const c = collector();
    const req = await new k8s.Watch(kc).watch(
      '/api/v1/namespaces/default/pods',
      { resourceVersion: rv },
      c.callback,
      c.done,
    );
    stops.push(() => req.abort());
    server.api.create('pods', 'default', pod('a'));
    server.api.patch('pods', 'default', 'a', 'merge', { metadata: { labels: { x: '1' } } });
    server.api.delete('pods', 'default', 'a');
    server.api.create('pods', 'kube-system', pod('elsewhere'));
    await c.next(3);
    expect(c.events.map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED a', 'MODIFIED a', 'DELETED a']);
    const rvs = c.events.map((e) => Number(e.rv));
    expect([...rvs].sort((a, b) => a - b)).toEqual(rvs);
  });

  it('replays the retained window when resuming from an older resourceVersion, and starts with the current state from 0', async () => {
    const { server, kc } = await start();
    const rv = server.store.resourceVersion();
    server.api.create('pods', 'default', pod('a'));
    server.api.create('pods', 'default', pod('b'));
    const resumed = collector();
    const first = await new k8s.Watch(kc).watch(
      '/api/v1/pods',
      { resourceVersion: String(rv) },
      resumed.callback,
      resumed.done,
    );
    stops.push(() => first.abort());
    await resumed.next(2);
    expect(resumed.events.map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED a', 'ADDED b']);
    const fromZero = collector();
    const req = await new k8s.Watch(kc).watch(
      '/api/v1/pods',
      { resourceVersion: '0' },
      fromZero.callback,
      fromZero.done,
    );
    stops.push(() => req.abort());
    await fromZero.next(2);
    expect(fromZero.events.map((e) => e.name).sort()).toEqual(['a', 'b']);
  });

  it('turns selector transitions into ADDED and DELETED', async () => {
    const { server, kc } = await start();
    server.api.create('pods', 'default', pod('a', { app: 'web' }));
    const c = collector();
    const req = await new k8s.Watch(kc).watch(
      '/api/v1/namespaces/default/pods',
      { resourceVersion: String(server.store.resourceVersion()), labelSelector: 'app=web' },
      c.callback,
      c.done,
    );
    stops.push(() => req.abort());
    server.api.patch('pods', 'default', 'a', 'merge', { metadata: { labels: { app: 'other' } } });
    server.api.patch('pods', 'default', 'a', 'merge', { metadata: { labels: { app: 'web' } } });
    server.api.create('pods', 'default', pod('ignored', { app: 'db' }));
    server.api.patch('pods', 'default', 'a', 'merge', { metadata: { labels: { extra: '1' } } });
    await c.next(3);
    expect(c.events.map((e) => `${e.type} ${e.name}`)).toEqual(['DELETED a', 'ADDED a', 'MODIFIED a']);
  });

  it('answers a resourceVersion older than the window with an in-stream 410, and nextWatchGone with HTTP 410', async () => {
    const { server, kc } = await start();
    const old = server.store.resourceVersion();
    server.api.create('pods', 'default', pod('a'));
    server.store.compact();
    const c = collector();
    await new k8s.Watch(kc).watch('/api/v1/pods', { resourceVersion: String(old) }, c.callback, c.done);
    await c.ended();
    expect(c.events).toEqual([expect.objectContaining({ type: 'ERROR', code: 410 })]);

    server.faults.nextWatchGone();
    const h = collector();
    await new k8s.Watch(kc).watch(
      '/api/v1/pods',
      { resourceVersion: String(server.store.resourceVersion()) },
      h.callback,
      h.done,
    );
    expect(await h.ended()).toMatchObject({ statusCode: 410 });
    expect(server.requests.find({ verb: 'watch', status: 410 })).toHaveLength(1);
  });

  it('sends a heartbeat line while idle, or a BOOKMARK when the client allows bookmarks', async () => {
    const { server } = await start(10);
    const read = async (query: string): Promise<string> => {
      const res = await fetch(
        `${server.url}/api/v1/pods?watch=true&resourceVersion=${server.store.resourceVersion()}${query}`,
        { headers: { authorization: `Bearer ${server.token}` } },
      );
      const reader = res.body!.getReader();
      const { value } = await reader.read();
      await reader.cancel();
      return new TextDecoder().decode(value);
    };
    expect(await read('')).toBe('\n');
    const bookmark = JSON.parse(await read('&allowWatchBookmarks=true'));
    expect(bookmark).toMatchObject({
      type: 'BOOKMARK',
      object: { kind: 'Pod', metadata: { resourceVersion: String(server.store.resourceVersion()) } },
    });
  });

  it('ends every open stream on dropWatches', async () => {
    const { server, kc } = await start();
    const c = collector();
    await new k8s.Watch(kc).watch('/api/v1/nodes', {}, c.callback, c.done);
    expect(server.openWatches()).toBe(1);
    expect(server.faults.dropWatches()).toBe(1);
    expect(await c.ended()).toBeNull();
    expect(server.openWatches()).toBe(0);
  });
});

describe('informer', () => {
  it('survives a dropped watch and relists after a 410, reporting what changed while it was away', async () => {
    const { server, kc } = await start();
    const core = kc.makeApiClient(k8s.CoreV1Api);
    server.api.create('pods', 'default', pod('a'));
    const informer = k8s.makeInformer(kc, '/api/v1/pods', () => core.listPodForAllNamespaces());
    const seen: string[] = [];
    const waits: Array<{ want: string; resolve: () => void }> = [];
    const record = (kind: string) => (obj: k8s.V1Pod) => {
      const e = `${kind} ${obj.metadata?.name}`;
      seen.push(e);
      for (const w of waits.filter((x) => x.want === e)) w.resolve();
    };
    const saw = (want: string): Promise<void> =>
      seen.includes(want) ? Promise.resolve() : new Promise((resolve) => waits.push({ want, resolve }));
    informer.on('add', record('add'));
    informer.on('delete', record('delete'));
    informer.on('error', (err) => seen.push(`error ${String(err)}`));
    const connected = (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => (server.openWatches() >= n ? resolve() : setImmediate(check));
        check();
      });
    stops.push(() => informer.stop());
    await informer.start();
    await saw('add a');
    await connected(1);

    // 1. A dropped watch: the informer reconnects from its resourceVersion and misses nothing.
    server.faults.dropWatches();
    server.api.create('pods', 'default', pod('b'));
    await saw('add b');
    await connected(1);
    const listsBefore = server.requests.find({ verb: 'list', resource: 'pods' }).length;

    // 2. A 410 mid-stream: the informer relists and reports the delete and add it missed.
    server.faults.dropWatches({ gone: true });
    server.api.delete('pods', 'default', 'a');
    server.api.create('pods', 'default', pod('c'));
    await saw('delete a');
    await saw('add c');
    await connected(1);
    expect(server.requests.find({ verb: 'list', resource: 'pods' }).length).toBe(listsBefore + 1);
    expect(
      informer
        .list()
        .map((p) => p.metadata?.name)
        .sort(),
    ).toEqual(['b', 'c']);
    expect(seen.filter((s) => s.startsWith('error'))).toEqual([]);
  });
});
