// A loopback HTTP server that accepts every connection and request and never answers: what a hung API
// server, EC2 endpoint or middlebox looks like to a client. The timeout drills point real clients at it.
//
//   const silent = await silentServer();
//   ... a client with endpoint silent.url ...
//   expect(silent.requests()).toHaveLength(3);
//   await silent.close();
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface SilentRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  /** Wall-clock ms (performance.now()) when it arrived. */
  readonly at: number;
}

export interface SilentServer {
  readonly url: string;
  requests(): readonly SilentRequest[];
  /** Requests whose client gave up (closed the connection) so far. */
  abandoned(): number;
  close(): Promise<void>;
}

export async function silentServer(): Promise<SilentServer> {
  const seen: SilentRequest[] = [];
  const held = new Set<ServerResponse>();
  let abandoned = 0;
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, at: performance.now() });
    req.resume();
    held.add(res);
    res.on('close', () => {
      if (held.delete(res)) abandoned++;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => seen,
    abandoned: () => abandoned,
    close: () =>
      new Promise<void>((resolve) => {
        held.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
