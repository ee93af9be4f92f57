// The simulated API server keeps an idle connection as kube-apiserver does: 90 s, and without telling the client
// (Go's http.Server sends no Keep-Alive header). With Node's default (5 s, advertised as `Keep-Alive: timeout=5`)
// undici closed its side after 3 s, and a client whose event loop ran 2 s late sent writes on connections the
// server was closing: they failed with `other side closed`, which only a GET may be sent again after.
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '../clock.ts';
import { startApiServer, type ApiServer } from './index.ts';

let server: ApiServer | undefined;
let socket: Socket | undefined;
afterEach(async () => {
  socket?.destroy();
  await server?.close();
  server = socket = undefined;
});

/** One HTTP/1.1 GET on the socket; resolves with the response head once the whole (small) response is in. */
function get(s: Socket, host: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text.slice(0, head))?.[1];
      if (head >= 0 && length !== undefined && text.length >= head + 4 + Number(length)) {
        s.off('data', onData);
        s.off('end', onEnd);
        resolve(text.slice(0, head));
      }
    };
    const onEnd = (): void => reject(new Error(`connection closed by the server before answering GET ${path}`));
    s.on('data', onData);
    s.once('end', onEnd);
    s.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer t\r\n\r\n`);
  });
}

describe('simulated API server keep-alive', () => {
  it('keeps an idle connection open past Node’s 5 s and does not advertise a timeout', async () => {
    server = await startApiServer({ clock: manualClock(), token: 't' });
    const { host, hostname, port } = new URL(server.url);
    socket = connect(Number(port), hostname);
    await new Promise<void>((r) => socket!.once('connect', () => r()));
    const first = await get(socket, host, '/api/v1/namespaces/default');
    expect(first).toMatch(/^HTTP\/1\.1 200/);
    expect(first).not.toMatch(/^keep-alive:/im);
    expect(first).not.toMatch(/^connection: close/im);
    await new Promise((r) => setTimeout(r, 6_000));
    const second = await get(socket, host, '/api/v1/namespaces/default');
    expect(second).toMatch(/^HTTP\/1\.1 200/);
  }, 30_000);
});
