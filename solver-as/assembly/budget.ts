// The improvement phase's budget. It is counted in work, not time, so that the same input gives the same plan on
// any machine and under any load: every step that costs time in proportion to its size (a simplex pivot, a
// knapsack fill, a pass over the instance types) spends work units roughly proportional to the operations it
// does, and the phase stops searching when the work budget (H_IMPROVE_WORK, in thousands of units) is spent.
//
// The wall clock is only a safety net (H_IMPROVE_MS): past that deadline the phase finishes as fast as it can
// and the result says so (R_TRUNCATED), because from then on the plan depends on the machine. It is checked at
// most once per CLOCK_EVERY units of work, so the clock costs nothing measurable.
@external('env', 'now')
declare function now(): f64;

/** Work spent so far in this solve's improvement phase. */
let spent: f64 = 0;
/** The work budget of the whole phase (units). */
let budget: f64 = 0;
let deadline: f64 = Infinity;
let truncatedFlag = false;
/** Work at which the clock is next read. */
let nextClock: f64 = 0;
const CLOCK_EVERY: f64 = 200000;

/** Called when the phase starts: `workThousands` units of work at most, and the safety-net deadline in ms. */
export function startBudget(workThousands: i32, safetyMs: i32): void {
  spent = 0;
  budget = <f64>workThousands * 1000;
  deadline = safetyMs > 0 ? now() + <f64>safetyMs : Infinity;
  truncatedFlag = false;
  nextClock = 0;
}

/** Gives the phase its whole work budget again (a second pass), keeping the safety-net deadline and its verdict. */
export function restartWork(): void {
  spent = 0;
  nextClock = 0;
}

/** Records `units` of work. */
@inline export function spend(units: f64): void {
  spent += units;
}

export function workSpent(): f64 {
  return spent;
}

/** The work budget is spent: searching stops, what is found so far is finished. */
export function exhausted(): bool {
  return spent >= budget || late();
}

/**
 * The safety-net deadline has passed (and is remembered: once late, always late). Reading the clock is the only
 * non-deterministic step of a solve; it happens at most once per CLOCK_EVERY units of work.
 */
export function late(): bool {
  if (truncatedFlag) return true;
  if (spent < nextClock) return false;
  nextClock = spent + CLOCK_EVERY;
  if (now() > deadline) truncatedFlag = true;
  return truncatedFlag;
}

/** The deadline fired during this solve: the plan may differ from one machine or load to another. */
export function truncated(): bool {
  return truncatedFlag;
}

/**
 * A share of what is left of the budget, as an absolute work mark: the phase gives each group of pods the
 * share of the remaining budget its pods are of the remaining pods, so that an early large group cannot starve
 * the later ones.
 */
export function markFor(share: f64): f64 {
  const left = max(0, budget - spent);
  return spent + left * min(1, max(0, share));
}
