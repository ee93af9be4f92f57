// Counting turns of the event loop while some work runs: an immediate that queues itself again until the work
// ends. A test of code that yields (chunked loops, sliced scrapes) asserts that the count moved during the work,
// not only once it was done.
//
//   const turns = await turnsDuring(async (now) => { ...; seen.push(now()); ... });
//   expect(turns).toBeGreaterThanOrEqual(2);

/**
 * Runs `work` while a self-queuing immediate counts event-loop turns; `work` reads the count so far with `turns()`,
 * and `onTurn` (if given) runs at every turn. Returns the count when the work ended.
 */
export async function turnsDuring(
  work: (turns: () => number) => Promise<unknown>,
  onTurn?: () => void,
): Promise<number> {
  let turns = 0;
  let running = true;
  const tick = (): void => {
    turns++;
    onTurn?.();
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    await work(() => turns);
  } finally {
    running = false;
  }
  return turns;
}
