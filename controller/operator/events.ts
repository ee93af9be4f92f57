// Kubernetes events with Karpenter's reasons, deduplicated: the same (reason, dedupe values) is written at
// most once per timeout (2 min by default, as pkg/events/recorder.go; some reasons choose their own), so a
// reconcile that runs every second does not flood the API server. Writes are fire-and-forget: a failed
// event write is logged, never fails the reconcile that published it. Like client-go's broadcaster, writes
// go through a bounded queue drained by a few workers: a batch that nominates 10,000 pods publishes 10,000
// events, and sending them all at once would hold up the NodeClaims the same batch creates. When the queue
// is full, events are dropped (client-go drops at 1,000 queued) and the drops are counted in the log.
import { toKubeTime, type Clock } from './clock.ts';
import type { KubeClient, KubeObject } from './kube.ts';
import type { Logger } from './logger.ts';
import type { Activity } from './activity.ts';

export interface EventTarget {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly apiVersion?: string;
}

export interface Event {
  readonly involved: EventTarget;
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
  /** What makes two events "the same"; default the object's kind, namespace, name and uid plus the message. */
  readonly dedupeValues?: readonly string[];
  /** Default 2 min. */
  readonly dedupeTimeoutMs?: number;
  /** A rate shared by every event that names it: past it, such events are dropped (after dedupe). */
  readonly rateLimit?: EventRate;
}

interface EventRate {
  readonly name: string;
  /** Events per second, sustained, and at once. */
  readonly qps: number;
  readonly burst: number;
}

/**
 * Karpenter's pod-nomination events share one token bucket of 5 per second, burst 10, and the ones past it are
 * not written (sigs.k8s.io/karpenter pkg/controllers/provisioning/scheduling/events.go, PodNominationRateLimiter,
 * v1.14): a batch that nominates 10,000 pods writes a handful of events, not 10,000 API requests that would
 * share the client's rate limit with the NodeClaims and Nodes the controller writes.
 */
export const POD_NOMINATION_RATE: EventRate = { name: 'pod-nomination', qps: 5, burst: 10 };

