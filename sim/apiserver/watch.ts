// Watch streams: chunked NDJSON, one {"type","object"} per line, as the real server sends them.
//
// - resourceVersion "" or "0" starts with a synthetic ADDED for every matching object; a number N replays
//   the changes after N from the store's window, then follows live changes. N older than the window gets
//   an in-stream ERROR 410 (reason Expired) and the stream ends, as upstream does; clients relist.
// - Selectors are applied per event with upstream's transitions: an object that starts matching arrives
//   as ADDED, one that stops matching as DELETED.
// - A blank line goes out every heartbeat interval (wall clock): client-node drops a watch that is silent
//   for 30 s. With allowWatchBookmarks=true a BOOKMARK carrying the current resourceVersion goes instead.
// - Events are written synchronously as the store records them, so every stream sees them in order.
import type { ServerResponse } from 'node:http';
import { errors } from './errors.ts';
import type { ResourceInfo } from './resources.ts';
import type { ListFilter, Store } from './store.ts';
import { toTable } from './table.ts';
import type { KObject, StoreEvent } from './types.ts';

export interface WatchParams {
  readonly namespace: string | undefined;
  readonly filter: ListFilter;
  readonly resourceVersion: string | undefined;
  readonly bookmarks: boolean;
  readonly table: boolean;
  /** Ends the stream after this many wall-clock seconds, if given. */
  readonly timeoutSeconds: number | undefined;
}

interface Stream {
  readonly r: ResourceInfo;
  readonly res: ServerResponse;
  readonly params: WatchParams;
  readonly timers: NodeJS.Timeout[];
}

export class WatchHub {
  private readonly streams = new Map<string, Set<Stream>>();
  private readonly unsubscribe: () => void;

  constructor(private readonly store: Store, private readonly now: () => number, private readonly heartbeatMs: number) {
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
      if (!Number.isInteger(rv) || rv < 0) throw errors.badRequest(`resourceVersion "${rvText}" is not a valid resource version`);
      replay = this.store.eventsSince(rv);
    }
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache, private', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    const stream: Stream = { r, res, params, timers: [] };
    if (replay === 'gone') {
      this.send(stream, 'ERROR', errors.expired(`too old resource version: ${rvText} (${this.store.resourceVersion()})`).toStatus());
      res.end();
      return;
    }
    for (const o of initial) this.send(stream, 'ADDED', o);
    for (const e of replay) if (e.resource === r.key) this.deliver(stream, e);
    let set = this.streams.get(r.key);
    if (!set) this.streams.set(r.key, (set = new Set()));
    set.add(stream);
    stream.timers.push(setInterval(() => this.heartbeat(stream), this.heartbeatMs));
    if (params.timeoutSeconds && params.timeoutSeconds > 0) stream.timers.push(setTimeout(() => this.end(stream), params.timeoutSeconds * 1000));
    res.on('close', () => this.forget(stream));
  }

  /** Ends every stream, optionally after an in-stream 410 (so informers relist). Returns how many. */
  dropAll(gone: boolean): number {
    let n = 0;
    for (const set of this.streams.values()) {
      for (const s of [...set]) {
        if (gone) this.send(s, 'ERROR', errors.expired(`too old resource version (forced by the simulator)`).toStatus());
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
    for (const s of set) this.deliver(s, e);
  }

  private deliver(s: Stream, e: StoreEvent): void {
    const f = s.params.filter;
    const now = this.store.selects(e.object, f);
    const before = e.old !== undefined && this.store.selects(e.old, f);
    if (e.type === 'ADDED' && now) this.send(s, 'ADDED', e.object);
    else if (e.type === 'MODIFIED') {
      if (now && before) this.send(s, 'MODIFIED', e.object);
      else if (now) this.send(s, 'ADDED', e.object);
      else if (before) this.send(s, 'DELETED', e.object);
    } else if (e.type === 'DELETED' && before) this.send(s, 'DELETED', e.object);
  }

  private send(s: Stream, type: string, object: unknown): void {
    if (s.res.writableEnded || s.res.destroyed) return;
    const obj = s.params.table && type !== 'ERROR' && type !== 'BOOKMARK'
      ? toTable(s.r, [object as KObject], this.now(), (object as KObject).metadata.resourceVersion ?? '')
      : object;
    s.res.write(`${JSON.stringify({ type, object: obj })}\n`);
  }

  private heartbeat(s: Stream): void {
    if (s.res.writableEnded || s.res.destroyed) return;
    if (s.params.bookmarks) {
      this.send(s, 'BOOKMARK', { kind: s.r.kind, apiVersion: s.r.apiVersion, metadata: { resourceVersion: String(this.store.resourceVersion()) } });
    } else s.res.write('\n');
  }

  private end(s: Stream): void {
    this.forget(s);
    if (!s.res.writableEnded) s.res.end();
  }

  private forget(s: Stream): void {
    for (const t of s.timers) clearTimeout(t);
    s.timers.length = 0;
    this.streams.get(s.r.key)?.delete(s);
  }
}

