// A reactor is how each simulated control-plane component reacts to changes: kick() asks for one pass
// soon (on the next macrotask, so a burst of store events costs one pass), a kick during a pass asks for
// another pass after it, and settle() lets tests and the manual clock wait until every reactor is idle.
// Passes are synchronous and must converge: a pass writes only what differs from the desired state.

/** What a reactor can watch: a store that calls back on every change, naming the resource. */
interface ChangeSource {
  subscribe(fn: (e: { readonly resource: string }) => void): () => void;
}

export class Reactor {
  private readonly unsubscribes: Array<() => void> = [];
  private handle: NodeJS.Immediate | undefined;
  private running = false;
  private again = false;
  private closed = false;
  /** Passes run so far (for tests and diagnostics). */
  passes = 0;

  constructor(
    readonly name: string,
    private readonly pass: () => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  kick(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.handle ??= setImmediate(() => this.run());
  }

  busy(): boolean {
    return this.handle !== undefined || this.running || this.again;
  }

  /** From now until close(), every change of one of `resources` in the store kicks the reactor. */
  kickOn(store: ChangeSource, resources: ReadonlySet<string>): this {
    this.unsubscribes.push(
      store.subscribe((e) => {
        if (resources.has(e.resource)) this.kick();
      }),
    );
    return this;
  }

  close(): void {
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    this.closed = true;
    if (this.handle) clearImmediate(this.handle);
    this.handle = undefined;
    this.again = false;
  }

  private run(): void {
    this.handle = undefined;
    if (this.closed) return;
    this.running = true;
    try {
      this.passes++;
      this.pass();
    } catch (err) {
      this.onError(new Error(`sim ${this.name}: pass failed`, { cause: err }));
    } finally {
      this.running = false;
    }
    if (this.again) {
      this.again = false;
      this.kick();
    }
  }
}

/**
 * Waits (macrotask by macrotask) until no reactor has work. Throws naming the busy reactors if they have
 * not settled after `maxTurns` turns: a reactor that keeps kicking itself is a bug in its pass.
 */
export async function settleReactors(reactors: readonly Reactor[], maxTurns = 100_000): Promise<void> {
  for (let turn = 0; turn < maxTurns; turn++) {
    if (!reactors.some((r) => r.busy())) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  const busy = reactors.filter((r) => r.busy()).map((r) => r.name);
  throw new Error(`sim: reactors did not settle after ${maxTurns} turns (still busy: ${busy.join(', ')})`);
}