/** A token bucket that answers at once (client-go's TryAccept): a token now, or no. */
class TryBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly rate: EventRate,
    now: number,
  ) {
    this.tokens = rate.burst;
    this.last = now;
  }

  tryAccept(now: number): boolean {
    this.tokens = Math.min(this.rate.burst, this.tokens + (Math.max(0, now - this.last) / 1000) * this.rate.qps);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

interface RecordedEvent extends Event {
  readonly time: number;
}

/** Dedupe timeouts Karpenter sets for particular reasons (docs/karpenter/disruption.md §0.1). */
const REASON_TIMEOUTS: Readonly<Record<string, number>> = {
  FailedScheduling: 5 * 60_000,
  Unconsolidatable: 15 * 60_000,
  NoCompatibleInstanceTypes: 60_000,
};

const DEFAULT_DEDUPE_MS = 2 * 60_000;
/** How often ended dedupe windows are forgotten (Karpenter's cache: cache.New(2m, 10s)). */
const PRUNE_EVERY_MS = 10_000;

/** The event target of an object we hold as JSON. */
export function targetOf(obj: KubeObject, kind?: string): EventTarget {
  return {
    kind: kind ?? String(obj.kind),
    name: obj.metadata.name ?? '',
    ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
    ...(obj.metadata.uid ? { uid: obj.metadata.uid } : {}),
    ...(obj.apiVersion ? { apiVersion: obj.apiVersion } : {}),
  };
}

/** The event target of a pod we hold decoded. */
export function podTarget(p: { readonly name: string; readonly namespace: string; readonly uid: string }): EventTarget {
  return { kind: 'Pod', name: p.name, namespace: p.namespace, uid: p.uid, apiVersion: 'v1' };
}

/** A dedupe window: when it ends (ms) and the message last written in it. */
interface DedupeWindow {
  readonly until: number;
  readonly message: string;
}

/** Distinct windows shared at once (the table is emptied when full, and at every prune). */
const SHARED_WINDOWS = 10_000;

/**
 * An event's dedupe key within its reason: its one dedupe value as it is, or its values (default the object's kind,
 * namespace, name and uid plus the message) joined.
 */
function dedupeKey(e: Event): string {
  const values = e.dedupeValues;
  if (values?.length === 1) return values[0]!;
  const o = e.involved;
  return (values ?? [o.kind, o.namespace ?? '', o.name, o.uid ?? '', e.message]).join('\u0000');
}

/** Writes in flight at once, and writes waiting, before new events are dropped. */
const EVENT_WRITERS = 4;
const MAX_QUEUED_EVENTS = 1000;

export class Recorder {
  /**
   * When each dedupe key's window ends (ms) and the message last written under it, by reason and then by the dedupe
   * values. Karpenter's recorder keeps its keys in a cache with a time to live per key (pkg/events/recorder.go): a key
   * goes once its own window ends. Kept until the longest window (15 min) had passed for every key, the pods'
   * nominations of a burst held about 1 KiB a pod for 15 minutes (docs/controller-benchmark.md). Keyed by reason
   * first, an event with one dedupe value (a nomination's or a FailedScheduling's pod uid) is keyed by that string
   * itself, which its pod already holds, rather than by a new joined string. Equal windows (the same message ending
   * at the same time: a NodeClaim's pods nominated in one pass) are one object (`windows`), so a key costs its map
   * entry alone.
   */
  private readonly seen = new Map<string, Map<string, DedupeWindow>>();
  /** The window last made for each message: the one a key gets when its window ends at the same time. */
  private readonly windows = new Map<string, DedupeWindow>();
  private readonly ring: RecordedEvent[] = [];
  private lastPrune = 0;
  private readonly queue: Array<{ body: KubeObject; e: Event; done: () => void }> = [];
  private writing = 0;
  private readonly rates = new Map<string, TryBucket>();
  /** Events dropped because the write queue was full (since start). */
  dropped = 0;

  constructor(
    private readonly deps: {
      kube?: KubeClient;
      clock: Clock;
      log: Logger;
      activity?: Activity;
      keep?: number;
      writers?: number;
      maxQueued?: number;
    },
  ) {}

  /** Publishes events not seen within their dedupe timeout; returns how many were published. */
  publish(...events: readonly Event[]): number {
    return this.publishAll(events).published;
  }

  /**
   * publish(), also counting the events held back by their dedupe whose message is not the one last written
   * under their key: news the object will hear only once the timeout ends (and only if it is published again).
   */
  publishAll(events: readonly Event[]): { published: number; heldNews: number } {
    const now = this.deps.clock.now();
    this.prune(now);
    let n = 0;
    let heldNews = 0;
    for (const e of events) {
      const key = dedupeKey(e);
      let windows = this.seen.get(e.reason);
      if (!windows) this.seen.set(e.reason, (windows = new Map()));
      const timeout = e.dedupeTimeoutMs ?? REASON_TIMEOUTS[e.reason] ?? DEFAULT_DEDUPE_MS;
      const last = windows.get(key);
      if (last !== undefined && now < last.until) {
        if (last.message !== e.message) heldNews++;
        continue;
      }
      windows.set(key, this.window(now + timeout, e.message));
      if (e.rateLimit && !this.accepts(e.rateLimit, now)) continue;
      n++;
      this.ring.push({ ...e, time: now });
      if (this.ring.length > (this.deps.keep ?? 1000)) this.ring.shift();
      this.write(e, now);
    }
    return { published: n, heldNews };
  }

  private accepts(rate: EventRate, now: number): boolean {
    let bucket = this.rates.get(rate.name);
    if (!bucket) this.rates.set(rate.name, (bucket = new TryBucket(rate, now)));
    return bucket.tryAccept(now);
  }

  /** Events published recently, oldest first (for tests and the simulator's timeline). */
  recent(filter: { reason?: string; name?: string } = {}): RecordedEvent[] {
    return this.ring.filter(
      (e) => (!filter.reason || e.reason === filter.reason) && (!filter.name || e.involved.name === filter.name),
    );
  }

  private write(e: Event, now: number): void {
    const kube = this.deps.kube;
    if (!kube) return;
    const o = e.involved;
    const t = toKubeTime(now);
    const body: KubeObject = {
      metadata: { generateName: `${o.name}.`, namespace: o.namespace ?? 'default' },
      involvedObject: {
        kind: o.kind,
        name: o.name,
        ...(o.namespace ? { namespace: o.namespace } : {}),
        ...(o.uid ? { uid: o.uid } : {}),
        ...(o.apiVersion ? { apiVersion: o.apiVersion } : {}),
      },
      reason: e.reason,
      message: e.message,
      type: e.type,
      source: { component: 'karpenter' },
      reportingComponent: 'karpenter',
      firstTimestamp: t,
      lastTimestamp: t,
      count: 1,
    };
    if (this.queue.length >= (this.deps.maxQueued ?? MAX_QUEUED_EVENTS)) {
      this.dropped++;
      // The first drop and every 1,000th after it, so a flood costs a few log lines.
      if (this.dropped % 1000 === 1)
        this.deps.log.warn(
          { dropped: this.dropped, reason: e.reason, object: `${o.kind}/${o.name}` },
          'event queue full: dropping events',
        );
      return;
    }
    let done!: () => void;
    const written = new Promise<void>((resolve) => (done = resolve));
    // Counted as work in flight until written; it only ever resolves (done()), so nothing is left unhandled.
    void this.deps.activity?.track(written);
    this.queue.push({ body, e, done });
    this.pump(kube);
  }

  private pump(kube: KubeClient): void {
    while (this.writing < (this.deps.writers ?? EVENT_WRITERS) && this.queue.length) {
      const { body, e, done } = this.queue.shift()!;
      this.writing++;
      kube
        .create('Event', body)
        .then(
          () => undefined,
          (err: unknown) =>
            this.deps.log.warn(
              { err: String(err), reason: e.reason, object: `${e.involved.kind}/${e.involved.name}` },
              'writing event failed',
            ),
        )
        .finally(() => {
          this.writing--;
          done();
          this.pump(kube);
        });
    }
  }

  /** How many dedupe keys are remembered (their window has not ended, or not been pruned yet). */
  dedupeKeys(): number {
    let n = 0;
    for (const windows of this.seen.values()) n += windows.size;
    return n;
  }

  /**
   * A window ending at `until` with `message`: the one made last for this message if it ends then too (windows are
   * only read), else a new one; its message is the one string for equal messages. At most SHARED_WINDOWS are known.
   */
  private window(until: number, message: string): DedupeWindow {
    const known = this.windows.get(message);
    if (known !== undefined && known.until === until) return known;
    if (known === undefined && this.windows.size >= SHARED_WINDOWS) this.windows.clear();
    const w: DedupeWindow = { until, message: known?.message ?? message };
    this.windows.set(w.message, w);
    return w;
  }

  /** Forgets the keys whose window has ended (every 10 s at most, as often as Karpenter's cache cleans up). */
  private prune(now: number): void {
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    for (const [reason, windows] of this.seen) {
      for (const [k, { until }] of windows) if (now >= until) windows.delete(k);
      if (windows.size === 0) this.seen.delete(reason);
    }
    this.windows.clear();
  }
}

/** A time as Go prints a time.Time in UTC ("2026-12-02 14:00:00 +0000 UTC"; fractions only when there are any), as Karpenter's event texts show it. */
export function goTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  const fraction = iso.slice(20, 23).replace(/0+$/, '');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction ? `.${fraction}` : ''} +0000 UTC`;
}
