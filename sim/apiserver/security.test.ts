// The simulated API server is safe to leave running: no request can reach Object.prototype, every
// request needs the token and a loopback Host, writes need a JSON or YAML body under 3 MiB, and a
// watcher that does not read is dropped instead of growing the server's memory.
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../clock.ts';
import { kubeConfigFor } from '../kubeconfig.ts';
import { MAX_BODY_BYTES, startApiServer, type ApiServer } from './index.ts';
import * as k8s from '@kubernetes/client-node';

let server: ApiServer;
const PROTO_KEYS = Object.getOwnPropertyNames(Object.prototype).sort();

beforeEach(async () => {
  server = await startApiServer({ clock: manualClock() });
  server.api.create('pods', 'default', {
    metadata: { name: 'web' },
    spec: { containers: [{ name: 'c', image: 'pause' }] },
  });
  server.api.create('nodepools', undefined, { metadata: { name: 'default' }, spec: { template: { spec: {} } } });
});

afterEach(async () => {
  await server.close();
});

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

/** A raw request (any Host, headers and body), with the server's token unless `headers` replaces it. */
function call(
  method: string,
  path: string,
  body?: string | Buffer,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: {
          authorization: `Bearer ${server.token}`,
          // Node sends a DELETE body unframed unless told its length.
          ...(body !== undefined
            ? {
                'content-type': 'application/json',
                ...(headers['transfer-encoding'] ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
              }
            : {}),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            body: text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : { text },
          });
        });
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const POD = '/api/v1/namespaces/default/pods/web';
const POOL = '/apis/karpenter.sh/v1/nodepools/default';
const MEDIA = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

/** Object.prototype and a fresh object show nothing a request put there, and the store still lists. */
function prototypeUntouched(): void {
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTO_KEYS);
  const fresh: Record<string, unknown> = {};
  expect(fresh['polluted']).toBeUndefined();
  expect(Object.prototype.constructor).toBe(Object);
  expect(server.api.list('nodepools', undefined).items.map((p) => p.metadata.name)).toEqual(['default']);
}

