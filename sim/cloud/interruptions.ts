// The simulator's interruption feed, with SQS's delivery semantics so the interruption controller meets
// here what it meets on AWS: scenarios push events in, the controller long-polls them out (up to 10 at a
// time), and a received message is invisible for the visibility timeout (20 s, what the AWS provider asks
// for). A message that is not deleted in that time becomes visible again and is delivered with a new
// receipt handle; deleting with a handle that is no longer the latest one succeeds without deleting (as
// SQS may). markUnavailable is handed to the simulated cloud, which keeps the interrupted offering out of
// launches.
import type { Clock, Timer } from '../../controller/operator/clock.ts';
import type {
  InterruptedCapacity,
  InterruptionEvent,
  InterruptionSource,
} from '../../controller/cloudprovider/types.ts';

/** SQS VisibilityTimeout the AWS provider's ReceiveMessage asks for. */
const VISIBILITY_TIMEOUT_MS = 20_000;

interface Message {
  readonly event: InterruptionEvent;
  /** The latest receipt handle (empty until first received). */
  handle: string;
  receives: number;
  timer?: Timer;
}

interface SimInterruptionsOptions {
  readonly clock: Clock;
  readonly onUnavailable?: (event: InterruptionEvent, capacity: InterruptedCapacity) => void;
  readonly visibilityTimeoutMs?: number;
}

export class SimInterruptions implements InterruptionSource {
  private readonly visible: Message[] = [];
  private readonly inFlight = new Map<string, Message>();
  private waiter: (() => void) | undefined;
  private seq = 0;
  /** Every handle the controller deleted with, in order (stale ones included). */
  readonly acknowledged: string[] = [];
  /** Messages actually deleted (by their latest handle). */
  readonly deleted: InterruptionEvent[] = [];
  /** What the controller reported as interrupted capacity, in order (for tests). */
  readonly marked: Array<{ readonly event: InterruptionEvent; readonly capacity: InterruptedCapacity }> = [];

  constructor(private readonly opts: SimInterruptionsOptions) {}

  markUnavailable(event: InterruptionEvent, capacity: InterruptedCapacity): void {
    this.marked.push({ event, capacity });
    this.opts.onUnavailable?.(event, capacity);
  }

  push(event: InterruptionEvent): void {
    this.makeVisible({ event, handle: '', receives: 0 });
  }

  /** Messages not deleted yet (visible or in flight). */
  pending(): number {
    return this.visible.length + this.inFlight.size;
  }

  /** How many times each pending message was delivered, by event id (tests). */
  receiveCounts(): Map<string, number> {
    return new Map([...this.visible, ...this.inFlight.values()].map((m) => [m.event.id, m.receives]));
  }

  /** Ends the visibility timeout of every message in flight now, as if it had run out (tests). */
  expireVisibility(): void {
    for (const m of [...this.inFlight.values()]) this.timeOut(m);
  }

  async receive(
    signal: AbortSignal,
  ): Promise<ReadonlyArray<{ readonly event: InterruptionEvent; readonly handle: string }>> {
    if (!this.visible.length && !signal.aborted) await this.nextVisible(signal);
    // A receiver that gave up while it waited takes nothing (its messages would be lost to it).
    if (signal.aborted) return [];
    return this.visible.splice(0, 10).map((m) => this.deliver(m));
  }

  async acknowledge(handle: string): Promise<void> {
    this.acknowledged.push(handle);
    const m = this.inFlight.get(handle);
    if (!m) return;
    m.timer?.cancel();
    this.inFlight.delete(handle);
    this.deleted.push(m.event);
  }

  private deliver(m: Message): { event: InterruptionEvent; handle: string } {
    m.handle = `sim-${++this.seq}`;
    m.receives++;
    this.inFlight.set(m.handle, m);
    m.timer = this.opts.clock.setTimer(this.opts.visibilityTimeoutMs ?? VISIBILITY_TIMEOUT_MS, () => this.timeOut(m));
    return { event: m.event, handle: m.handle };
  }

  private timeOut(m: Message): void {
    if (this.inFlight.get(m.handle) !== m) return;
    m.timer?.cancel();
    this.inFlight.delete(m.handle);
    this.makeVisible(m);
  }

  private makeVisible(m: Message): void {
    this.visible.push(m);
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  private nextVisible(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const onAbort = (): void => {
        this.waiter = undefined;
        resolve();
      };
      this.waiter = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
