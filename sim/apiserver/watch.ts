// Watch streams: chunked NDJSON, one {"type","object"} per line, as the real server sends them.
//
// - resourceVersion "" or "0" starts with a synthetic ADDED for every matching object; a number N replays
//   the changes after N from the store's window, then follows live changes. N older than the window gets
//   an in-stream ERROR 410 (reason Expired) and the stream ends, as upstream does; clients relist.
// - Selectors are applied per event with upstream's transitions: an object that starts matching arrives
//   as ADDED, one that stops matching as DELETED.
// - A blank line goes out every heartbeat interval (wall clock): client-node drops a watch that is silent
//   for 30 s. With allowWatchBookmarks=true a BOOKMARK carrying the current resourceVersion goes instead.
// - Events are queued synchronously as the store records them, so every stream sees them in order, and
//   written as the socket takes them (its 'drain'), never faster: a client that does not read holds its
//   queue, not a growing socket buffer. A change is serialized once for every stream it goes to.
// - A watcher whose unsent live events would exceed a bound (bytes) is dropped, as the real API server
//   closes a watcher whose buffer stays full: a slow reader cannot make the server hold the store many
//   times over. One event always fits a stream that has nothing pending.
//   Its client reconnects from its last resourceVersion. The initial ADDED events and a replay are
//   written from the shared frozen objects as the socket drains and do not count toward the bound.
import type { ServerResponse } from 'node:http';
import { errors } from './errors.ts';
import type { ResourceInfo } from './resources.ts';
import type { ListFilter, Store } from './store.ts';
import { toTable } from './table.ts';
import type { KObject, StoreEvent } from './types.ts';

interface WatchParams {
  readonly namespace: string | undefined;
  readonly filter: ListFilter;
  readonly resourceVersion: string | undefined;
  readonly bookmarks: boolean;
  readonly table: boolean;
  /** Ends the stream after this many wall-clock seconds, if given. */
  readonly timeoutSeconds: number | undefined;
}

const NEWLINE = Buffer.from('\n');

interface WatchHubOptions {
  /** Wall-clock ms between heartbeats. */
  readonly heartbeatMs: number;
  /** A stream whose queued live events exceed this many bytes is dropped. */
  readonly maxBufferBytes: number;
}

/**
 * A line ready to write (a live event, serialized once into a Buffer that every stream's socket shares), or
 * an object serialized when its turn comes.
 */
type Pending = Buffer | { readonly type: string; readonly object: unknown };

interface Stream {
  readonly r: ResourceInfo;
  readonly res: ServerResponse;
  readonly params: WatchParams;
  readonly timers: NodeJS.Timeout[];
  /** Lines not yet handed to the socket, from `head` on. */
  readonly queue: Pending[];
  head: number;
  /** Bytes of the serialized lines in the queue (what the bound counts). */
  queued: number;
  /** The socket asked to wait for 'drain'. */
  waiting: boolean;
  /** End the response once the queue is written. */
  ending: boolean;
}

