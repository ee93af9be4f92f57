// The pool's workers' young generation: a floor under its size, so that a worker back from a long idle does not
// start its next batch at a shrunken new space. V8 shrinks a new space at the first collection after an idle of
// about 30 s (the allocation rate it measures is low) and grows it again only as objects survive; a worker that runs
// half of a batch's jobs regrows at half the rate and so scavenged 2-3 times as often per job as one that runs them
// all (docs/benchmarks.md, "Worker pool"). Node gives a worker only the young generation's maximum
// (resourceLimits.maxYoungGenerationSizeMb) and refuses V8 flags in a worker's execArgv; V8's
// `--min-semi-space-size` is the process's, read when an isolate is created. So the pool sets it while its workers
// start (its first ones, and one piscina starts in place of a worker that died) and puts it back once they run:
// isolates created outside those windows (the main thread's, other code's workers) keep V8's default. Another
// thread that creates an isolate inside a window (a worker started at the same moment) gets the floor too.
import { setFlagsFromString } from 'node:v8';
import type { Worker } from 'node:worker_threads';

/**
 * The floor the pool gives its workers' semi-spaces, MiB: Node's maximum for a worker (a 48 MiB young generation is
 * 16 MiB semi-spaces), so a busy worker's new space is the size it grows to anyway; the floor keeps it there when
 * idle (what a busy worker had resident, not more).
 */
export const WORKER_MIN_SEMI_SPACE_MB = 16;

/** The floors asked for by pools whose workers are starting now (several pools may start at once). */
const held: number[] = [];

function apply(): void {
  setFlagsFromString(`--min-semi-space-size=${held.length === 0 ? 0 : Math.max(...held)}`);
}

/**
 * Whether the command line gave the process its own `--min-semi-space-size` (then it is every isolate's and left
 * alone). The engine reads no environment: a process that sets it in NODE_OPTIONS gives the pool minSemiSpaceMb 0.
 */
function setByProcess(): boolean {
  return process.execArgv.some((a) => /^--min[-_]semi[-_]space[-_]size(=|$)/.test(a));
}

/**
 * Raises the semi-space floor of isolates created from now on to `mib` (0: leave V8's default), until the returned
 * function is called; the flag goes back to V8's default (0) once no start holds it.
 */
export function holdMinSemiSpace(mib: number): () => void {
  if (!Number.isSafeInteger(mib) || mib < 0)
    throw new Error(`engine pool minSemiSpaceMb must be a whole number of MiB >= 0, got ${mib}`);
  if (mib === 0 || setByProcess()) return () => {};
  held.push(mib);
  apply();
  let released = false;
  return () => {
    if (released) return;
    released = true;
    held.splice(held.indexOf(mib), 1);
    apply();
  };
}

/** Resolves once every one of `workers` runs JavaScript (its isolate exists) or has exited. */
export function started(workers: readonly Worker[]): Promise<void> {
  return Promise.all(
    workers.map(
      (w) =>
        new Promise<void>((resolve) => {
          w.once('online', () => resolve());
          w.once('exit', () => resolve());
        }),
    ),
  ).then(() => undefined);
}
