// Counts work in flight that is not a reconcile (event writes, informer restarts, launches handed to the
// cloud) so the simulator can tell when the controller is idle. In a real cluster nothing waits on it.

export class Activity {
  private inflight = 0;

  /** Tracks a promise until it settles; returns it unchanged. */
  track<T>(p: Promise<T>): Promise<T> {
    this.inflight++;
    const end = (): void => {
      this.inflight--;
    };
    p.then(end, end);
    return p;
  }

  busy(): boolean {
    return this.inflight > 0;
  }
}
