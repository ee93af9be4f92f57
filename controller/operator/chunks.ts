// Work over many items on the controller's event loop, a bounded number of items per turn: between two chunks the
// loop turns (setImmediate), so timers, watch events, lease renewals, probes and scrapes run in between. The bound
// is a count of items (work), never wall-clock time, so what is done and in which order never depends on how busy
// the machine is; only when it is done does.

/** A turn of the event loop: what is waiting (I/O, timers, immediates queued before) runs first. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Calls `fn` on every item in order, `chunk` items per turn of the event loop (the first chunk at once, in the
 * caller's turn). An item whose `fn` throws stops the walk: the error is what the returned promise rejects with,
 * and the items after it are not visited.
 */
export async function forEachInChunks<T>(
  items: Iterable<T>,
  chunk: number,
  fn: (item: T, index: number) => void,
): Promise<void> {
  if (!Number.isInteger(chunk) || chunk < 1)
    throw new RangeError(`forEachInChunks: chunk must be a positive integer, got ${chunk}`);
  let i = 0;
  for (const item of items) {
    if (i > 0 && i % chunk === 0) await nextTurn();
    fn(item, i++);
  }
}
