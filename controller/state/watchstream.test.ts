// The informers' watch reader (watchstream.ts): lines split however the chunks fall, a bounded slice of them per
// turn of the event loop, and every line that is not a watch event or whose handling throws reported, not skipped;
// then the watch request itself against a local HTTP server (events, a bookmark, an HTTP and an in-stream 410, a
// stream that fails midway, liveness), and an informer that reports a bad object and still applies the next event.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { realClock } from '../operator/clock.ts';
import type { KubeClient } from '../operator/kube.ts';
import { newLogger } from '../operator/logger.ts';
import { Informers } from './informers.ts';
import { BoundedWatch, readLines, type BadWatchLine } from './watchstream.ts';

const enc = new TextEncoder();

/** A body that hands out `chunks` (strings or bytes) and then ends, or fails with `fail` after them. */
function body(chunks: Array<string | Uint8Array>, fail?: Error): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < chunks.length) {
        const x = chunks[i++]!;
        c.enqueue(typeof x === 'string' ? enc.encode(x) : x);
      } else if (fail) c.error(fail);
      else c.close();
    },
  });
}

const event = (type: string, name: string, rv: string) =>
  JSON.stringify({
    type,
    object: { kind: 'Pod', metadata: { name, namespace: 'ns', uid: `u-${name}`, resourceVersion: rv } },
  });

describe('reading a watch body a bounded slice at a time', () => {
  it('joins lines split across chunks, a multi-byte character split too, and skips empty lines', async () => {
    const whole = `${event('ADDED', 'café-ü', '1')}\n\n${event('MODIFIED', 'b', '2')}\r\n`;
    const bytes = enc.encode(whole);
    // Cut inside the first line, inside the two-byte é, and right after the first newline.
    const cutAt = [5, whole.indexOf('é') + 1, whole.indexOf('\n') + 1];
    const pieces: Uint8Array[] = [];
    let from = 0;
    for (const c of cutAt) {
      pieces.push(bytes.subarray(from, c));
      from = c;
    }
    pieces.push(bytes.subarray(from));
    const lines: string[] = [];
    const end = await readLines(body(pieces), (l) => lines.push(l));
    expect(lines.map((l) => JSON.parse(l).object.metadata.name)).toEqual(['café-ü', 'b']);
    expect(end.partialBytes).toBe(0);
  });

  it('hands on no unterminated last line, and says how many bytes it had', async () => {
    const lines: string[] = [];
    const end = await readLines(body([`${event('ADDED', 'a', '1')}\n{"type":"ADD`, 'ED","obj']), (l) => lines.push(l));
    expect(lines).toHaveLength(1);
    expect(end.partialBytes).toBe('{"type":"ADDED","obj'.length);
  });

  it('fails with the stream error after handing on the lines before it', async () => {
    const lines: string[] = [];
    const err = new Error('connection reset');
    await expect(
      readLines(body([`${event('ADDED', 'a', '1')}\n${event('ADDED', 'b', '2')}\n{"ty`], err), (l) => lines.push(l)),
    ).rejects.toBe(err);
    expect(lines).toHaveLength(2);
  });

  it('hands a large chunk on over several turns: a probe scheduled on the first line runs after the first slice', async () => {
    const n = 300;
    const chunk = Array.from({ length: n }, (_, i) => `${event('ADDED', `p${i}`, String(i + 1))}\n`).join('');
    const seen: string[] = [];
    let probes = 0;
    const probe = (): void => {
      seen.push('probe');
      if (++probes < 10) setImmediate(probe);
    };
    await readLines(
      body([chunk]),
      (l) => {
        if (seen.length === 0) setImmediate(probe);
        seen.push(JSON.parse(l).object.metadata.name);
      },
      { limits: { lines: 64, bytes: 1 << 20 } },
    );
    const lines = seen.filter((s) => s !== 'probe');
    expect(lines).toHaveLength(n);
    // Between slices the loop turns: the probe (re-scheduling itself each turn) runs after lines 64, 128, 192, 256.
    const at = seen.flatMap((s, i) => (s === 'probe' ? [seen.slice(0, i).filter((x) => x !== 'probe').length] : []));
    expect(at.slice(0, 4)).toEqual([64, 128, 192, 256]);
  });

  it('reads the body on while the lines wait their turn (left unread, undici copies the socket backlog at each resume)', async () => {
    let pulled = 0;
    const n = 20;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (pulled < n) c.enqueue(enc.encode(`${event('ADDED', `p${pulled}`, String(++pulled))}\n`));
        else c.close();
      },
    });
    const pulledAt: number[] = [];
    await readLines(stream, () => pulledAt.push(pulled), { limits: { lines: 1, bytes: 1 << 20 } });
    expect(pulledAt).toHaveLength(n);
    // One line a turn; between the first turns the whole body is read (read a line at a time, the stream stays one
    // chunk ahead of the lines handed on).
    expect(pulledAt[2]).toBe(n);
  });

  it('counts bytes too: lines of 1 KiB with a 4 KiB slice yield every 4 lines', async () => {
    const line = (i: number) =>
      `{"type":"ADDED","object":{"metadata":{"name":"${String(i).padStart(3, '0')}${'x'.repeat(980)}"}}}\n`;
    const seen: string[] = [];
    let probes = 0;
    const probe = (): void => {
      seen.push('probe');
      if (++probes < 5) setImmediate(probe);
    };
    await readLines(
      body([Array.from({ length: 12 }, (_, i) => line(i)).join('')]),
      (l) => {
        if (seen.length === 0) setImmediate(probe);
        seen.push(l.slice(0, 4));
      },
      { limits: { lines: 1_000, bytes: 4 * 1024 } },
    );
    const at = seen.flatMap((s, i) => (s === 'probe' ? [seen.slice(0, i).filter((x) => x !== 'probe').length] : []));
    expect(at.slice(0, 2)).toEqual([4, 8]);
  });
});

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

