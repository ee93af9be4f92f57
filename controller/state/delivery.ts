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

interface DeliveryOptions {
  readonly budgetMs?: number;
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

  constructor(
    private readonly onError: (err: unknown) => void,
    opts: DeliveryOptions = {},
  ) {
    this.budgetMs = opts.budgetMs ?? BUDGET_MS;
    this.maxEvents = opts.maxEvents ?? MAX_EVENTS;
    this.now = opts.now ?? (() => performance.now());
  }

  /** Steps queued and not yet run. */
  get pending(): number {
    let n = 0;
    for (const l of this.lanes.values()) n += l.length;
    return n;
  }

  /** Queues `step` behind every step queued in `lane` before it. */
  push(lane: string, step: () => void): void {
    let l = this.lanes.get(lane);
    if (!l) this.lanes.set(lane, (l = new Lane()));
    l.push(step);
    if (!this.scheduled) this.scheduled = setImmediate(() => this.run());
  }

  /** Drops every queued step (the informers are stopping). */
  clear(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.lanes.clear();
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
      this.runStep(step);
      if (this.epoch !== epoch) break;
      if (++ran % CLOCK_EVERY === 0 && this.now() >= deadline) break;
    }
    if (this.pending > 0) this.scheduled = setImmediate(() => this.run());
    else this.scheduled = undefined;
  }

  private runStep(step: () => void): void {
    try {
      step();
    } catch (err) {
      this.onError(err);
    }
  }
}
