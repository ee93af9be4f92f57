// Entry points of the solver module. All logic lives in the other files; see docs/solver.md.
import { ABI_VERSION, FLAG_IMPROVE, H_MAGIC, H_VERSION, MAGIC, R_STATUS, R_WORDS, S_BAD_INPUT } from '../abi';
import { FLAGS, IMPROVE_MS, IMPROVE_WORK, bind } from './layout';
import { startBudget } from './budget';
import { improve } from './improve';
import { resetOrder } from './order';
import { resetCompat } from './its';
import { finalizeClaims, writeResult } from './output';
import { counters, resetSchedule, run } from './schedule';
import { resetQuickIndex } from './quick';
import { resetSets, SET_WORDS } from './sets';
import { resetReservations } from './reservations';
import { resetState } from './state';
import { resetTopology } from './topology';

/** Called once by the loader after instantiation; it refuses to run a module whose ABI differs. */
export function abiVersion(): i32 {
  return ABI_VERSION;
}

/** Called by the loader before each solve: frees everything the previous solve allocated (stub runtime). */
export function reset(): void {
  heap.reset();
}

/** Called by the loader to reserve `size` bytes for the input block, after reset(). */
export function alloc(size: i32): usize {
  return heap.alloc(<usize>size);
}

/**
 * Solves the provisioning problem in the input block at `input`; returns the address of the result block.
 * Called once per solve, after reset() and alloc(); the caller reads the result before the next reset().
 */
export function solve(input: usize): usize {
  if (load<i32>(input + (<usize>H_MAGIC << 2)) != MAGIC || load<i32>(input + (<usize>H_VERSION << 2)) != ABI_VERSION) {
    const r = heap.alloc(<usize>(R_WORDS << 2));
    memory.fill(r, 0, <usize>(R_WORDS << 2));
    store<i32>(r + (<usize>R_STATUS << 2), S_BAD_INPUT);
    return r;
  }
  bind(input);
  resetSets();
  resetCompat();
  resetState();
  resetTopology(SET_WORDS);
  resetQuickIndex();
  resetSchedule();
  resetReservations();
  resetOrder();
  run();
  let improved = 0;
  startBudget(IMPROVE_WORK, IMPROVE_MS);
  if ((FLAGS & FLAG_IMPROVE) != 0) improved = improve();
  finalizeClaims();
  return writeResult(improved);
}

/**
 * The integer-aware lower bound of the pods and options in the block at `input` (solver-as/abi.ts, BH_*); returns
 * the address of BR_WORDS f64s. Called by engine/bound once per bound, after reset() and alloc().
 */
export { boundPatterns } from './boundcg';

/** Work counters of the last solve (for benchmarks): address of 8 i32s. */
export function workCounters(): usize {
  return counters.dataStart;
}


