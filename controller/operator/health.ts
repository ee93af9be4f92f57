// The operator's HTTP endpoints: /metrics (Prometheus text) on the metrics port, /healthz and /readyz on
// the health-probe port. Ready means every informer has listed once (cluster state can be trusted); while
// not, /readyz answers 503 with one line per kind that has not synced.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Readiness {
  readonly ready: boolean;
  /** What is not ready, one line each (the 503 body). */
  readonly detail: readonly string[];
}

interface Endpoints {
  readonly metrics?: () => Promise<string>;
  readonly ready?: () => Readiness;
}

export interface HttpServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function serve(port: number, endpoints: Endpoints, host = '0.0.0.0'): Promise<HttpServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (code: number, body: string, type = 'text/plain; charset=utf-8'): void => {
      res.writeHead(code, { 'content-type': type });
      res.end(body);
    };
    if (path === '/metrics' && endpoints.metrics) {
      endpoints.metrics().then(
        (t) => send(200, t, 'text/plain; version=0.0.4; charset=utf-8'),
        (e: unknown) => send(500, String(e)),
      );
    } else if (path === '/healthz') send(200, 'ok');
    else if (path === '/readyz' && endpoints.ready) {
      const r = endpoints.ready();
      send(r.ready ? 200 : 503, r.ready ? 'ok' : `cluster state has not synced\n${r.detail.join('\n')}\n`);
    } else send(404, 'not found');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
