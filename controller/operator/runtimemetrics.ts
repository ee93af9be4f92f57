// controller-runtime's reconcile and workqueue metrics for one controller's work queue, under the names and
// labels Karpenter's dashboards read (controller_runtime_reconcile_*, workqueue_*; the queue's `name` and
// the `controller` label are both the controller's name, as controller-runtime sets them).
import type { Metrics } from './metrics.ts';
import type { QueueObserver, WorkQueue } from './queue.ts';

export function queueObserver(metrics: Metrics, controller: string, concurrency: number): QueueObserver {
  const q = { name: controller, controller };
  const c = { controller };
  metrics.maxConcurrentReconciles.set(c, concurrency);
  metrics.activeWorkers.set(c, 0);
  metrics.workqueueDepth.set({ ...q, priority: '0' }, 0);
  metrics.workqueueAdds.inc(q, 0);
  metrics.workqueueRetries.inc(q, 0);
  metrics.reconcileErrors.inc(c, 0);
  metrics.terminalReconcileErrors.inc(c, 0);
  metrics.reconcilePanics.inc(c, 0);
  metrics.reconcileTimeouts.inc(c, 0);
  for (const result of ['success', 'error', 'requeue', 'requeue_after'])
    metrics.reconcileTotal.inc({ controller, result }, 0);
  return {
    added() {
      metrics.workqueueAdds.inc(q);
    },
    retried() {
      metrics.workqueueRetries.inc(q);
    },
    started(waitedMs) {
      metrics.workqueueLatency.observe(q, waitedMs / 1000);
    },
    finished(tookMs, outcome, err) {
      metrics.workqueueWorkDuration.observe(q, tookMs / 1000);
      metrics.reconcileTime.observe(c, tookMs / 1000);
      metrics.reconcileTotal.inc({ controller, result: outcome });
      if (outcome !== 'error') return;
      metrics.reconcileErrors.inc(c);
      // A thrown non-Error is the nearest thing to a Go panic a reconcile can do.
      if (!(err instanceof Error)) metrics.reconcilePanics.inc(c);
    },
  };
}

/**
 * Sets the gauges of each queue's state: keys waiting, reconciles running and how long they have run (run before
 * every scrape; only a scrape reads them).
 */
export function observeInProgress(metrics: Metrics, queues: ReadonlyMap<string, WorkQueue>): void {
  for (const [controller, queue] of queues) {
    const running = queue.inProgressMs();
    const q = { name: controller, controller };
    metrics.workqueueDepth.set({ ...q, priority: '0' }, queue.depth());
    metrics.activeWorkers.set({ controller }, queue.active());
    metrics.workqueueUnfinished.set(q, running.reduce((a, ms) => a + ms, 0) / 1000);
    metrics.workqueueLongestRunning.set(q, running.length ? Math.max(...running) / 1000 : 0);
  }
}
