// Watch events reach cluster state a bounded slice at a time. A socket read can hand client-node's watch
// hundreds of events at once (libuv reads a ready socket up to 32 times 64 KiB in one callback, and every
// socket that became ready while the loop was busy is read in the same poll phase): handled as they were
// parsed, a burst of pod removals held the event loop for most of a second at 100,000 pods. Here the read
// path only queues each event, in a lane per kind; a turn of the event loop (setImmediate) handles events
// until it has spent BUDGET_MS or handled MAX_EVENTS, taking them from the lanes in turn, so timers, lease
// renewals, probes and scrapes run in between, and a Node or NodeClaim event never waits behind a burst of
// 100,000 pod events. Within a lane the order is the order of arrival (a watch's order); between kinds there
// was never an order (each kind is its own watch connection). The slice only decides when an event is
// handled, never what it does, so cluster state ends the same whatever the slicing.

/** Wall time a turn may spend handling events before it yields (it bounds the loop's hold, not a decision). */
const BUDGET_MS = 8;
/** Events a turn handles at most, however cheap they are. */
export const MAX_EVENTS = 512;
/** The clock is read once per this many events. */
const CLOCK_EVERY = 8;
/** A backlog at least this long is reported (onBacklog) once it has drained. */
const BACKLOG_REPORTED = 10_000;

/** Steps in arrival order: a head index instead of Array.shift, which moves every remaining item. */
class Lane {
  private items: Array<(() => void) | undefined> = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(step: () => void): void {
    this.items.push(step);
  }

  shift(): (() => void) | undefined {
    if (this.head >= this.items.length) return undefined;
    const step = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return step;
  }
}

/** A backlog that drained: the most steps queued at once, and the versions merged into queued ones meanwhile. */
interface Backlog {
  readonly peak: number;
  readonly merged: number;
}

interface DeliveryOptions {
  readonly budgetMs?: number;
  /** Called when a backlog of at least BACKLOG_REPORTED steps has drained (the main thread fell behind its watches). */
  readonly onBacklog?: (b: Backlog) => void;
  readonly maxEvents?: number;
  /** Milliseconds, monotonic (tests pass their own). */
  readonly now?: () => number;
}

/**
 * Lanes of steps run a slice per turn of the event loop, one step from each non-empty lane in turn. A step that
 * throws is reported to `onError` and the rest still run.
 */
export class SlicedDelivery {
  private readonly lanes = new Map<string, Lane>();
  /** The lane the next turn starts with (turns start where the last one stopped, so no lane is favoured). */
  private next = 0;
  private scheduled: ReturnType<typeof setImmediate> | undefined;
  /** Moves on clear(): a turn in progress stops taking steps from the lanes it started with. */
  private epoch = 0;
  private readonly budgetMs: number;
  private readonly maxEvents: number;
  private readonly now: () => number;
  private readonly onBacklog: ((b: Backlog) => void) | undefined;
  private queued = 0;
  /** Since the queue was last empty: the most steps queued, and events merged into queued steps (WatchEvents). */
  private peak = 0;
  private mergedSince = 0;

  constructor(
    private readonly onError: (err: unknown) => void,
    opts: DeliveryOptions = {},
  ) {
    this.budgetMs = opts.budgetMs ?? BUDGET_MS;
    this.maxEvents = opts.maxEvents ?? MAX_EVENTS;
    this.now = opts.now ?? (() => performance.now());
    this.onBacklog = opts.onBacklog;
  }

  /** Steps queued and not yet run. */
  get pending(): number {
    return this.queued;
  }

  /** An event was merged into a queued step instead of queueing one (WatchEvents): counted for onBacklog. */
  merged(): void {
    this.mergedSince++;
  }

  /** Queues `step` behind every step queued in `lane` before it. */
  push(lane: string, step: () => void): void {
    let l = this.lanes.get(lane);
    if (!l) this.lanes.set(lane, (l = new Lane()));
    l.push(step);
    if (++this.queued > this.peak) this.peak = this.queued;
    if (!this.scheduled) this.scheduled = setImmediate(() => this.run());
  }

  /** Drops every queued step (the informers are stopping). */
  clear(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.lanes.clear();
    this.queued = 0;
    this.peak = 0;
    this.mergedSince = 0;
    this.epoch++;
  }

  private run(): void {
    // `scheduled` stays set while the slice runs: a step that queues another does not schedule a second run.
    const deadline = this.now() + this.budgetMs;
    const epoch = this.epoch;
    let ran = 0;
    let idle = 0;
    const lanes = [...this.lanes.values()];
    while (ran < this.maxEvents && lanes.length > 0 && idle < lanes.length) {
      const lane = lanes[this.next++ % lanes.length]!;
      const step = lane.shift();
      if (!step) {
        idle++;
        continue;
      }
      idle = 0;
      this.queued--;
      this.runStep(step);
      if (this.epoch !== epoch) break;
      if (++ran % CLOCK_EVERY === 0 && this.now() >= deadline) break;
    }
    if (this.queued > 0) this.scheduled = setImmediate(() => this.run());
    else {
      this.scheduled = undefined;
      this.drained();
    }
  }

