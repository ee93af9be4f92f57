// The simulator's interruption feed: scenarios push events in, the interruption controller long-polls them
// out, as it would an SQS queue. Unacknowledged events are not redelivered (the simulator never loses them).
// markUnavailable is handed to the simulated cloud, which keeps the interrupted offering out of launches.
import type { InterruptedCapacity, InterruptionEvent, InterruptionSource } from '../../controller/cloudprovider/types.ts';

export class SimInterruptions implements InterruptionSource {
  private readonly queue: Array<{ event: InterruptionEvent; handle: string }> = [];
  private waiter: (() => void) | undefined;
  private seq = 0;
  readonly acknowledged: string[] = [];
  /** What the controller reported as interrupted capacity, in order (for tests). */
  readonly marked: Array<{ readonly event: InterruptionEvent; readonly capacity: InterruptedCapacity }> = [];

  constructor(private readonly onUnavailable?: (event: InterruptionEvent, capacity: InterruptedCapacity) => void) {}

  markUnavailable(event: InterruptionEvent, capacity: InterruptedCapacity): void {
    this.marked.push({ event, capacity });
    this.onUnavailable?.(event, capacity);
  }

  push(event: InterruptionEvent): void {
    this.queue.push({ event, handle: `sim-${++this.seq}` });
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  pending(): number {
    return this.queue.length;
  }

  async receive(signal: AbortSignal): Promise<ReadonlyArray<{ readonly event: InterruptionEvent; readonly handle: string }>> {
    if (!this.queue.length && !signal.aborted) {
      await new Promise<void>((resolve) => {
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
    return this.queue.splice(0, 10);
  }

  async acknowledge(handle: string): Promise<void> {
    this.acknowledged.push(handle);
  }
}
