// Runs the controllers: one work queue each, fed by the controller's own subscriptions (register) and by
// its requeues. A singleton controller is a keyed one that only ever uses the key ''.
import type { Clock } from './clock.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';
import { WorkQueue } from './queue.ts';
import { inReconcile } from './reconcilecontext.ts';
import { observeInProgress, queueObserver } from './runtimemetrics.ts';
import type { ReconcileResult } from './result.ts';

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
}

export class Runtime {
  private readonly queues = new Map<string, WorkQueue>();
  private readonly unregister: Array<() => void> = [];
  private started = false;

  constructor(private readonly deps: { clock: Clock; log: Logger; metrics?: Metrics }, readonly controllers: readonly Controller[]) {
    const names = new Set<string>();
    for (const c of controllers) {
      if (names.has(c.name)) throw new Error(`two controllers are named ${c.name}`);
      names.add(c.name);
    }
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    for (const c of this.controllers) {
      const log = this.deps.log.child({ controller: c.name });
      const metrics = this.deps.metrics;
      const q = new WorkQueue({
        name: c.name,
        clock: this.deps.clock,
        reconcile: (key) => inReconcile(c.name, key, () => c.reconcile(key)),
        concurrency: c.concurrency ?? 10,
        onError: (key, err, retryInMs) => log.error({ key, err: errText(err), retryInMs }, 'reconcile failed'),
        ...(metrics ? { observer: queueObserver(metrics, c.name, c.concurrency ?? 10) } : {}),
      });
      this.queues.set(c.name, q);
      this.unregister.push(c.register((key) => q.add(key), (key, ms) => q.addAfter(key, ms)));
    }
  }

  /** Updates the gauges of reconciles in progress (call before a scrape). */
  observe(): void {
    if (this.deps.metrics) observeInProgress(this.deps.metrics, this.queues);
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
    for (const u of this.unregister.splice(0)) u();
    await Promise.all([...this.queues.values()].map((q) => q.stop()));
  }

  /**
   * Stops taking work at once without waiting for running reconciles (a replica that lost its lease, or a
   * crash); whatever they still try to write is refused by the operator's fence.
   */
  halt(): void {
    for (const u of this.unregister.splice(0)) u();
    for (const q of this.queues.values()) void q.stop();
  }
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
