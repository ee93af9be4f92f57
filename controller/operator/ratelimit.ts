// client-go's client-side rate limit (KUBE_CLIENT_QPS, KUBE_CLIENT_BURST): a token bucket that holds
// `burst` requests and refills at `qps` per second of wall time; a request waits for a token. Requests
// are served in arrival order.
export class TokenBucket {
  private tokens: number;
  private last = performance.now();
  private readonly waiting: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }

  /** Resolves when the request may go. */
  take(): Promise<void> {
    this.refill();
    if (!this.waiting.length && this.tokens >= 1) {
      this.tokens -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  private refill(): void {
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
  }

  private schedule(): void {
    if (this.timer) return;
    const wait = Math.max(1, Math.ceil(((1 - this.tokens) / this.qps) * 1000));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.refill();
      while (this.waiting.length && this.tokens >= 1) {
        this.tokens -= 1;
        this.waiting.shift()!();
      }
      if (this.waiting.length) this.schedule();
    }, wait);
    this.timer.unref?.();
  }
}