  private drained(): void {
    const backlog = { peak: this.peak, merged: this.mergedSince };
    this.peak = 0;
    this.mergedSince = 0;
    if (backlog.peak >= BACKLOG_REPORTED) this.onBacklog?.(backlog);
  }

  private runStep(step: () => void): void {
    try {
      step();
    } catch (err) {
      this.onError(err);
    }
  }
}

/** Watch phases that carry a new version of an object (a delete ends the object; an error or bookmark is no object). */
const APPLY_PHASES = new Set(['ADDED', 'MODIFIED']);

/** A queued add or update: the newest version of its object that has arrived so far. */
interface Waiting {
  phase: string;
  obj: unknown;
}

const uidOf = (obj: unknown): string | undefined => {
  const uid = (obj as { metadata?: { uid?: unknown } } | null | undefined)?.metadata?.uid;
  return typeof uid === 'string' && uid !== '' ? uid : undefined;
};

const versionOf = (obj: unknown): string | undefined => {
  const rv = (obj as { metadata?: { resourceVersion?: unknown } } | null | undefined)?.metadata?.resourceVersion;
  return typeof rv === 'string' && rv !== '' ? rv : undefined;
};

/**
 * One watch stream's events into a delivery lane, with at most one add or update of an object (by uid) waiting:
 * an add or update of an object whose earlier add or update is still queued replaces that one's version in its
 * place in the lane (client-go's DeltaFIFO likewise keeps one entry per object at its first position,
 * tools/cache/delta_fifo.go). A set-up writes each pod and then its status faster than the handlers keep up, and
 * the lane held every version (150,518 events, 170 MiB, at 5,000 nodes); an informer needs only the newest.
 * A delete is never merged or dropped: it is queued in its own place, after the object's waiting update (handled
 * first, so handlers that learned of the object from that update see it removed), and an add after it is a new
 * entry. Errors and bookmarks keep their places. So every object's events are handled in the watch's order, and
 * the handled events are the arrived ones less superseded versions. When the stream's newest event was merged
 * into an earlier place, the last event handled is an older version (a's 3 handled in a's place, then b's 2), and
 * ListWatch takes the version of the last event it handled as its resume point and "seen up to". So once the
 * stream's queued steps have all run (everything that arrived is handled), and before its end, a bookmark of the
 * newest version is handed on: ListWatch is then where one event at a time would have left it. (Without it the
 * informer looked behind until the next event: the simulation's settle waited on it for good.)
 */
export class WatchEvents {
  private readonly waiting = new Map<string, Waiting>();
  /** The newest event's resourceVersion, while that event was merged into an earlier place. */
  private mergedLast: string | undefined;
  /** Events that replaced a queued version instead of queueing one more. */
  merged = 0;
  /** This stream's steps in the lane, not yet run. */
  private queued = 0;

  constructor(
    private readonly delivery: SlicedDelivery,
    private readonly lane: string,
    /** Handles an event in its turn (the phase and object as the watch delivered them). */
    private readonly handle: (phase: string, obj: unknown) => void,
  ) {}

  /** Queues an event of the stream, or brings a queued version of its object up to this one. */
  event(phase: string, obj: unknown): void {
    const uid = uidOf(obj);
    if (uid !== undefined && APPLY_PHASES.has(phase)) {
      const queued = this.waiting.get(uid);
      if (queued) {
        queued.obj = obj;
        this.merged++;
        this.delivery.merged();
        this.mergedLast = versionOf(obj);
        return;
      }
      this.queueApply(uid, { phase, obj });
      return;
    }
    // A delete ends the object's waiting entry (that entry stays queued before it); anything else has no object.
    if (uid !== undefined && phase === 'DELETED') this.waiting.delete(uid);
    this.mergedLast = undefined;
    this.queue(() => this.handle(phase, obj));
  }

  /** Queues the stream's end behind its events (after a bookmark of the newest version, if that was merged). */
  end(then: () => void): void {
    this.queue(() => {
      this.caughtUp();
      then();
    });
  }

  private queueApply(uid: string, entry: Waiting): void {
    this.waiting.set(uid, entry);
    this.mergedLast = undefined;
    this.queue(() => {
      if (this.waiting.get(uid) === entry) this.waiting.delete(uid);
      this.handle(entry.phase, entry.obj);
    });
  }

  /** Queues a step of this stream; the last of its queued steps to run brings the handled version up to the newest. */
  private queue(step: () => void): void {
    this.queued++;
    this.delivery.push(this.lane, () => {
      this.queued--;
      try {
        step();
      } finally {
        if (this.queued === 0) this.caughtUp();
      }
    });
  }

  /**
   * Everything that arrived has been handled: if the newest event was merged into an earlier place, the last one
   * handled is an older version, and ListWatch would hold that (its resume point and "seen up to") until the next
   * event; a bookmark of the newest version brings it to where one event at a time would have left it.
   */
  private caughtUp(): void {
    const rv = this.mergedLast;
    this.mergedLast = undefined;
    if (rv !== undefined) this.handle('BOOKMARK', { metadata: { resourceVersion: rv } });
  }
}
