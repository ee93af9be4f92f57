// The operator's HTTP endpoints: /metrics (Prometheus text) on the metrics port, /healthz and /readyz on
// the health-probe port. Ready means every informer has listed once (cluster state can be trusted); while
// not, /readyz answers 503 with one line per kind that has not synced. /metrics is written piece by piece as the
// exposition is made (at 5,000 nodes it is over 100 MB: joined into one string and encoded at once, it would hold
// the event loop for as long as that takes).
import { createServer, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Readiness {
  readonly ready: boolean;
  /** What is not ready, one line each (the 503 body). */
  readonly detail: readonly string[];
}

interface Endpoints {
  /** The exposition in pieces (Metrics.exposition). */
  readonly metrics?: () => AsyncIterable<string>;
  readonly ready?: () => Readiness;
}

export interface HttpServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Writes the exposition as its pieces come, waiting for the socket to drain when its buffer is full. A failure
 * before the first piece is a 500 with the error; one after it ends the response early (the status is sent).
 */
async function writeMetrics(res: ServerResponse, pieces: AsyncIterable<string>): Promise<void> {
  let started = false;
  try {
    for await (const piece of pieces) {
      if (!started) res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      started = true;
      if (!res.write(piece)) await new Promise((r) => res.once('drain', r));
    }
    res.end();
  } catch (e) {
    if (started) res.destroy(e instanceof Error ? e : new Error(String(e)));
    else {
      res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(String(e));
    }
  }
}

export async function serve(port: number, endpoints: Endpoints, host = '0.0.0.0'): Promise<HttpServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (code: number, body: string, type = 'text/plain; charset=utf-8'): void => {
      res.writeHead(code, { 'content-type': type });
      res.end(body);
    };
    if (path === '/metrics' && endpoints.metrics) void writeMetrics(res, endpoints.metrics());
    else if (path === '/healthz') send(200, 'ok');
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
