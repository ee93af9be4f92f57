// Watch events reach cluster state a bounded slice at a time. A socket read can hand client-node's watch
// hundreds of events at once (libuv reads a ready socket up to 32 times 64 KiB in one callback, and every
// socket that became ready while the loop was busy is read in the same poll phase): handled as they are
// parsed, a burst of pod removals held the event loop for most of a second at 100,000 pods. Here the read
// path only queues each event; the events are handled in arrival order, at most SLICE of them per turn of
// the event loop (setImmediate), so timers, lease renewals, probes and scrapes get their turns in between.
// One queue serves every informer, so events of different kinds keep the order in which they arrived, as
// when they were handled on arrival. The slice is a count of events (work), not a time.

/** Events handled per turn of the event loop. */
export const SLICE = 64;

/**
 * A FIFO of steps run `slice` at a time with a turn of the event loop between slices. A step that throws is
 * reported to `onError` and the rest still run.
 */
export class SlicedDelivery {
  private items: Array<() => void> = [];
  private head = 0;
  private scheduled: ReturnType<typeof setImmediate> | undefined;

  constructor(
    private readonly onError: (err: unknown) => void,
    private readonly slice = SLICE,
  ) {}

  /** Steps queued and not yet run. */
  get pending(): number {
    return this.items.length - this.head;
  }

  /** Queues `step` behind every step queued before it. */
  push(step: () => void): void {
    this.items.push(step);
    if (!this.scheduled) this.scheduled = setImmediate(() => this.run());
  }

  /** Drops every queued step (the informers are stopping). */
  clear(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.items = [];
    this.head = 0;
  }

  private run(): void {
    // `scheduled` stays set while the slice runs: a step that queues another does not schedule a second run.
    const end = this.head + this.slice;
    while (this.head < end && this.head < this.items.length) {
      const step = this.items[this.head]!;
      this.items[this.head++] = undefined as never;
      try {
        step();
      } catch (err) {
        this.onError(err);
      }
    }
    if (this.head >= this.items.length) {
      this.items = [];
      this.head = 0;
      this.scheduled = undefined;
    } else {
      if (this.head >= 1024 && this.head * 2 >= this.items.length) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
      this.scheduled = setImmediate(() => this.run());
    }
  }
}
