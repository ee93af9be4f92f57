// The simulator's interruption feed: scenarios push events in, the interruption controller long-polls them
// out, as it would an SQS queue. Unacknowledged events are not redelivered (the simulator never loses them).
import type { InterruptionEvent, InterruptionSource } from '../types.ts';

export class SimInterruptions implements InterruptionSource {
  private readonly queue: Array<{ event: InterruptionEvent; handle: string }> = [];
  private waiter: (() => void) | undefined;
  private seq = 0;
  readonly acknowledged: string[] = [];

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
