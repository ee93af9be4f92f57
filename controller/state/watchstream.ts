// The informers' watch request, read by us rather than by client-node's Watch. client-node's Watch hands its
// body to readline, which parses and handles every line of what the socket delivered in the turn that delivered
// it: at a burst of pod events that was 168-326 lines, 19-29 ms of the event loop's CPU in one turn (measured with
// a local stream of 20,000 pod events). It also swallows whatever a line's handling throws (`catch {}`), so a
// malformed or unhandled event vanished without a word. Here the request goes out exactly as client-node's does
// (its KubeConfig authenticates it, and its undici fetch sends it on the dispatcher that authentication chose),
// and the body is split into lines by us and handed on a bounded slice at a time: at most SLICE_LINES lines or
// SLICE_BYTES bytes, then the reader yields a turn of the event loop (setImmediate). The body itself is read as it
// comes, the lines not yet handed on waiting in our queue: left in the stream, they made undici copy the socket's
// whole backlog into its parser's memory at every resume (ChunkQueue). The bound is work counted, never
// wall-clock time. A line that is not a watch event, and an exception its handling throws, go to `onBad` with the
// line or the object, and the lines after it are still handled.
//
// Kept from client-node's Watch, which ListWatch relies on: a non-200 answer fails the watch with an error
// carrying `statusCode` (410 Gone makes ListWatch relist); a watch silent for `livenessMs` (30 s by default) is
// aborted and ends with a TimeoutError (ListWatch reconnects from its resourceVersion at once); the stream's end
// or error calls `done` once; aborting the returned controller ends the request and hands on no more lines.
import { STATUS_CODES } from 'node:http';
import {
  HttpMethod,
  IsomorphicFetchHttpLibrary,
  RequestContext,
  Watch,
  type KubeConfig,
} from '@kubernetes/client-node';

/** Lines a slice hands on at most before the reader yields a turn. */
const SLICE_LINES = 32;
/** Bytes a slice hands on at most before the reader yields a turn (a large object is a slice of its own). */
const SLICE_BYTES = 128 * 1024;

const DEFAULT_LIVENESS_MS = 30_000;
/** How much of a line that is not a watch event the report quotes. */
const QUOTED = 200;

interface SliceLimits {
  readonly lines: number;
  readonly bytes: number;
}

/** Watch.watch's query, event callback and end callback, as its overrides here and in informers.ts take them. */
export type WatchQuery = Record<string, string | number | boolean | undefined>;
export type WatchCallback = (phase: string, obj: unknown, watchObj?: unknown) => void;
export type WatchDone = (err: unknown) => void;