describe('no request reaches Object.prototype', () => {
  afterEach(prototypeUntouched);

  it('JSON patch: a path through __proto__ is refused; constructor and prototype are plain fields', async () => {
    const patch = (ops: unknown[] | string) =>
      call('PATCH', POD, typeof ops === 'string' ? ops : JSON.stringify(ops), { 'content-type': MEDIA.json });
    for (const ops of [
      [{ op: 'add', path: '/__proto__/polluted', value: 'yes' }],
      [{ op: 'replace', path: '/metadata/__proto__', value: { polluted: 'yes' } }],
      [{ op: 'copy', from: '/__proto__', path: '/spec/x' }],
      [{ op: 'move', from: '/metadata', path: '/__proto__' }],
    ]) {
      const r = await patch(ops);
      expect(r.status, JSON.stringify(ops)).toBe(400);
      expect(String(r.body['message'])).toContain('__proto__');
    }
    // Inherited members are not there to walk through: 422, the path does not exist.
    expect((await patch([{ op: 'add', path: '/constructor/prototype/polluted', value: 'yes' }])).status).toBe(422);
    expect((await patch([{ op: 'add', path: '/spec/prototype/polluted', value: 'yes' }])).status).toBe(422);
    // As own fields they are data like any other.
    expect(
      (await patch([{ op: 'add', path: '/spec/constructor', value: { prototype: { polluted: 'yes' } } }])).status,
    ).toBe(200);
    expect((await patch([{ op: 'add', path: '/spec/constructor/prototype/more', value: 1 }])).status).toBe(200);
    const spec = server.api.get('pods', 'default', 'web').spec as Record<string, unknown>;
    expect(Object.hasOwn(spec, 'constructor')).toBe(true);
    expect(spec['constructor']).toEqual({ prototype: { polluted: 'yes', more: 1 } });
    expect(Object.getPrototypeOf(spec)).toBe(Object.prototype);
  });

  for (const type of ['merge', 'strategic'] as const) {
    it(`${type} merge patch: __proto__ is refused at any depth; constructor and prototype are plain fields`, async () => {
      const patch = (text: string) => call('PATCH', POD, text, { 'content-type': MEDIA[type] });
      for (const text of [
        '{"__proto__":{"polluted":"yes"}}',
        '{"spec":{"containers":[{"name":"c","__proto__":{"polluted":"yes"}}]}}',
        '{"metadata":{"labels":{"__proto__":"x"}}}',
      ]) {
        const r = await patch(text);
        expect(r.status, text).toBe(400);
        expect(String(r.body['message'])).toContain('__proto__');
      }
      expect(
        (
          await patch(
            '{"constructor":{"prototype":{"polluted":"yes"}},"metadata":{"labels":{"prototype":"p","constructor":"c"}}}',
          )
        ).status,
      ).toBe(200);
      const pod = server.api.get('pods', 'default', 'web');
      expect(pod['constructor']).toEqual({ prototype: { polluted: 'yes' } });
      expect(pod.metadata.labels).toEqual({ prototype: 'p', constructor: 'c' });
      if (type === 'strategic') {
        // Directives naming inherited members find no field to act on.
        expect(
          (
            await patch(
              '{"$deleteFromPrimitiveList/__proto__":["x"],"$deleteFromPrimitiveList/constructor":["x"],"$retainKeys":["metadata","spec","constructor","__proto__"]}',
            )
          ).status,
        ).toBe(200);
      }
    });
  }

  it('server-side apply (YAML): __proto__ is refused; constructor and prototype are plain fields', async () => {
    const apply = (text: string) => call('PATCH', `${POOL}?fieldManager=t`, text, { 'content-type': MEDIA.apply });
    const refused = await apply(
      'apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\n__proto__:\n  polluted: yes\n',
    );
    expect(refused.status).toBe(400);
    expect(String(refused.body['message'])).toContain('__proto__');
    const ok = await apply(
      'apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  constructor:\n    prototype:\n      polluted: yes\n',
    );
    expect(ok.status).toBe(200);
    expect((server.api.get('nodepools', undefined, 'default').spec as Record<string, unknown>)['constructor']).toEqual({
      prototype: { polluted: 'yes' },
    });
    // A JSON patch on a custom resource, too.
    expect(
      (
        await call('PATCH', POOL, '[{"op":"add","path":"/__proto__/polluted","value":1}]', {
          'content-type': MEDIA.json,
        })
      ).status,
    ).toBe(400);
  });

  it('create and update bodies: __proto__ is refused (JSON and YAML), constructor is a plain field', async () => {
    const created = await call(
      'POST',
      '/api/v1/namespaces/default/configmaps',
      '{"metadata":{"name":"a"},"data":{"__proto__":"x"}}',
    );
    expect(created.status).toBe(400);
    expect(server.api.find('configmaps', 'default', 'a')).toBeUndefined();
    const yaml = await call(
      'POST',
      '/api/v1/namespaces/default/configmaps',
      'metadata:\n  name: a\n__proto__:\n  polluted: yes\n',
      { 'content-type': 'application/yaml' },
    );
    expect(yaml.status).toBe(400);
    const put = await call(
      'PUT',
      POD,
      JSON.stringify({ metadata: { name: 'web' }, spec: { containers: [] } }).replace(
        '"spec"',
        '"__proto__":{"polluted":1},"spec"',
      ),
    );
    expect(put.status).toBe(400);
    const data = await call(
      'POST',
      '/api/v1/namespaces/default/configmaps',
      '{"metadata":{"name":"b"},"data":{"constructor":"c","prototype":"p"}}',
    );
    expect(data.status).toBe(201);
    expect(server.api.get('configmaps', 'default', 'b')['data']).toEqual({ constructor: 'c', prototype: 'p' });
    // An eviction body and delete options are read the same way.
    expect((await call('POST', `${POD}/eviction`, '{"__proto__":{"polluted":1}}')).status).toBe(400);
    expect(
      (await call('DELETE', '/api/v1/namespaces/default/configmaps/b', '{"__proto__":{"polluted":1}}')).status,
    ).toBe(400);
  });

  it('refuses bodies nested deeper than a Kubernetes object needs (400), without a stack overflow', async () => {
    const deep = `{"metadata":{"name":"d"},"data":${'['.repeat(500_000)}${']'.repeat(500_000)}}`;
    const r = await call('POST', '/api/v1/namespaces/default/configmaps', deep);
    expect(r.status).toBe(400);
    expect(String(r.body['message'])).toMatch(/nests deeper than 100 levels/);
  });
});

