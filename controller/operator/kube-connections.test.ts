// The Kubernetes client reuses its connections: against a plain-http server with verification off and an
// https server with a CA (both give client-node's per-request TLS agent), many requests, one after another
// and several at once, open about as many connections as were in flight at once, not one each.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { selfSignedCert } from '../../sim/apiserver/cert.ts';
import { kubeConfigFor } from '../../sim/kubeconfig.ts';
import { KubeClient } from './kube.ts';

interface Counted {
  readonly url: string;
  readonly ca: string | undefined;
  connections(): number;
  close(): Promise<void>;
}

const answer = (req: IncomingMessage, res: ServerResponse): void => {
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
  }
});
