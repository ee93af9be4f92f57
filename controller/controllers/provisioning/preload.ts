// Pending pods shipped to the engine's warm model while the batch window is still open. A window closes a
// second after its last pod arrived; by then the model already holds the batch's pods, so the decision ships
// only what changed since (the pending list, the clock) instead of every pod of the batch, and the time from
// the window closing to the first NodeClaim is the decision itself. Nothing is decided here: the plan comes
// from the snapshot taken when the window closes, exactly as without the preload.
//
// Pods are collected from the change stream (only the ones that opened or extended the window), looked up in
// cluster state when the timer fires (a pod bound or deleted meanwhile is skipped), and shipped `chunk` at a
// time, one call in flight, so no single call holds the event loop for long.
import type { Pod } from '../../../engine/index.ts';
import type { Clock, Timer } from '../../operator/clock.ts';
import type { Change } from '../../state/changes.ts';

interface PreloadDeps {
  readonly clock: Clock;
  /** The pod as cluster state holds it now (undefined once it is gone). */
  readonly pod: (namespace: string, name: string) => Pod | undefined;
  /** The engine's preload; absent when the engine keeps no model (nothing to preload). */
  readonly preload?: (pods: readonly Pod[]) => Promise<void>;
  /** Whether shipping now is worthwhile (cluster state synced, no decision running). */
  readonly ready: () => boolean;
  readonly onError: (err: unknown) => void;
}

/** After a pod arrives, wait this long for more before shipping (pods of a batch come in bursts). */
const DELAY_MS = 100;
/** Pods per call: bounds how long one call holds the event loop (diff and pack on this thread). */
const CHUNK = 2_000;

export class PendingPreloader {
  private readonly waiting = new Set<string>();
  private timer: Timer | undefined;
  private inFlight = false;
  private stopped = false;

  constructor(private readonly deps: PreloadDeps) {}

  /** A pending pod that triggers provisioning arrived or changed. */
  saw(c: Change): void {
    if (!this.deps.preload || c.kind !== 'Pod' || c.type !== 'upsert') return;
    this.waiting.add(`${c.namespace ?? ''}/${c.name}`);
    this.schedule(DELAY_MS);
  }

  /** Forgets what is waiting (a decision is about to ship everything anyway). */
  clear(): void {
    this.waiting.clear();
    this.timer?.cancel();
    this.timer = undefined;
  }

  stop(): void {
    this.stopped = true;
    this.clear();
  }

  private schedule(ms: number): void {
    if (this.timer || this.inFlight || this.stopped) return;
    this.timer = this.deps.clock.setTimer(ms, () => {
      this.timer = undefined;
      void this.ship();
    });
  }

  private async ship(): Promise<void> {
    if (!this.waiting.size || this.stopped) return;
    // A decision is running (it ships what it needs itself) or state is not synced: look again shortly.
    if (!this.deps.ready()) return this.schedule(DELAY_MS);
    const pods = this.take();
    if (!pods.length) return;
    this.inFlight = true;
    try {
      await this.deps.preload!(pods);
    } catch (err) {
      this.deps.onError(err);
    } finally {
      this.inFlight = false;
    }
    if (this.waiting.size) this.schedule(0);
  }

  /** Up to CHUNK waiting pods that are still pending, in arrival order. */
  private take(): Pod[] {
    const out: Pod[] = [];
    for (const key of this.waiting) {
      if (out.length >= CHUNK) break;
      this.waiting.delete(key);
      const slash = key.indexOf('/');
      const p = this.deps.pod(key.slice(0, slash), key.slice(slash + 1));
      if (p && !p.nodeName) out.push(p);
    }
    return out;
  }
}
