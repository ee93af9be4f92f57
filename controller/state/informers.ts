// Informers for every kind cluster state needs, on client-node's ListWatch, with what the library leaves
// out: ListWatch stops for good after any error other than 410, so each informer here restarts itself with
// a 1 s -> 30 s backoff (reset by the next event). A kind is *synced* once a list of it has succeeded and its
// items are in cluster state (controller-runtime's WaitForCacheSync semantics): a failed first list keeps
// it unsynced and is retried with that backoff, while a later relist or watch failure never makes a synced
// kind unsynced again (the cache keeps what it had and catches up when the watch is back). Controllers
// declare the kinds they read and start only once those have synced (operator/runtime.ts); `/readyz` names
// the kinds that have not. The library's own reconnect delay runs on our clock (delayFn), so the
// simulator's clock drives it too. The watch's body is read by watchstream.ts (a bounded slice of lines per turn),
// and an event that cannot be handled is logged with its object and field, counted and left out (`rejected`).
import { ListWatch, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import type { Clock, Timer } from '../operator/clock.ts';
import { collectionPath, isNotFound, type Kind, type KubeClient, type KubeObject } from '../operator/kube.ts';
import type { Logger } from '../operator/logger.ts';
import { errText } from '../operator/runtime.ts';
import { SlicedDelivery, WatchEvents } from './delivery.ts';
import { viewCache, type KeptObjects } from './keptcache.ts';
import { BoundedWatch, type BadWatchLine, type WatchCallback, type WatchDone, type WatchQuery } from './watchstream.ts';

interface InformerHandlers {
  apply(obj: KubeObject): void;
  remove(obj: KubeObject): void;
}

interface InformerOptions {
  /**
   * The kind may not be served (an older API server): a 404 on list counts as listed-and-empty, so the synced
   * gate does not wait forever; it is logged once as an error with this text, and the list is retried at the
   * longest backoff until the API appears.
   */
  readonly unservedMeans?: string;
  /**
   * Applied to every object a list or watch delivers, before client-node's cache or the handlers see it
   * (strip.ts: the fields the controller never reads); it may change the object in place.
   */
  readonly transform?: (o: KubeObject) => KubeObject;
  /**
   * Applied after `transform` to each object added or changed when it is handled, before client-node's cache or the
   * handlers see it: what both keep (a pod's record, podrecord.ts, which parses the pod). Kept apart from `transform`
   * so that the parse can run where events are handled rather than where a socket read hands them over. A deleted
   * object is kept by nobody: the cache and the handlers' `remove` get it as `transform` left it (they read its
   * namespace and name), and it is not parsed.
   */
  readonly keep?: (o: KubeObject) => KubeObject;
  /**
   * Where the handlers keep the kind's objects, by namespace and name: client-node's cache reads these instead of
   * holding a map of its own (keptcache.ts). The handlers must keep every object they apply and drop every object
   * they remove.
   */
  readonly kept?: KeptObjects;
}

/** Watch phases that carry an object of the kind that the cache then keeps (not a deletion, an error or a bookmark). */
const KEPT_PHASES = new Set(['ADDED', 'MODIFIED']);

/** The options' transform and keep, one after the other. */
function prepare(opts: InformerOptions): ((o: KubeObject) => KubeObject) | undefined {
  const { transform, keep } = opts;
  if (transform && keep) return (o) => keep(transform(o));
  return transform ?? keep;
}

export interface Backoff {
  readonly baseMs: number;
  readonly maxMs: number;
}

const DEFAULT_BACKOFF: Backoff = { baseMs: 1_000, maxMs: 30_000 };

type InformerState = 'stopped' | 'starting' | 'watching' | 'waiting' | 'backoff';

interface InformerStatus {
  readonly kind: Kind;
  readonly state: InformerState;
  readonly listed: boolean;
  readonly restarts: number;
  /** The API server does not serve the kind (404 on list); it counts as listed and empty. */
  readonly unserved: boolean;
  /** The resourceVersion of the last list or event seen. */
  readonly resourceVersion: string;
}

/**
 * The informers' watch (watchstream.ts: the body read a bounded slice per turn), telling us when a watch request
 * starts and when its stream ends, and handing its events to the informers' sliced delivery (delivery.ts) instead
 * of handling them in the read that parsed them. An event that cannot be stripped or kept goes to `rejected`.
 */
class TrackedWatch extends BoundedWatch {
  constructor(
    kc: KubeConfig,
    private readonly onOpen: (open: boolean) => void,
    private readonly delivery: SlicedDelivery,
    /** This kind's lane in the delivery: its events keep their order there. */
    private readonly lane: string,
    private readonly rejected: (stage: RejectStage, obj: unknown, err: unknown) => void,
    livenessMs?: number,
    private readonly transform?: (o: KubeObject) => KubeObject,
    private readonly keep?: (o: KubeObject) => KubeObject,
  ) {
    // A watch silent for livenessMs is aborted with a TimeoutError and ListWatch reconnects from its
    // resourceVersion at once; the silent-API-server drill shows it taking effect.
    super(kc, (bad) => rejected(stageOf(bad), bad.object ?? bad.line, bad.err), livenessMs);
  }

  override async watch(
    path: string,
    query: WatchQuery,
    callback: WatchCallback,
    done: WatchDone,
  ): Promise<AbortController> {
    this.onOpen(true);
    const t = this.transform;
    /** Cleared when ListWatch aborts this stream (it stops or restarts): its queued events are dropped. */
    let live = true;
    // Stripped on arrival (the queue holds the lean copy, one version per object: delivery.ts WatchEvents); kept
    // (a pod parsed into its record) and handled in the delivery's slices, so the parse is paced with the
    // handling rather than done in the socket read, and a version superseded while queued is never parsed.
    const events = new WatchEvents(this.delivery, this.lane, (phase, o) => {
      if (!live) return;
      const kept = this.kept(phase, o);
      if (kept !== undefined) callback(phase, kept);
    });
    // A transform that throws is caught by the reader (BoundedWatch) and reported as a 'handle' failure.
    const deliver = (phase: string, obj: unknown): void => events.event(phase, t && isObject(obj) ? t(obj) : obj);
    const inner = await super.watch(path, query, deliver, (err: unknown) => {
      // The end of the stream is handled after its events: ListWatch then reconnects (or relists) from the
      // resourceVersion of the newest event, and a relist never overtakes the events before it.
      events.end(() => {
        this.onOpen(false);
        done(err);
      });
    });
    const outer = new AbortController();
    outer.signal.addEventListener(
      'abort',
      () => {
        live = false;
        inner.abort();
      },
      { once: true },
    );
    return outer;
  }

  /** The object as the handlers get it (`keep` applied to adds and changes), or undefined (reported) if `keep` threw. */
  private kept(phase: string, o: unknown): unknown {
    const k = this.keep;
    if (!k || !isObject(o) || !KEPT_PHASES.has(phase)) return o;
    try {
      return k(o);
    } catch (err) {
      this.rejected('keep', o, err);
      return undefined;
    }
  }
}

const isObject = (obj: unknown): obj is KubeObject => !!obj && typeof obj === 'object';

/** Where handling a watch event failed: the line is no event, stripping (transform), keeping, or a handler threw. */
export type RejectStage = 'decode' | 'transform' | 'keep' | 'handle';

/** The reader's failures: a line that is no event, or its transform (the reader's callback strips and queues). */
const stageOf = (bad: BadWatchLine): RejectStage => (bad.stage === 'decode' ? 'decode' : 'transform');

class KindInformer {
  readonly lw: ListWatch<KubernetesObject>;
  state: InformerState = 'stopped';
  listed = false;
  restarts = 0;
  private failures = 0;
  private errored = false;
  /** The API server answered 404 for this kind's list (only for kinds with `unservedMeans`). */
  unserved = false;
  private timer: Timer | undefined;
  private stopped = false;
  /** A list answered and ListWatch is applying its items; the watch it opens next marks the kind listed. */
  private listAnswered = false;

  constructor(
    readonly kind: Kind,
    private readonly deps: InformersDeps,
    handlers: InformerHandlers,
    private readonly opts: InformerOptions = {},
    delivery: SlicedDelivery,
    private readonly onListed: () => void,
    private readonly rejected: (kind: Kind, stage: RejectStage, obj: unknown, err: unknown) => void,
  ) {
    const list = async () => {
      const items = (await deps.kube.list(kind)) as unknown as {
        items: KubernetesObject[];
        metadata?: { resourceVersion?: string };
      };
      const prep = prepare(opts);
      if (prep) items.items = this.prepared(items.items, prep);
      this.listAnswered = true;
      return items;
    };
    // ListWatch applies a list's items and then, in the same turn, opens the watch: so the watch opening
    // after an answered list is the moment the items are in cluster state.
    const watch = new TrackedWatch(
      deps.kubeConfig,
      (open) => {
        if (open && this.listAnswered) {
          this.listAnswered = false;
          this.markListed();
        }
        // A stream that ended is being re-established (or waits in backoff, which failed() records).
        if (!open && this.state === 'watching') this.state = 'starting';
        else if (open && this.listed && this.state === 'starting') this.state = 'watching';
      },
      delivery,
      kind,
      (stage, obj, err) => rejected(kind, stage, obj, err),
      deps.watchTimeoutMs,
      opts.transform,
      opts.keep,
    );
    this.lw = new ListWatch(collectionPath(kind), watch, list, false, undefined, undefined, {
      delayFn: async (ms) => {
        const prior = this.state;
        this.state = 'waiting';
        try {
          await deps.clock.sleep(ms);
        } finally {
          if (this.state === 'waiting') this.state = prior;
        }
      },
    });
    if (opts.kept) viewCache(this.lw, opts.kept);
    const seen = (): void => {
      this.failures = 0;
    };
    // ListWatch calls these inside an async function: a handler's exception would reject a promise nobody
    // awaits. It is caught here and reported with the object instead; the next event is handled as usual.
    const guarded = (f: (o: KubeObject) => void) => (o: KubernetesObject) => {
      seen();
      try {
        f(o as KubeObject);
      } catch (err) {
        rejected(kind, 'handle', o, err);
      }
    };
    this.lw.on(
      'add',
      guarded((o) => handlers.apply(o)),
    );
    this.lw.on(
      'update',
      guarded((o) => handlers.apply(o)),
    );
    this.lw.on(
      'delete',
      guarded((o) => handlers.remove(o)),
    );
    this.lw.on('error', (err) => this.failed(err));
  }

  /** A list's items transformed and kept; one that throws is reported and left out, the others still listed. */
  private prepared(items: KubernetesObject[], prep: (o: KubeObject) => KubeObject): KubernetesObject[] {
    const out: KubernetesObject[] = [];
    for (const o of items) {
      try {
        out.push(prep(o as KubeObject) as KubernetesObject);
      } catch (err) {
        this.rejected(this.kind, 'transform', o, err);
      }
    }
    return out;
  }

  async start(): Promise<void> {
    if (this.stopped) return;
    this.state = 'starting';
    this.errored = false;
    try {
      await this.lw.start();
    } catch (err) {
      this.failed(err);
    }
    if (this.errored || this.stopped) return;
    this.state = 'watching';
  }

  /** A list succeeded and its items are applied: the kind is synced from now on (it never goes back). */
  private markListed(): void {
    if (this.unserved) this.deps.log.info({ kind: this.kind }, 'the API server now serves this kind; watching it');
    this.unserved = false;
    if (this.listed) return;
    this.listed = true;
    this.deps.log.info({ kind: this.kind, restarts: this.restarts }, 'informer synced');
    this.onListed();
  }

  stop(): void {
    this.stopped = true;
    this.state = 'stopped';
    this.timer?.cancel();
    void this.lw.stop();
  }

  private markListedUnserved(): void {
    if (this.listed) return;
    this.listed = true;
    this.onListed();
  }

  private failed(err: unknown): void {
    this.errored = true;
    if (this.stopped) return;
    const { baseMs, maxMs } = this.deps.backoff ?? DEFAULT_BACKOFF;
    let ms = Math.min(maxMs, baseMs * 2 ** this.failures);
    this.failures++;
    this.restarts++;
    this.state = 'backoff';
    if (this.opts.unservedMeans !== undefined && !this.listed && isNotFound(err)) {
      ms = maxMs;
      this.unserved = true;
      this.deps.log.error(
        { kind: this.kind, path: collectionPath(this.kind), err: errText(err), retryInMs: ms },
        `the API server does not serve ${this.kind}: ${this.opts.unservedMeans}`,
      );
      // Listed and empty: the controllers that read it must not wait for an API that may never come.
      this.markListedUnserved();
    } else if (this.unserved && isNotFound(err)) {
      ms = maxMs;
    } else if (!this.listed) {
      this.deps.log.warn(
        { kind: this.kind, err: errText(err), retryInMs: ms },
        'listing failed; the controllers that read this kind wait until a list succeeds',
      );
    } else {
      this.deps.log.warn(
        { kind: this.kind, err: errText(err), retryInMs: ms },
        'informer stopped; restarting (its cache stays synced and catches up on restart)',
      );
    }
    this.timer?.cancel();
    this.timer = this.deps.clock.setTimer(ms, () => {
      this.timer = undefined;
      void this.start();
    });
  }
}

interface InformersDeps {
  readonly kube: KubeClient;
  readonly kubeConfig: KubeConfig;
  readonly clock: Clock;
  readonly log: Logger;
  readonly backoff?: Backoff;
  /** Watch liveness: a watch silent this long is dropped and re-established (default client-node's 30 s). */
  readonly watchTimeoutMs?: number;
  /** Counts a watch event or listed object left out because it could not be handled (the metric). */
  readonly onRejected?: (kind: Kind, stage: RejectStage) => void;
}

/** Where a bad object's fault is: the field its error names, else the first envelope field that is not as it must be. */
function faultyField(obj: unknown, err: unknown): string {
  const e = err as { path?: unknown; field?: unknown } | null;
  if (e && typeof e === 'object' && typeof e.path === 'string' && e.path !== '') return e.path;
  if (e && typeof e === 'object' && typeof e.field === 'string' && e.field !== '') return e.field;
  if (!isObject(obj)) return 'object';
  const meta = (obj as { metadata?: unknown }).metadata;
  if (!isObject(meta)) return 'metadata';
  if (typeof meta.name !== 'string' || meta.name === '') return 'metadata.name';
  return '(not named by the error; see err)';
}

/** The log fields that say which object (or which line) a rejected event was. */
function whichObject(kind: Kind, stage: RejectStage, obj: unknown, err: unknown): Record<string, unknown> {
  if (stage === 'decode') return { kind, stage, line: obj, err: errText(err) };
  const meta = isObject(obj) && isObject(obj.metadata) ? obj.metadata : undefined;
  return {
    kind,
    stage,
    namespace: typeof meta?.namespace === 'string' ? meta.namespace : undefined,
    name: typeof meta?.name === 'string' ? meta.name : undefined,
    field: faultyField(obj, err),
    err: errText(err),
  };
}

export class Informers {
  private readonly informers = new Map<Kind, KindInformer>();
  private readonly waiters = new Set<() => void>();
  /** Per signal that waits here: its one abort listener and the waits it ends. */
  private readonly aborts = new WeakMap<AbortSignal, { set: Set<() => void>; all: () => void }>();

  /** Every kind's watch events, each kind's in arrival order, handled a slice per turn of the event loop. */
  private readonly delivery: SlicedDelivery;

  constructor(private readonly deps: InformersDeps) {
    this.delivery = new SlicedDelivery(
      (err) =>
        deps.log.error({ err: errText(err) }, 'handling a watch event failed; the events after it are still handled'),
      {
        onBacklog: ({ peak, merged }) =>
          deps.log.info(
            { queuedAtMost: peak, versionsMerged: merged },
            'watch events arrived faster than they were handled; the backlog has drained',
          ),
      },
    );
  }

  add(kind: Kind, handlers: InformerHandlers, opts: InformerOptions = {}): void {
    if (this.informers.has(kind)) throw new Error(`an informer for ${kind} already exists`);
    const informer = new KindInformer(
      kind,
      this.deps,
      handlers,
      opts,
      this.delivery,
      () => this.notify(),
      (k, stage, obj, err) => this.rejected(k, stage, obj, err),
    );
    this.informers.set(kind, informer);
  }

  /** An event (or listed object) that could not be handled: logged with the object and field, counted, left out. */
  private rejected(kind: Kind, stage: RejectStage, obj: unknown, err: unknown): void {
    this.deps.onRejected?.(kind, stage);
    this.deps.log.error(
      whichObject(kind, stage, obj, err),
      `a ${kind} from the watch could not be handled and is left out; the events after it are still handled`,
    );
  }

  /**
   * Starts every informer; resolves when each has listed once or failed (and scheduled a restart with
   * backoff). It does not wait for sync: waitForSync does.
   */
  async start(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.start()));
  }

  /** Every kind has listed at least once. */
  listed(): boolean {
    return this.synced();
  }

  /**
   * The given kinds (default every kind) have each listed successfully once. A kind without an informer
   * here (the DRA kinds when DRA is ignored) has nothing to wait for and counts as synced.
   */
  synced(kinds?: readonly Kind[]): boolean {
    return this.unsynced(kinds).length === 0;
  }

  /** The kinds (of `kinds`, default all) that have not listed successfully yet. */
  unsynced(kinds?: readonly Kind[]): Kind[] {
    const wanted = kinds ?? [...this.informers.keys()];
    return wanted.filter((k) => this.informers.get(k)?.listed === false);
  }

  /**
   * Resolves once every one of `kinds` has synced; rejects with the signal's reason if it aborts first. Any number
   * of waits may share one signal (the runtime's controllers wait on one): the signal gets one listener for all.
   */
  waitForSync(kinds: readonly Kind[], signal?: AbortSignal): Promise<void> {
    if (this.synced(kinds)) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason ?? new Error('aborted'));
    return new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (!this.synced(kinds)) return;
        this.waiters.delete(check);
        stopWatching();
        resolve();
      };
      const stopWatching = signal
        ? this.onAbort(signal, () => {
            this.waiters.delete(check);
            reject(signal.reason ?? new Error('aborted'));
          })
        : () => {};
      this.waiters.add(check);
    });
  }

  /** Calls `f` when `signal` aborts, through the one listener this signal has here; returns how to stop. */
  private onAbort(signal: AbortSignal, f: () => void): () => void {
    let calls = this.aborts.get(signal);
    if (!calls) {
      const set = new Set<() => void>();
      const all = (): void => {
        this.aborts.delete(signal);
        for (const g of [...set]) g();
      };
      signal.addEventListener('abort', all, { once: true });
      this.aborts.set(signal, (calls = { set, all }));
    }
    const { set, all } = calls;
    set.add(f);
    return () => {
      set.delete(f);
      if (set.size > 0) return;
      signal.removeEventListener('abort', all);
      this.aborts.delete(signal);
    };
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }

  status(): InformerStatus[] {
    return [...this.informers.values()].map((i) => ({
      kind: i.kind,
      state: i.state,
      listed: i.listed,
      restarts: i.restarts,
      unserved: i.unserved,
      resourceVersion: i.lw.latestResourceVersion(),
    }));
  }

  stop(): void {
    for (const i of this.informers.values()) i.stop();
    this.delivery.clear();
  }
}