/** A line that was no watch event, or an event whose handling threw: what `onBad` gets. */
export interface BadWatchLine {
  /** 'decode': the line is not JSON or not `{type, object}`; 'handle': handling the event threw `err`. */
  readonly stage: 'decode' | 'handle';
  readonly err: unknown;
  /** The event's object, when the line parsed. */
  readonly object?: unknown;
  /** The line's first characters, when it did not parse. */
  readonly line?: string;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The text of a line whose bytes are `pieces` (earlier chunks) and then `buf` from `start` to `end`. */
function lineText(pieces: Buffer[], buf: Buffer, start: number, end: number): string {
  if (pieces.length === 0) return buf.toString('utf8', start, end);
  return Buffer.concat([...pieces, buf.subarray(start, end)]).toString('utf8');
}

/**
 * The chunks of `body` as fast as they come, queued until the lines' reader takes them. undici pauses its HTTP
 * parser when a body is not read, but it does not stop the socket: each resume reads everything the socket holds
 * by then (Readable.read() without a size), copies it into the parser's WebAssembly memory, parses a little and
 * puts the rest back, while the socket reads on. A watch read a slice at a time behind a burst of events so grew
 * its socket's backlog without bound, copied it whole at every resume, and kept the parser's memory at the largest
 * of those copies for the life of the process (WebAssembly memory never shrinks; docs/controller-benchmark.md,
 * "undici's parser memory"). Read at once, the body never pauses the parser, and what waits is these chunks.
 */
class ChunkQueue {
  private readonly chunks: Uint8Array[] = [];
  private ended = false;
  private failure: { readonly err: unknown } | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly onChunk: (() => void) | undefined,
  ) {
    void this.pump();
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        const { done, value } = await this.reader.read();
        if (done) break;
        this.chunks.push(value);
        this.onChunk?.();
        this.notify();
      }
    } catch (err) {
      this.failure = { err };
    }
    this.ended = true;
    this.notify();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  /** The next chunk, or undefined at the body's end; rejects with the body's error once the chunks before it are taken. */
  async next(): Promise<Uint8Array | undefined> {
    for (;;) {
      const c = this.chunks.shift();
      if (c) return c;
      if (this.failure) throw this.failure.err;
      if (this.ended) return undefined;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** Stops reading the body (the reader gave up: aborted). */
  cancel(reason: unknown): void {
    this.chunks.length = 0;
    this.reader.cancel(reason).catch(() => undefined);
  }
}

/**
 * Reads `body` to its end and hands each newline-terminated line (empty lines skipped) to `onLine`, at most
 * `limits.lines` lines or `limits.bytes` bytes per turn of the event loop; past either it yields a turn before the
 * next line (the body is read on meanwhile, ChunkQueue). `onProgress` is called for every chunk read and every
 * yield (the liveness timer's reset). Resolves with the bytes of an unterminated last line (0 when the body ended
 * on a newline); rejects with the body's error (after the lines before it), or with `signal`'s reason once it
 * aborts.
 */
export async function readLines(
  body: ReadableStream<Uint8Array>,
  onLine: (line: string) => void,
  opts: { readonly limits?: SliceLimits; readonly signal?: AbortSignal; readonly onProgress?: () => void } = {},
): Promise<{ readonly partialBytes: number }> {
  const { lines: maxLines, bytes: maxBytes } = opts.limits ?? { lines: SLICE_LINES, bytes: SLICE_BYTES };
  const queue = new ChunkQueue(body.getReader(), opts.onProgress);
  /** An unterminated line's bytes so far, from earlier chunks. */
  const pieces: Buffer[] = [];
  let partialBytes = 0;
  let lines = 0;
  let bytes = 0;
  for (;;) {
    const value = await queue.next();
    if (!value) return { partialBytes };
    const buf = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl >= 0; nl = buf.indexOf(10, start)) {
      const text = lineText(pieces, buf, start, nl);
      bytes += partialBytes + nl + 1 - start;
      pieces.length = 0;
      partialBytes = 0;
      start = nl + 1;
      if (text.length > 0 && text !== '\r') onLine(text);
      if (++lines < maxLines && bytes < maxBytes) continue;
      await nextTurn();
      if (opts.signal?.aborted) {
        queue.cancel(opts.signal.reason);
        throw opts.signal.reason;
      }
      opts.onProgress?.();
      lines = 0;
      bytes = 0;
    }
    if (start < buf.length) {
      pieces.push(buf.subarray(start));
      partialBytes += buf.length - start;
    }
  }
}

/**
 * One watch line to its event: `callback(type, object)`, or `onBad` when the line is not a watch event or the
 * callback throws. Never throws.
 */
function handleLine(
  line: string,
  callback: (phase: string, obj: unknown, watchObj?: unknown) => void,
  onBad: (bad: BadWatchLine) => void,
): void {
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch (err) {
    onBad({ stage: 'decode', err, line: line.slice(0, QUOTED) });
    return;
  }
  const e = event as { type?: unknown; object?: unknown } | null;
  if (!e || typeof e !== 'object' || typeof e.type !== 'string' || !e.object || typeof e.object !== 'object') {
    onBad({
      stage: 'decode',
      err: new Error('not a watch event: wants {"type": string, "object": {...}}'),
      line: line.slice(0, QUOTED),
    });
    return;
  }
  try {
    callback(e.type, e.object, e);
  } catch (err) {
    onBad({ stage: 'handle', err, object: e.object });
  }
}

