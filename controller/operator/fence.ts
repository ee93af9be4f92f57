// A fence around everything that changes the world (Kubernetes writes, cloud launches and terminations).
// With leader election it is shut until this replica leads and shut again the moment it stops leading,
// so a replica that lost its lease (or was killed) cannot act twice alongside the new leader, not even
// from a reconcile that was already running.

export class FencedError extends Error {
  override name = 'FencedError';
}

export class Fence {
  private reason: string | undefined;

  constructor(shutReason?: string) {
    this.reason = shutReason;
  }

  get isOpen(): boolean {
    return this.reason === undefined;
  }

  open(): void {
    this.reason = undefined;
  }

  shut(reason: string): void {
    this.reason = reason;
  }

  /** Throws FencedError naming what was refused and why, while shut. */
  check(what: string): void {
    if (this.reason !== undefined) throw new FencedError(`${what} refused: ${this.reason}`);
  }
}
