// The clock an engine worker's solver reads (the improvement phase's wall-clock safety net, solver-as budget.ts):
// the wall clock, except while a speculative solve that was called off runs (engine/cluster/speculation.ts).
import { calledOff } from '../cluster/speculation.ts';

/** How far each reading of a called-off solve's clock jumps past the one before, ms (any safety net is shorter). */
const CALLED_OFF_STEP_MS = 1e12;

/**
 * The worker solver's clock: the wall clock, or, once the solve running now was called off (`running()` is its
 * flag), a clock that jumps far ahead at every reading, so that the improvement phase's safety net ends it at its
 * next reading, whether its deadline was set before the call-off or after (a deadline set from a reading of
 * +infinity would itself be +infinity, never passed).
 */
export function speculationClock(running: () => SharedArrayBuffer | undefined): () => number {
  let ahead = 0;
  return () => {
    if (!calledOff(running())) {
      ahead = 0;
      return performance.now();
    }
    ahead += CALLED_OFF_STEP_MS;
    return performance.now() + ahead;
  };
}
