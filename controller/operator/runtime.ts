// Runs the controllers: one work queue each, fed by the controller's own subscriptions (register) and by
// its requeues. A singleton controller is a keyed one that only ever uses the key ''. A controller starts
// (registers its triggers and takes work) only once every kind it reads has synced, as controller-runtime
// waits for its caches (WaitForCacheSync): a controller that drains or terminates on an empty cache would
// see no pods on a node, or no Node for a NodeClaim, and act on that.
import type { Clock } from './clock.ts';
import { isConflict, type Kind } from './kube.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';
import { WorkQueue } from './queue.ts';
import { inReconcile } from './reconcilecontext.ts';
import { observeInProgress, queueObserver } from './runtimemetrics.ts';
import type { ReconcileResult } from './result.ts';

/** The informer caches, as the runtime waits for them (state/informers.ts implements it). */
export interface CacheSync {
  synced(kinds: readonly Kind[]): boolean;
  unsynced(kinds: readonly Kind[]): Kind[];
  waitForSync(kinds: readonly Kind[], signal?: AbortSignal): Promise<void>;
}

export interface Controller {
  /** Dotted, as Karpenter names them: `nodeclaim.lifecycle`, `provisioner`, `disruption`. */
  readonly name: string;
  reconcile(key: string): Promise<ReconcileResult>;
  /**
   * Wires the controller's triggers (cluster-state subscriptions, the keys to start with); returns what
   * stops them. `enqueue` adds a key now; `enqueueAfter` after some clock time.
   */
  register(enqueue: (key: string) => void, enqueueAfter: (key: string, ms: number) => void): () => void;
  /** Parallel reconciles (default 10). */
  readonly concurrency?: number;
  /** The kinds it reads from cluster state: it starts only once each has listed successfully. */
  readonly reads: readonly Kind[];
}

interface RuntimeDeps {
  readonly clock: Clock;
  readonly log: Logger;
  /** Without it (unit tests, and the control runs of the sync drills) controllers start at once. */
  readonly caches?: CacheSync;
  /** Counts a reconcile that ended in a 409 Conflict (logged at debug: a routine race, retried). */
  readonly onConflict?: (controller: string) => void;
  /** controller-runtime's reconcile and workqueue metrics, per controller. */
  readonly metrics?: Metrics;
}

export class Runtime {
  private readonly queues = new Map<string, WorkQueue>();
  private readonly unregister: Array<() => void> = [];
  private readonly waiting = new AbortController();
  private started = false;
  private halted = false;

  constructor(
    private readonly deps: RuntimeDeps,
    readonly controllers: readonly Controller[],
  ) {
    const names = new Set<string>();
    for (const c of controllers) {
      if (names.has(c.name)) throw new Error(`two controllers are named ${c.name}`);
      names.add(c.name);
    }
  }

  /** Starts each controller now if the kinds it reads have synced, else as soon as they have. */
  start(): void {
    if (this.started) return;
    this.started = true;
    const caches = this.deps.caches;
    for (const c of this.controllers) {
      if (!caches || caches.synced(c.reads)) {
        this.startOne(c);
        continue;
      }
      const log = this.deps.log.child({ controller: c.name });
      log.info({ waitingFor: caches.unsynced(c.reads) }, 'waiting for the caches of the kinds it reads to sync');
      caches.waitForSync(c.reads, this.waiting.signal).then(
        () => {
          if (this.halted) return;
          log.info({}, 'caches synced; starting');
          this.startOne(c);
        },
        () => undefined,
      );
    }
  }

  /** Updates the gauges of reconciles in progress (call before a scrape). */
  observe(): void {
    if (this.deps.metrics) observeInProgress(this.deps.metrics, this.queues);
  }

  /** The controllers still waiting for their caches (diagnostics, /readyz). */
  waitingForSync(): string[] {
    return this.controllers.filter((c) => !this.queues.has(c.name)).map((c) => c.name);
  }

  private startOne(c: Controller): void {
    const log = this.deps.log.child({ controller: c.name });
    const q = new WorkQueue({
      name: c.name,
      clock: this.deps.clock,
      reconcile: (key) => inReconcile(c.name, key, () => c.reconcile(key)),
      concurrency: c.concurrency ?? 10,
      onError: (key, err, retryInMs) => this.failed(c.name, log, key, err, retryInMs),
      ...(this.deps.metrics ? { observer: queueObserver(this.deps.metrics, c.name, c.concurrency ?? 10) } : {}),
    });
    this.queues.set(c.name, q);
    this.unregister.push(
      c.register(
        (key) => q.add(key),
        (key, ms) => q.addAfter(key, ms),
      ),
    );
  }

  /**
   * A failed reconcile is logged at error, except a 409 Conflict: a write that raced another writer (the
   * kubelet, another controller, the informer not having caught up) is routine and retried with backoff,
   * so it is logged at debug and counted.
   */
  private failed(controller: string, log: Logger, key: string, err: unknown, retryInMs: number): void {
    if (causes(err).some(isConflict)) {
      this.deps.onConflict?.(controller);
      log.debug({ key, err: errText(err), retryInMs }, 'reconcile hit a conflict; retrying');
      return;
    }
    log.error({ key, err: errText(err), retryInMs }, 'reconcile failed');
  }

  /** Some controller has work it can do now. */
  busy(): boolean {
    for (const q of this.queues.values()) if (q.busy()) return true;
    return false;
  }

  /** Which controllers are busy (diagnostics for the simulator's settle). */
  busyNames(): string[] {
    return [...this.queues].filter(([, q]) => q.busy()).map(([n]) => n);
  }

  queue(name: string): WorkQueue | undefined {
    return this.queues.get(name);
  }

  async stop(): Promise<void> {
    this.halted = true;
    this.waiting.abort();
    for (const u of this.unregister.splice(0)) u();
    await Promise.all([...this.queues.values()].map((q) => q.stop()));
  }

  /**
   * Stops taking work at once without waiting for running reconciles (a replica that lost its lease, or a
   * crash); whatever they still try to write is refused by the operator's fence.
   */
  halt(): void {
    this.halted = true;
    this.waiting.abort();
    for (const u of this.unregister.splice(0)) u();
    for (const q of this.queues.values()) void q.stop();
  }
}

/** The error and its causes, outermost first. */
function causes(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && depth < 5; depth++) {
    out.push(e);
    e = e instanceof Error ? e.cause : undefined;
  }
  return out;
}

/** An error as one log-friendly line, with its causes. */
export function errText(err: unknown): string {
  const parts: string[] = [];
  let e: unknown = err;
  for (let depth = 0; e !== undefined && depth < 5; depth++) {
    parts.push(e instanceof Error ? e.message : String(e));
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.join(': ');
}
