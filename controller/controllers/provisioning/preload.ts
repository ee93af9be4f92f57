// Work done for a provisioning decision while its batch window is still open. A window closes a second after
// its last pod arrived; by then:
//
// - the engine's warm model already holds the batch's pods (shipped `CHUNK` at a time as they arrive, one call
//   in flight, so no single call holds the event loop for long), so the decision ships only what changed since
//   (the pending list, the clock) instead of every pod of the batch;
// - and once the window has been quiet for a moment (SETTLE_MS, no triggering change), the decision has been
//   solved speculatively: the provisioner takes the snapshot a close would take now and asks the engine to
//   solve it and keep the plan (ClusterEngine.speculate). When the window closes, the decision takes its own
//   snapshot as always; if nothing in it differs from the speculative one but the clock, the engine answers
//   with the kept plan, which is the plan the solve at the close would make (same input, deterministic solver).
//   Any change since (a pod, a node, a NodePool, ...) makes the decision solve as it would without any of this.
//   So a change that does not trigger provisioning but may alter the decision's snapshot (a NodeClaim or node of
//   an earlier decision registering or going away, a pod bound, a DaemonSet, a NodePool's status) makes the kept
//   plan stale too: the window solves ahead once more when the cluster has been quiet for SETTLE_MS (no change
//   of any kind), so a burst of such changes brings one solve, and a steady stream of them (churn) none, where
//   no plan could stay current until the close anyway. Were it left stale, the close solved every pod afresh
//   (10,000 pods: ~500 ms). A re-solve over a snapshot that turns out unchanged ships nothing (the engine takes
//   its kept plan).
//   A triggering change that comes while a speculative solve runs calls that solve off (no decision will take its
//   plan): otherwise the pods' preload, the next speculative solve and the close itself all waited for it on the
//   model's worker, and a solve of 10,000 pods that began in a lull of the pods' arrival held the decision that
//   followed the last of them.
// - At the close the decision takes its snapshot, then settles the solve ahead still in flight, if one is
//   (`atClose`): when no change of any kind came since that solve took its own snapshot, the decision's snapshot is
//   the same but for the clock, so the decision waits for that solve and takes its plan (less than solving again);
//   when one did, the decision would throw that plan away, so the solve is called off and the decision's own solve
//   runs at once instead of after it.
//
// Nothing is decided here: the plan always comes from the snapshot taken when the window closes.
//
// Pods are collected from the change stream (only the ones that opened or extended the window), looked up in
// cluster state when the timer fires (a pod bound or deleted meanwhile is skipped).
import type { Pod } from '../../../engine/index.ts';
import type { Clock, Timer } from '../../operator/clock.ts';
import type { Change } from '../../state/changes.ts';

interface PreloadDeps {
  readonly clock: Clock;
  /** The pod as cluster state holds it now (undefined once it is gone). */
  readonly pod: (namespace: string, name: string) => Pod | undefined;
  /** The engine's preload; absent when the engine keeps no model (nothing to preload). */
  readonly preload?: (pods: readonly Pod[]) => Promise<void>;
  /**
   * Solves the decision the window would make if it closed now, for the engine to keep; absent: no model. `why`:
   * pods arrived since the last solve ahead, or only changes that trigger nothing came (its plan is stale).
   */
  readonly speculate?: (why: 'pods' | 'changed') => Promise<void>;
  /** Calls off the speculative solve in flight (its batch changed). */
  readonly callOffSpeculation?: () => void;
  /** The batch window's idle duration, ms (a speculation starts well before the window can close). */
  readonly idleMs: number;
  /** Whether shipping now is worthwhile (cluster state synced, no decision running). */
  readonly ready: () => boolean;
  readonly onError: (err: unknown) => void;
}

/** After a pod arrives, wait this long for more before shipping (pods of a batch come in bursts). */
const DELAY_MS = 100;
/** Pods per call: bounds how long one call holds the event loop (diff and pack on this thread). */
const CHUNK = 2_000;
/** Quiet this long (a quarter of the idle duration at most) before a speculative solve. */
const SETTLE_MS = 200;

/**
 * What the decision at the close found of the solve ahead (`PendingPreloader.atClose`): none in flight, one in
 * flight over the same cluster (the decision waits for it and takes its plan), or one the cluster moved past since
 * (called off: the decision solves at once).
 */
export type AheadAtClose = 'none in flight' | 'in flight' | 'called off';