async function serve(handler: Handler): Promise<KubeConfig> {
  server = createServer(handler);
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

interface Seen {
  events: Array<[string, unknown]>;
  bad: BadWatchLine[];
  done: Promise<unknown>;
}

function watchOnce(kc: KubeConfig, livenessMs?: number, onEvent?: (phase: string, obj: unknown) => void): Seen {
  const seen: Seen = { events: [], bad: [], done: Promise.resolve() };
  const w = new BoundedWatch(kc, (b) => seen.bad.push(b), livenessMs);
  seen.done = new Promise((resolve) => {
    void w.watch(
      '/api/v1/pods',
      { resourceVersion: '7' },
      (phase, obj) => {
        onEvent?.(phase, obj);
        seen.events.push([phase, obj]);
      },
      resolve,
    );
  });
  return seen;
}

describe('the watch request', () => {
  it('sends the query and the credentials, hands on events and bookmarks in order, reports a cut last line, and ends with done(null)', async () => {
    let asked: IncomingMessage | undefined;
    const kc = await serve((req, res) => {
      asked = req;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`${event('ADDED', 'a', '8')}\n`);
      res.write(`{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"9"}}}\n`);
      res.end(`${event('DELETED', 'a', '10')}\n{"type":"ADDED","obj`);
    });
    const seen = watchOnce(kc);
    expect(await seen.done).toBeNull();
    expect(asked?.url).toBe('/api/v1/pods?watch=true&resourceVersion=7');
    expect(asked?.headers.authorization).toBe('Bearer t');
    expect(
      seen.events.map(([p, o]) => [p, (o as { metadata: { resourceVersion: string } }).metadata.resourceVersion]),
    ).toEqual([
      ['ADDED', '8'],
      ['BOOKMARK', '9'],
      ['DELETED', '10'],
    ]);
    // The unterminated last line is reported, not handed on and not dropped in silence.
    expect(seen.bad).toHaveLength(1);
    expect(String(seen.bad[0]!.err)).toContain('ended inside an event (20 bytes');
  });

  it('fails with statusCode 410 on an HTTP 410 (ListWatch relists on it), and hands on an in-stream 410 ERROR', async () => {
    let n = 0;
    const kc = await serve((_req, res) => {
      if (n++ === 0) {
        res.writeHead(410, { 'content-type': 'application/json' });
        res.end('{"kind":"Status","code":410,"reason":"Gone"}');
        return;
      }
      res.writeHead(200);
      res.end(`{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}}\n`);
    });
    const first = watchOnce(kc);
    expect(await first.done).toMatchObject({ statusCode: 410 });
    expect(first.events).toEqual([]);
    const second = watchOnce(kc);
    expect(await second.done).toBeNull();
    expect(second.events).toEqual([['ERROR', { kind: 'Status', code: 410, reason: 'Expired' }]]);
  });

  it('ends with the error of a stream cut midway, after the events before it', async () => {
    const kc = await serve((_req, res) => {
      res.writeHead(200);
      res.write(`${event('ADDED', 'a', '8')}\n{"type":"ADDED","obj`);
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const seen = watchOnce(kc);
    const err = await seen.done;
    expect(err).toBeTruthy();
    expect(seen.events).toHaveLength(1);
  });

  it('ends a silent watch with a TimeoutError (ListWatch reconnects at once on it)', async () => {
    const kc = await serve((_req, res) => {
      res.writeHead(200);
      res.write(`${event('ADDED', 'a', '8')}\n`);
    });
    const seen = watchOnce(kc, 100);
    expect(await seen.done).toMatchObject({ name: 'TimeoutError' });
    expect(seen.events).toHaveLength(1);
  });

  it('reports a line that is no event and an event whose handling throws, and still hands on the next', async () => {
    const kc = await serve((_req, res) => {
      res.writeHead(200);
      res.write('not json\n');
      res.write('{"type":"ADDED"}\n');
      res.write(`${event('ADDED', 'boom', '8')}\n`);
      res.end(`${event('ADDED', 'fine', '9')}\n`);
    });
    const seen = watchOnce(kc, undefined, (_p, o) => {
      if ((o as { metadata: { name: string } }).metadata.name === 'boom')
        throw new Error('spec.containers: not a list');
    });
    expect(await seen.done).toBeNull();
    expect(seen.bad.map((b) => b.stage)).toEqual(['decode', 'decode', 'handle']);
    expect(seen.bad[0]!.line).toBe('not json');
    expect(seen.bad[2]!.object).toMatchObject({ metadata: { name: 'boom' } });
    expect(seen.events.map(([, o]) => (o as { metadata: { name: string } }).metadata.name)).toEqual(['fine']);
  });
});

describe('an informer given a bad object', () => {
  it('logs it with kind, namespace, name and field, counts it, and still applies the next event', async () => {
    const kc = await serve((_req, res) => {
      res.writeHead(200);
      res.write(
        `{"type":"ADDED","object":{"metadata":{"name":"bad","namespace":"ns","uid":"u1","resourceVersion":"2","labels":5}}}\n`,
      );
      res.write(`${event('ADDED', 'explode', '3')}\n`);
      res.write(`${event('ADDED', 'good', '4')}\n`);
    });
    const lines: Array<Record<string, unknown>> = [];
    const rejected: string[] = [];
    const informers = new Informers({
      kube: { list: async () => ({ items: [], metadata: { resourceVersion: '1' } }) } as unknown as KubeClient,
      kubeConfig: kc,
      clock: realClock,
      log: newLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } }),
      onRejected: (kind, stage) => rejected.push(`${kind}/${stage}`),
    });
    const applied: string[] = [];
    informers.add(
      'Pod',
      {
        apply: (o) => {
          // As cluster state would if a handler met something it cannot take.
          if (o.metadata.name === 'explode') throw new Error('spec.nodeName: not a string');
          applied.push(o.metadata.name!);
        },
        remove: () => {},
      },
      {
        transform: (o) => {
          // As a parser naming the field it failed on would throw.
          if (o.metadata.labels !== undefined && typeof o.metadata.labels !== 'object')
            throw Object.assign(new Error('must be a map'), { path: 'metadata.labels' });
          return o;
        },
      },
    );
    try {
      await informers.start();
      for (let i = 0; i < 200 && applied.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(applied).toEqual(['good']);
      expect(rejected).toEqual(['Pod/transform', 'Pod/handle']);
      const report = lines.find((l) => l['level'] === 'ERROR');
      expect(report).toMatchObject({
        kind: 'Pod',
        namespace: 'ns',
        name: 'bad',
        field: 'metadata.labels',
        stage: 'transform',
      });
      expect(String(report?.['error'])).toContain('must be a map');
      expect(lines.filter((l) => l['level'] === 'ERROR')[1]).toMatchObject({ name: 'explode', stage: 'handle' });
    } finally {
      informers.stop();
    }
  });
});
