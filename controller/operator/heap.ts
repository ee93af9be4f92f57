// The controller's heap policy (HEAP_GROWING_PERCENT). After each full collection V8 lets a heap grow to its live
// data times a growing factor before the next one; it picks the factor (up to 4) from how fast it collects and how
// large the heap may become, and Node lets each thread's heap become half the memory it sees (the container's limit
// in a container), at most 4 GiB: on a host with 16 GiB or more the factor goes to 4. A controller with 251 MiB of
// live data at 5,000 nodes ran with 1.2 GiB of heap on its main thread, most of it garbage not yet collected and
// room kept after growing (docs/controller-benchmark.md, "The heap's growing factor"). A fixed factor keeps each
// heap near its live data wherever the controller runs; the controller's default is 20 (options.ts), which held the
// process under 512 MiB at 5,000 nodes in a 1 GiB container. It is not a cap: a heap still grows as far as its live
// data needs, up to the limit Node sets.
import { setFlagsFromString } from 'node:v8';
import type { ResourceLimits } from 'node:worker_threads';

/**
 * Sets V8's growing factor to 1 + percent/100; 0 leaves it as the process started (V8's own choice, or Node's
 * `--heap-growing-percent` flag when given). The flag is the process's, so the engine's worker threads collect by
 * the same rule; V8 reads it at every full collection, so it applies from the next one.
 */
export function applyHeapPolicy(percent: number): void {
  if (!Number.isSafeInteger(percent) || percent < 0)
    throw new Error(`heap growing percent must be a whole number >= 0, got ${percent}`);
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/**
 * The engine workers' heap limit, apart from the main thread's (ENGINE_WORKER_HEAP_MIB). V8 gives every thread the
 * process's `--max-old-space-size` when the process was started with one (NODE_OPTIONS or the command line) and then
 * ignores a worker's own `resourceLimits`. So for a limit of its own this clears that flag (the main thread's heap is
 * sized by then; a worker reads the flags when its thread starts) and returns the workers' limits: call it before
 * the engine's workers start. 0 changes nothing: the workers take the process's limit, or Node's for a thread.
 */
export function engineWorkerHeap(mib: number): ResourceLimits | undefined {
  if (!Number.isSafeInteger(mib) || mib < 0)
    throw new Error(`engine worker heap must be a whole number of MiB >= 0, got ${mib}`);
  if (mib === 0) return undefined;
  setFlagsFromString('--max-old-space-size=0');
  return { maxOldGenerationSizeMb: mib };
}

/**
 * The engine pool's semi-space floor when the process was started with its own `--min-semi-space-size` in
 * NODE_OPTIONS: 0, so the pool leaves the flag as the operator set it (every isolate has it then); otherwise
 * undefined, the pool's default. (The pool sees the command line's flags itself; NODE_OPTIONS only the caller can.)
 */
export function engineSemiSpace(nodeOptions: string | undefined): number | undefined {
  return /(^|\s)--min[-_]semi[-_]space[-_]size(=|\s|$)/.test(nodeOptions ?? '') ? 0 : undefined;
}
