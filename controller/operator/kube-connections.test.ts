// The Kubernetes client reuses its connections: against a plain-http server with verification off and an
// https server with a CA (both give client-node's per-request TLS agent), many requests, one after another
// and several at once, open about as many connections as were in flight at once, not one each.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { selfSignedCert } from '../../sim/apiserver/cert.ts';
import { kubeConfigFor } from '../../sim/kubeconfig.ts';
import { KubeClient } from './kube.ts';

interface Counted {
  readonly url: string;
  readonly ca: string | undefined;
  connections(): number;
  close(): Promise<void>;
}

/** The Authorization header of the last request answered. */
let lastAuthorization: string | undefined;

const answer = (req: IncomingMessage, res: ServerResponse): void => {
  lastAuthorization = req.headers.authorization;
  req.resume();
  req.on('end', () => {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ kind: 'Node', apiVersion: 'v1', metadata: { name: 'n1', resourceVersion: '1' } }));
  });
};

async function countingServer(tls: boolean): Promise<Counted> {
  const cert = tls ? selfSignedCert('127.0.0.1') : undefined;
  const server: Server = cert
    ? createHttpsServer({ key: cert.key, cert: cert.cert }, answer)
    : createHttpServer(answer);
  let connections = 0;
  server.on(tls ? 'secureConnection' : 'connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    ca: cert?.cert,
    connections: () => connections,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let server: Counted | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('KubeClient connections', () => {
  for (const tls of [false, true]) {
    it(`reuses its connections over ${tls ? 'https with a CA' : 'http with verification off'}`, async () => {
      server = await countingServer(tls);
      const kube = new KubeClient(kubeConfigFor({ url: server.url, token: 't', ca: server.ca }));
      for (let i = 0; i < 20; i++) await kube.get('Node', 'n1');
      // The first answer may still hold its connection when the second request goes out.
      expect(server.connections()).toBeLessThanOrEqual(2);
      await Promise.all(Array.from({ length: 4 }, () => kube.get('Node', 'n1')));
      for (let i = 0; i < 20; i++) await kube.patch('Node', 'n1', { metadata: { labels: { a: String(i) } } });
      expect(server.connections()).toBeLessThanOrEqual(5);
    });

    it(`makes one undici Agent for all its requests over ${tls ? 'https with a CA' : 'http with verification off'}, and a new one when the user changes`, async () => {
      server = await countingServer(tls);
      const made = vi.spyOn(KubeConfig.prototype as unknown as { createDispatcher: () => unknown }, 'createDispatcher');
      try {
        const config = kubeConfigFor({ url: server.url, token: 't', ca: server.ca });
        const kube = new KubeClient(config);
        for (let i = 0; i < 10; i++) await kube.get('Node', 'n1');
        await Promise.all(Array.from({ length: 4 }, () => kube.get('Node', 'n1')));
        expect(made).toHaveBeenCalledTimes(1);
        // A rotated token is a new user: a new pool, and the requests still authenticate with the new token.
        (config.getCurrentUser() as { token?: string }).token = 't2';
        for (let i = 0; i < 3; i++) await kube.get('Node', 'n1');
        expect(made).toHaveBeenCalledTimes(2);
        expect(lastAuthorization).toBe('Bearer t2');
      } finally {
        made.mockRestore();
      }
    });
  }
});

// A server that closes a kept-alive connection just as a request arrives on it (its idle timeout firing while
// the request is on the wire) sends a FIN and no answer: undici fails that request with `other side closed`.
// Here the server does it deliberately to the first request that arrives on a reused connection.
interface Cutting {
  readonly url: string;
  /** Requests seen, as `METHOD path`, cut or answered. */
  readonly seen: string[];
  close(): Promise<void>;
}

async function cuttingServer(cut: 'first-reuse' | 'every-reuse' | 'all'): Promise<Cutting> {
  const seen: string[] = [];
  const used = new WeakSet<object>();
  let cutOnce = false;
  const server = createHttpServer((req, res) => {
    seen.push(`${req.method} ${req.url?.split('?')[0]}`);
    const reused = used.has(req.socket);
    used.add(req.socket);
    const doCut = cut === 'all' || (reused && (cut === 'every-reuse' || !cutOnce));
    if (doCut) {
      cutOnce = true;
      req.socket.end();
      return;
    }
    answer(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Long enough for the first answer's connection to go back to the pool, so that the next request reuses it. */
const idle = (): Promise<void> => new Promise((r) => setTimeout(r, 50));

let cutting: Cutting | undefined;
afterEach(async () => {
  await cutting?.close();
  cutting = undefined;
});

describe('KubeClient on a connection the server closes under a request', () => {
  it('asks again for a GET, on another connection', async () => {
    cutting = await cuttingServer('first-reuse');
    const lost: string[] = [];
    const kube = new KubeClient(kubeConfigFor({ url: cutting.url, token: 't' }), {
      onConnectionLost: (method, path, err) =>
        lost.push(`${method} ${path}: ${((err as Error).cause as Error | undefined)?.message}`),
    });
    await kube.get('Node', 'n1');
    await idle();
    const node = await kube.get('Node', 'n1');
    expect(node.metadata.name).toBe('n1');
    expect(lost).toEqual(['GET /api/v1/nodes/n1: other side closed']);
    // The second GET went out twice: cut on the kept-alive connection, answered on a new one.
    expect(cutting.seen).toEqual(['GET /api/v1/nodes/n1', 'GET /api/v1/nodes/n1', 'GET /api/v1/nodes/n1']);
  });

  it('does not send a write again: the caller sees the lost connection', async () => {
    cutting = await cuttingServer('first-reuse');
    const kube = new KubeClient(kubeConfigFor({ url: cutting.url, token: 't' }));
    await kube.get('Node', 'n1');
    await idle();
    const err = await kube.patch('Node', 'n1', { metadata: { labels: { a: 'b' } } }).then(
      () => undefined,
      (e: unknown) => e as Error & { cause?: { code?: string; message?: string } },
    );
    expect(err?.cause?.code).toBe('UND_ERR_SOCKET');
    expect(err?.cause?.message).toBe('other side closed');
    expect(cutting.seen).toEqual(['GET /api/v1/nodes/n1', 'PATCH /api/v1/nodes/n1']);
  });

  it('gives up on a GET after two more attempts', async () => {
    cutting = await cuttingServer('all');
    const kube = new KubeClient(kubeConfigFor({ url: cutting.url, token: 't' }));
    await expect(kube.get('Node', 'n1')).rejects.toThrow('fetch failed');
    expect(cutting.seen).toHaveLength(3);
  });
});