describe('who may call', () => {
  it('needs the bearer token, except on the anonymous health and version paths', async () => {
    const anonymous = { authorization: '' };
    const none = await call('GET', '/api/v1/namespaces/default/pods', undefined, anonymous);
    expect(none).toMatchObject({ status: 401, body: { kind: 'Status', reason: 'Unauthorized', code: 401 } });
    expect((await call('GET', '/api/v1/pods', undefined, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect(
      (
        await call('POST', '/api/v1/namespaces/default/configmaps', '{"metadata":{"name":"x"}}', {
          authorization: 'Bearer ',
        })
      ).status,
    ).toBe(401);
    expect(server.api.find('configmaps', 'default', 'x')).toBeUndefined();
    for (const path of ['/healthz', '/readyz', '/livez', '/version'])
      expect((await call('GET', path, undefined, anonymous)).status).toBe(200);
    // A wrong token is refused even where no token is needed.
    expect((await call('GET', '/healthz', undefined, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await call('GET', '/api/v1/pods')).status).toBe(200);
    const pods = await kubeConfigFor(server).makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace: 'default' });
    expect(pods.items.map((p) => p.metadata?.name)).toEqual(['web']);
  });

  it('answers anyone when started with the token turned off', async () => {
    const open = await startApiServer({ clock: manualClock(), token: false });
    try {
      expect(open.token).toBeUndefined();
      const res = await fetch(`${open.url}/api/v1/namespaces`);
      expect(res.status).toBe(200);
    } finally {
      await open.close();
    }
  });

  it('refuses a Host that is not a loopback name (a rebound DNS name in a browser)', async () => {
    const port = new URL(server.url).port;
    for (const host of [`evil.example:${port}`, 'evil.example', `127.0.0.1.nip.io:${port}`]) {
      const r = await call('GET', '/api/v1/pods', undefined, { host });
      expect(r.status, `Host: ${host}`).toBe(403);
    }
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'LOCALHOST']) {
      expect((await call('GET', '/api/v1/pods', undefined, { host })).status, host).toBe(200);
    }
  });

  it('refuses writes whose body is not JSON or YAML (a text/plain form post creates nothing)', async () => {
    const cms = '/api/v1/namespaces/default/configmaps';
    const body = '{"metadata":{"name":"form"}}';
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/cbor',
    ]) {
      const r = await call('POST', cms, body, { 'content-type': type });
      expect(r, type).toMatchObject({ status: 415, body: { reason: 'UnsupportedMediaType' } });
    }
    const untyped = await call('POST', cms, body, { 'content-type': '' });
    expect(untyped.status).toBe(415);
    expect(server.api.find('configmaps', 'default', 'form')).toBeUndefined();
    expect((await call('PUT', POD, '{}', { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await call('PATCH', POD, '{}', { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await call('PATCH', POD, '{}', { 'content-type': 'application/vnd.kubernetes.protobuf' })).status).toBe(
      415,
    );
    expect((await call('DELETE', POD, '{}', { 'content-type': 'text/plain' })).status).toBe(415);
    // JSON with parameters, YAML, and a DELETE without a body are fine.
    expect((await call('POST', cms, body, { 'content-type': 'application/json; charset=utf-8' })).status).toBe(201);
    expect(
      (await call('POST', cms, 'metadata:\n  name: yaml\ndata:\n  a: b\n', { 'content-type': 'application/yaml' }))
        .status,
    ).toBe(201);
    expect(server.api.get('configmaps', 'default', 'yaml')['data']).toEqual({ a: 'b' });
    expect((await call('DELETE', `${cms}/yaml`)).status).toBe(200);
  });
});

describe('limits', () => {
  const configMap = (name: string, bytes: number): string =>
    JSON.stringify({ metadata: { name }, data: { blob: 'x'.repeat(bytes) } });

  it('refuses bodies over 3 MiB with 413, declared or streamed, and takes one just under', async () => {
    const cms = '/api/v1/namespaces/default/configmaps';
    const big = await call('POST', cms, configMap('big', MAX_BODY_BYTES));
    expect(big).toMatchObject({
      status: 413,
      body: { reason: 'RequestEntityTooLarge', message: `Request entity too large: limit is ${MAX_BODY_BYTES}` },
    });
    const streamed = await call('POST', cms, Buffer.from(configMap('big', MAX_BODY_BYTES)), {
      'transfer-encoding': 'chunked',
    });
    expect(streamed.status).toBe(413);
    expect(server.api.find('configmaps', 'default', 'big')).toBeUndefined();
    expect((await call('POST', cms, configMap('fits', MAX_BODY_BYTES - 100))).status).toBe(201);
  });

  it('drops watchers that do not read once their unsent events pass the bound; readers keep every event', async () => {
    await server.close();
    server = await startApiServer({ clock: manualClock(), watchBufferBytes: 4 << 20 });
    const url = new URL(server.url);
    const stalled: Socket[] = [];
    for (let i = 0; i < 3; i++) {
      const s = connect(Number(url.port), url.hostname);
      s.write(
        `GET /api/v1/configmaps?watch=true&resourceVersion=${server.store.resourceVersion()} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${server.token}\r\n\r\n`,
      );
      s.pause();
      stalled.push(s);
    }
    const seen: string[] = [];
    const watch = await new k8s.Watch(kubeConfigFor(server)).watch(
      '/api/v1/configmaps',
      { resourceVersion: String(server.store.resourceVersion()) },
      (_t, o: { metadata: { name: string } }) => seen.push(o.metadata.name),
      () => {},
    );
    await until(() => server.openWatches() === 4, 'four watches');
    // 40 MiB of changes: more than the kernel's socket buffers hold for the stalled clients, plus the bound.
    // The reader takes each change before the next: it keeps up; the stalled ones fall behind.
    for (let i = 0; i < 40; i++) {
      server.api.create('configmaps', 'default', JSON.parse(configMap(`cm-${i}`, 1 << 20)));
      await until(
        () => seen.length === i + 1,
        `event ${i} (dropped ${server.droppedWatches()}, open ${server.openWatches()})`,
      );
    }
    expect(server.droppedWatches()).toBe(3);
    expect(server.openWatches()).toBe(1);
    expect(seen).toEqual(Array.from({ length: 40 }, (_, i) => `cm-${i}`));
    watch.abort();
    for (const s of stalled) s.destroy();
  });
});

async function until(done: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
