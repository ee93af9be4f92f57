// The provisioning batch window (docs/karpenter/scheduling.md §2.20): the first trigger opens it; it closes once no
// trigger came for `idleMs`, or `maxMs` after it opened, whichever is first. Closing calls `onClose` once.
import type { Clock, Timer } from '../../operator/clock.ts';

export class Batcher {
  private openedAt: number | undefined;
  private idle: Timer | undefined;
  private max: Timer | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly idleMs: number,
    private readonly maxMs: number,
    private readonly onClose: () => void,
  ) {}

  trigger(): void {
    const now = this.clock.now();
    if (this.openedAt === undefined) {
      this.openedAt = now;
      this.max = this.clock.setTimer(this.maxMs, () => this.close());
    }
    this.idle?.cancel();
    const left = this.openedAt + this.maxMs - now;
    this.idle = this.clock.setTimer(Math.min(this.idleMs, Math.max(0, left)), () => this.close());
  }

  isOpen(): boolean {
    return this.openedAt !== undefined;
  }

  stop(): void {
    this.idle?.cancel();
    this.max?.cancel();
    this.openedAt = undefined;
  }

  private close(): void {
    if (this.openedAt === undefined) return;
    this.stop();
    this.onClose();
  }
}