const cutShort = (bytes: number): Error =>
  new Error(`the stream ended inside an event (${bytes} bytes without their newline); the watch resumes before it`);

/** The error client-node's Watch ends a silent watch with (ListWatch reconnects at once on its name). */
const timeoutError = (): DOMException => new DOMException('The operation was aborted due to timeout', 'TimeoutError');

/** An answer other than 200, as client-node's Watch fails with it (ListWatch reads `statusCode`: 410 relists). */
function statusError(status: number): Error & { statusCode: number } {
  const text = STATUS_CODES[status] ?? 'Internal Server Error';
  return Object.assign(new Error(text), { statusCode: status });
}

/** client-node's Watch with the body read by readLines: see the top of this file. */
export class BoundedWatch extends Watch {
  private readonly http = new IsomorphicFetchHttpLibrary();

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly onBad: (bad: BadWatchLine) => void,
    private readonly livenessMs = DEFAULT_LIVENESS_MS,
    private readonly limits?: SliceLimits,
  ) {
    super(kubeConfig);
  }

  override async watch(
    path: string,
    query: WatchQuery,
    callback: WatchCallback,
    done: WatchDone,
  ): Promise<AbortController> {
    const controller = new AbortController();
    const liveness = new Liveness(this.livenessMs, controller);
    let ended = false;
    const end = (err: unknown): void => {
      if (ended) return;
      ended = true;
      liveness.stop();
      controller.abort();
      done(err && liveness.timedOut ? timeoutError() : err);
    };
    try {
      const body = await this.open(path, query, controller.signal);
      // From here on the timer is the stream's inactivity timeout (before, it bounded the wait for the answer).
      liveness.reset();
      const onLine = (line: string): void => handleLine(line, callback, this.onBad);
      const opts = { signal: controller.signal, onProgress: () => liveness.reset() };
      readLines(body, onLine, this.limits ? { ...opts, limits: this.limits } : opts).then(
        ({ partialBytes }) => {
          // Not handed on as an event, and not skipped in silence: ListWatch resumes from the event before it.
          if (partialBytes > 0) this.onBad({ stage: 'decode', err: cutShort(partialBytes), line: '' });
          end(null);
        },
        (err: unknown) => end(err),
      );
    } catch (err) {
      end(err);
    }
    return controller;
  }

  /** Sends the watch request as client-node's Watch does and answers its body, or throws for any answer but 200. */
  private async open(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    signal: AbortSignal,
  ): Promise<ReadableStream<Uint8Array>> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig: no current cluster (set a current-context)');
    const url = new URL(cluster.server + path);
    url.searchParams.set('watch', 'true');
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    const ctx = new RequestContext(url.toString(), HttpMethod.GET);
    await this.kubeConfig.applySecurityAuthentication(ctx);
    ctx.setSignal(signal);
    const res = await this.http.send(ctx).toPromise();
    const body = res.body.stream();
    if (res.httpStatusCode !== 200) {
      await body?.cancel().catch(() => undefined);
      throw statusError(res.httpStatusCode);
    }
    if (!body) throw new Error(`watch ${path}: the answer has no body`);
    return body;
  }
}

/** Aborts `controller` once `ms` pass without a reset (a timer that does not keep the process alive). */
class Liveness {
  timedOut = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(
    private readonly ms: number,
    private readonly controller: AbortController,
  ) {
    this.reset();
  }

  reset(): void {
    if (this.stopped) return;
    if (this.timer) this.timer.refresh();
    else {
      this.timer = setTimeout(() => {
        this.timedOut = true;
        this.controller.abort(timeoutError());
      }, this.ms);
      this.timer.unref();
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}
