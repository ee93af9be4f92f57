// Informers for every kind cluster state needs, on client-node's ListWatch, with what the library leaves
// out (stack-notes §6): ListWatch stops for good after any error other than 410, so each informer here
// restarts itself with a 1 s -> 30 s backoff (reset by the next event); `listed()` says every kind has
// listed at least once, which the synced gate (cluster.ts) requires. The library's own reconnect delay
// runs on our clock (delayFn), so the simulator's clock drives it too.
import { ListWatch, Watch, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import type { Clock, Timer } from '../operator/clock.ts';
import { collectionPath, isNotFound, type Kind, type KubeClient, type KubeObject } from '../operator/kube.ts';
import type { Logger } from '../operator/logger.ts';
import { errText } from '../operator/runtime.ts';

export interface InformerHandlers {
  apply(obj: KubeObject): void;
  remove(obj: KubeObject): void;
}

export interface InformerOptions {
  /**
   * The kind may not be served (an older API server): a 404 on list counts as listed-and-empty, so the synced
   * gate does not wait forever; it is logged once as an error with this text, and the list is retried at the
   * longest backoff until the API appears.
   */
  readonly unservedMeans?: string;
}

export interface Backoff {
  readonly baseMs: number;
  readonly maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { baseMs: 1_000, maxMs: 30_000 };

export type InformerState = 'stopped' | 'starting' | 'watching' | 'waiting' | 'backoff';

export interface InformerStatus {
  readonly kind: Kind;
  readonly state: InformerState;
  readonly listed: boolean;
  readonly restarts: number;
  /** The API server does not serve the kind (404 on list); it counts as listed and empty. */
  readonly unserved: boolean;
  /** The resourceVersion of the last list or event seen. */
  readonly resourceVersion: string;
}

/** client-node's Watch, telling us when a watch request starts and when its stream ends. */
class TrackedWatch extends Watch {
  constructor(kc: KubeConfig, private readonly onOpen: (open: boolean) => void) {
    super(kc);
  }

  override async watch(path: string, query: Record<string, string | number | boolean | undefined>, callback: (phase: string, obj: unknown, watchObj?: unknown) => void, done: (err: unknown) => void): Promise<AbortController> {
    this.onOpen(true);
    return super.watch(path, query, callback, (err: unknown) => {
      this.onOpen(false);
      done(err);
    });
  }
}

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

  constructor(readonly kind: Kind, private readonly deps: InformersDeps, handlers: InformerHandlers, private readonly opts: InformerOptions = {}) {
    const list = async () => (await deps.kube.list(kind)) as unknown as { items: KubernetesObject[]; metadata?: { resourceVersion?: string } };
    const watch = new TrackedWatch(deps.kubeConfig, (open) => {
      // A stream that ended is being re-established (or waits in backoff, which failed() records).
      if (!open && this.state === 'watching') this.state = 'starting';
      else if (open && this.listed && this.state === 'starting') this.state = 'watching';
    });
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
    const seen = (): void => {
      this.failures = 0;
    };
    this.lw.on('add', (o) => (seen(), handlers.apply(o as KubeObject)));
    this.lw.on('update', (o) => (seen(), handlers.apply(o as KubeObject)));
    this.lw.on('delete', (o) => (seen(), handlers.remove(o as KubeObject)));
    this.lw.on('error', (err) => this.failed(err));
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
    if (this.unserved) this.deps.log.info({ kind: this.kind }, 'the API server now serves this kind; watching it');
    this.unserved = false;
    this.listed = true;
    this.state = 'watching';
  }

  stop(): void {
    this.stopped = true;
    this.state = 'stopped';
    this.timer?.cancel();
    void this.lw.stop();
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
      this.listed = true;
      this.deps.log.error({ kind: this.kind, path: collectionPath(this.kind), err: errText(err), retryInMs: ms }, `the API server does not serve ${this.kind}: ${this.opts.unservedMeans}`);
    } else if (this.unserved && isNotFound(err)) {
      ms = maxMs;
    } else {
      this.deps.log.warn({ kind: this.kind, err: errText(err), retryInMs: ms }, 'informer stopped; restarting');
    }
    this.timer?.cancel();
    this.timer = this.deps.clock.setTimer(ms, () => {
      this.timer = undefined;
      void this.start();
    });
  }
}

export interface InformersDeps {
  readonly kube: KubeClient;
  readonly kubeConfig: KubeConfig;
  readonly clock: Clock;
  readonly log: Logger;
  readonly backoff?: Backoff;
}

export class Informers {
  private readonly informers = new Map<Kind, KindInformer>();

  constructor(private readonly deps: InformersDeps) {}

  add(kind: Kind, handlers: InformerHandlers, opts: InformerOptions = {}): void {
    if (this.informers.has(kind)) throw new Error(`an informer for ${kind} already exists`);
    this.informers.set(kind, new KindInformer(kind, this.deps, handlers, opts));
  }

  /** Starts every informer; resolves when each has listed once or failed (and scheduled a restart). */
  async start(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.start()));
  }

  /** Every kind has listed at least once. */
  listed(): boolean {
    for (const i of this.informers.values()) if (!i.listed) return false;
    return true;
  }

  status(): InformerStatus[] {
    return [...this.informers.values()].map((i) => ({ kind: i.kind, state: i.state, listed: i.listed, restarts: i.restarts, unserved: i.unserved, resourceVersion: i.lw.latestResourceVersion() }));
  }

  stop(): void {
    for (const i of this.informers.values()) i.stop();
  }
}