export class PendingPreloader {
  private readonly waiting = new Set<string>();
  private timer: Timer | undefined;
  private inFlight = false;
  /** A speculative solve is in flight. */
  private speculating = false;
  /** A change of any kind came since the speculative solve in flight began (it took its snapshot after that). */
  private overtaken = false;
  private stopped = false;
  /** A triggering change came since the last speculative solve (or none was made yet). */
  private unsolved = false;
  /** A change that may alter the decision's snapshot, but triggers nothing, came since the last speculative solve. */
  private stale = false;
  /** When the last triggering change came. */
  private lastChange = 0;
  /** When the last change of any kind came. */
  private lastAny = 0;

  constructor(private readonly deps: PreloadDeps) {}

  /** A change that triggers provisioning: a pending pod to ship, and a decision to solve again. */
  saw(c: Change): void {
    if (!this.deps.preload && !this.deps.speculate) return;
    if (this.deps.preload && c.kind === 'Pod' && c.type === 'upsert')
      this.waiting.add(`${c.namespace ?? ''}/${c.name}`);
    this.unsolved = Boolean(this.deps.speculate);
    if (this.speculating) this.overtaken = true;
    // Not while a decision runs: the close may be waiting for this very plan (its snapshot was taken before this
    // change); `atClose` settles it against the decision's own snapshot.
    if (this.speculating && this.deps.ready()) this.deps.callOffSpeculation?.();
    this.lastChange = this.lastAny = this.deps.clock.now();
    this.schedule(DELAY_MS);
  }

  /**
   * A change that may alter what the decision reads but triggers nothing. While the window is open the plan solved
   * ahead (or under way) is stale, and the window solves ahead again once no change has come for a moment; open or
   * not, the solve in flight no longer matches the cluster (`atClose`).
   */
  changed(windowOpen: boolean): void {
    if (!this.deps.speculate) return;
    if (this.speculating) this.overtaken = true;
    if (!windowOpen) return;
    this.stale = true;
    this.lastAny = this.deps.clock.now();
    this.schedule(DELAY_MS);
  }

  /** Forgets what is waiting (a decision is about to ship everything anyway). */
  clear(): void {
    this.waiting.clear();
    this.unsolved = false;
    this.stale = false;
    this.timer?.cancel();
    this.timer = undefined;
  }

  /**
   * The decision at the close has taken its snapshot: a solve ahead still in flight that a change overtook since it
   * began is called off (the decision would throw its plan away; it should not wait for it), one that nothing
   * overtook is left to finish (its plan is the decision's). Says which, for the decision's account.
   */
  atClose(): AheadAtClose {
    if (!this.speculating) return 'none in flight';
    if (!this.overtaken) return 'in flight';
    this.deps.callOffSpeculation?.();
    return 'called off';
  }

  stop(): void {
    this.stopped = true;
    this.clear();
  }

  private schedule(ms: number): void {
    if (this.timer || this.inFlight || this.stopped) return;
    this.timer = this.deps.clock.setTimer(ms, () => {
      this.timer = undefined;
      void this.step();
    });
  }

  /**
   * Ships waiting pods, or once none wait and the window has settled, solves ahead; then looks again. Settled:
   * no triggering change for SETTLE_MS when one came since the last solve ahead, else (only the plan is stale) no
   * change at all for SETTLE_MS.
   */
  private async step(): Promise<void> {
    if ((!this.waiting.size && !this.unsolved && !this.stale) || this.stopped) return;
    // A decision is running (it ships what it needs itself) or state is not synced: look again shortly.
    if (!this.deps.ready()) return this.schedule(DELAY_MS);
    const settle = Math.min(SETTLE_MS, this.deps.idleMs / 4);
    const quietFor = this.deps.clock.now() - (this.unsolved ? this.lastChange : this.lastAny);
    if (!this.waiting.size && quietFor < settle) return this.schedule(settle - quietFor);
    this.inFlight = true;
    try {
      if (this.waiting.size) await this.ship();
      else {
        const why = this.unsolved ? 'pods' : 'changed';
        this.unsolved = false;
        this.stale = false;
        this.speculating = true;
        this.overtaken = false;
        await this.deps.speculate!(why);
      }
    } catch (err) {
      this.deps.onError(err);
    } finally {
      this.inFlight = false;
      this.speculating = false;
    }
    if (this.waiting.size || this.unsolved || this.stale) this.schedule(0);
  }

  private async ship(): Promise<void> {
    const pods = this.take();
    if (pods.length) await this.deps.preload!(pods);
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