export class WatchHub {
  private readonly streams = new Map<string, Set<Stream>>();
  private readonly unsubscribe: () => void;
  /** Streams dropped because their client did not keep up. */
  dropped = 0;

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    private readonly opts: WatchHubOptions,
  ) {
    this.unsubscribe = store.subscribe((e) => this.dispatch(e));
  }

  /** Number of open streams. */
  count(): number {
    let n = 0;
    for (const s of this.streams.values()) n += s.size;
    return n;
  }

  /** Starts a watch response. Errors before the head is sent (bad resourceVersion) are thrown. */
  open(r: ResourceInfo, res: ServerResponse, params: WatchParams): void {
    const rvText = params.resourceVersion ?? '';
    let replay: StoreEvent[] | 'gone' = [];
    let initial: KObject[] = [];
    if (rvText === '' || rvText === '0') initial = this.store.list(r.key, params.filter);
    else {
      const rv = Number(rvText);
      if (!Number.isInteger(rv) || rv < 0)
        throw errors.badRequest(`resourceVersion "${rvText}" is not a valid resource version`);
      replay = this.store.eventsSince(rv);
    }
    res.writeHead(200, {
      'content-type': 'application/json',
      'cache-control': 'no-cache, private',
      'transfer-encoding': 'chunked',
    });
    res.flushHeaders();
    const stream: Stream = { r, res, params, timers: [], queue: [], head: 0, queued: 0, waiting: false, ending: false };
    res.on('close', () => this.forget(stream, true));
    if (replay === 'gone') {
      this.push(stream, {
        type: 'ERROR',
        object: errors.expired(`too old resource version: ${rvText} (${this.store.resourceVersion()})`).toStatus(),
      });
      this.end(stream);
      return;
    }
    for (const o of initial) this.push(stream, { type: 'ADDED', object: o });
    for (const e of replay) if (e.resource === r.key) this.deliver(stream, e, undefined);
    let set = this.streams.get(r.key);
    if (!set) this.streams.set(r.key, (set = new Set()));
    set.add(stream);
    stream.timers.push(setInterval(() => this.heartbeat(stream), this.opts.heartbeatMs));
    if (params.timeoutSeconds && params.timeoutSeconds > 0)
      stream.timers.push(setTimeout(() => this.end(stream), params.timeoutSeconds * 1000));
  }

  /** Ends every stream, optionally after an in-stream 410 (so informers relist). Returns how many. */
  dropAll(gone: boolean): number {
    let n = 0;
    for (const set of this.streams.values()) {
      for (const s of [...set]) {
        if (gone)
          this.push(s, {
            type: 'ERROR',
            object: errors.expired(`too old resource version (forced by the simulator)`).toStatus(),
          });
        this.end(s);
        n++;
      }
    }
    return n;
  }

  close(): void {
    this.dropAll(false);
    this.unsubscribe();
  }

  private dispatch(e: StoreEvent): void {
    const set = this.streams.get(e.resource);
    if (!set) return;
    const lines = new Map<string, Buffer>();
    for (const s of set) this.deliver(s, e, lines);
  }

  /**
   * Queues what a change means to one stream. `lines` (live events) shares each serialized line between
   * streams and makes the event count toward the stream's bound; replayed events are queued as objects.
   */
  private deliver(s: Stream, e: StoreEvent, lines: Map<string, Buffer> | undefined): void {
    const type = transition(
      e,
      this.store.selects(e.object, s.params.filter),
      e.old !== undefined && this.store.selects(e.old, s.params.filter),
    );
    if (!type) return;
    if (!lines) return this.push(s, { type, object: e.object });
    let line = s.params.table ? Buffer.from(this.line(s, { type, object: e.object })) : lines.get(type);
    if (line === undefined) lines.set(type, (line = Buffer.from(this.line(s, { type, object: e.object }))));
    const pending = s.queued + s.res.writableLength;
    if (pending > 0 && pending + line.length > this.opts.maxBufferBytes) return this.drop(s);
    s.queued += line.length;
    this.push(s, line);
  }

  private line(s: Stream, p: Exclude<Pending, Buffer>): string {
    const obj =
      s.params.table && p.type !== 'ERROR' && p.type !== 'BOOKMARK'
        ? toTable(s.r, [p.object as KObject], this.now(), (p.object as KObject).metadata.resourceVersion ?? '')
        : p.object;
    return `${JSON.stringify({ type: p.type, object: obj })}\n`;
  }

  private push(s: Stream, p: Pending): void {
    s.queue.push(p);
    this.pump(s);
  }

  /** Writes queued lines while the socket takes them; resumes on 'drain'. */
  private pump(s: Stream): void {
    const res = s.res;
    while (!s.waiting && s.head < s.queue.length) {
      if (res.writableEnded || res.destroyed) return;
      const p = s.queue[s.head++]!;
      const ready = Buffer.isBuffer(p);
      if (ready) s.queued -= p.length;
      if (!res.write(ready ? p : this.line(s, p))) {
        s.waiting = true;
        res.once('drain', () => {
          s.waiting = false;
          this.pump(s);
        });
      }
    }
    if (s.head === s.queue.length) {
      s.queue.length = 0;
      s.head = 0;
      if (s.ending && !s.waiting && !res.writableEnded) res.end();
    }
  }

  private heartbeat(s: Stream): void {
    if (s.res.writableEnded || s.res.destroyed || s.waiting || s.head < s.queue.length) return;
    if (s.params.bookmarks) {
      this.push(s, {
        type: 'BOOKMARK',
        object: {
          kind: s.r.kind,
          apiVersion: s.r.apiVersion,
          metadata: { resourceVersion: String(this.store.resourceVersion()) },
        },
      });
    } else {
      s.queued += 1;
      this.push(s, NEWLINE);
    }
  }

  /** Ends a stream once what is queued has been written. */
  private end(s: Stream): void {
    this.forget(s, false);
    s.ending = true;
    this.pump(s);
  }

  /** Drops a stream that does not keep up: its queue goes, and so does its connection. */
  private drop(s: Stream): void {
    this.dropped++;
    this.forget(s, true);
    s.res.destroy();
  }

  private forget(s: Stream, discard: boolean): void {
    for (const t of s.timers) clearTimeout(t);
    s.timers.length = 0;
    this.streams.get(s.r.key)?.delete(s);
    if (discard) {
      s.queue.length = 0;
      s.head = 0;
      s.queued = 0;
    }
  }
}

/** What a change is to a watcher with a selector: ADDED when it starts matching, DELETED when it stops. */
function transition(e: StoreEvent, now: boolean, before: boolean): string | undefined {
  if (e.type === 'ADDED') return now ? 'ADDED' : undefined;
  if (e.type === 'DELETED') return before ? 'DELETED' : undefined;
  if (now) return before ? 'MODIFIED' : 'ADDED';
  return before ? 'DELETED' : undefined;
}
