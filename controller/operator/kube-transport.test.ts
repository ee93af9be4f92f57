// How the Kubernetes client sends a request on its shared connection pool: with undici's request() rather than
// client-node's fetch (which builds a WHATWG Request, Response, their headers and streams for every request),
// carrying the same method, path, query, headers and body, reading error answers as before, and bounding the
// reading of an answer by the request's timeout as well as its start.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { IsomorphicFetchHttpLibrary } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { selfSignedCert } from '../../sim/apiserver/cert.ts';
import { kubeConfigFor } from '../../sim/kubeconfig.ts';
import { KubeClient, KubeError } from './kube.ts';
import { isRequestTimeout } from './timeouts.ts';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly contentType: string | undefined;
  readonly authorization: string | undefined;
  readonly body: string;
}

interface Recording {
  readonly url: string;
  readonly ca: string | undefined;
  readonly seen: Seen[];
  /** Answers whose client hung up before the server finished them. */
  abandoned(): number;
  close(): Promise<void>;
}

const json = (res: ServerResponse, code: number, body: unknown): void => {
  res.writeHead(code, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};

/**
 * Answers GET .../missing with a 404 Status, GET .../stalled with its headers and half a body and then nothing,
 * and anything else with a Node named after the last path segment or, for a create, its body's (a write echoes
 * its body's labels).
 */
function respond(req: IncomingMessage, res: ServerResponse, body: string, abandoned: () => void): void {
  const name = (req.url ?? '').split('?')[0]!.split('/').pop();
  if (name === 'missing') {
    json(res, 404, { kind: 'Status', status: 'Failure', message: 'nodes "missing" not found', reason: 'NotFound' });
  } else if (name === 'stalled') {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '1000' });
    res.write('{"kind":"Node",');
    res.on('close', abandoned);
  } else {
    const sent = body ? (JSON.parse(body) as { metadata?: { name?: string; labels?: unknown } }).metadata : undefined;
    const metadata = { name: req.method === 'POST' ? sent?.name : name, labels: sent?.labels };
    json(res, req.method === 'POST' ? 201 : 200, { kind: 'Node', metadata });
  }
}

async function recordingServer(tls: boolean): Promise<Recording> {
  const seen: Seen[] = [];
  let abandoned = 0;
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        contentType: req.headers['content-type'],
        authorization: req.headers.authorization,
        body,
      });
      respond(req, res, body, () => abandoned++);
    });
  };
  const cert = tls ? selfSignedCert('127.0.0.1') : undefined;
  const server: Server = cert
    ? createHttpsServer({ key: cert.key, cert: cert.cert }, handler)
    : createHttpServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ca: cert?.cert,
    seen,
    abandoned: () => abandoned,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let server: Recording | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  vi.restoreAllMocks();
});

describe('KubeClient transport', () => {
  for (const tls of [false, true]) {
    it(`sends every request with the pool's request(), not fetch, over ${tls ? 'https with a CA' : 'http with verification off'}`, async () => {
      server = await recordingServer(tls);
      const fetched = vi.spyOn(IsomorphicFetchHttpLibrary.prototype, 'send');
      const kube = new KubeClient(kubeConfigFor({ url: server.url, token: 't', ca: server.ca }), {
        fieldManager: 'fm',
      });
      expect((await kube.get('Node', 'n1')).metadata.name).toBe('n1');
      const created = await kube.create('Node', { metadata: { name: 'n2', labels: { a: 'b' } } });
      expect(created.metadata).toEqual({ name: 'n2', labels: { a: 'b' } });
      await kube.patch('Node', 'n1', { metadata: { labels: { c: 'd' } } });
      await kube.delete('Node', 'n1', { uid: 'u1' });
      expect(fetched).not.toHaveBeenCalled();
      expect(server.seen.map((s) => [s.method, s.url, s.contentType ?? null])).toEqual([
        ['GET', '/api/v1/nodes/n1', null],
        ['POST', '/api/v1/nodes?fieldManager=fm', 'application/json'],
        ['PATCH', '/api/v1/nodes/n1?fieldManager=fm', 'application/merge-patch+json'],
        ['DELETE', '/api/v1/nodes/n1', 'application/json'],
      ]);
      expect(new Set(server.seen.map((s) => s.authorization))).toEqual(new Set(['Bearer t']));
      expect(JSON.parse(server.seen[1]!.body)).toEqual({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'n2', labels: { a: 'b' } },
      });
      expect(JSON.parse(server.seen[3]!.body)).toMatchObject({ kind: 'DeleteOptions', preconditions: { uid: 'u1' } });
    });
  }

  it("reads an error answer into a KubeError with the server's code, reason and message", async () => {
    server = await recordingServer(false);
    const kube = new KubeClient(kubeConfigFor({ url: server.url, token: 't' }));
    const err = await kube.get('Node', 'missing').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(KubeError);
    expect(err).toMatchObject({ code: 404, reason: 'NotFound' });
    expect((err as Error).message).toBe('GET /api/v1/nodes/missing: nodes "missing" not found');
    expect(await kube.find('Node', 'missing')).toBeUndefined();
  });

  it('fails an answer whose body stops coming with a RequestTimeoutError, and hangs up', async () => {
    server = await recordingServer(false);
    const kube = new KubeClient(kubeConfigFor({ url: server.url, token: 't' }), { requestTimeoutMs: 150 });
    const err = await kube.get('Node', 'stalled').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isRequestTimeout(err)).toBe(true);
    expect(err).toMatchObject({ operation: 'get Node', timeoutMs: 150 });
    await new Promise((r) => setTimeout(r, 50));
    expect(server.abandoned()).toBe(1);
  });
});
