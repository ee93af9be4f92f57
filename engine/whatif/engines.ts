// The engine calls what-if needs, in the calling thread: a what-if job runs in a pool worker (the Engine's
// whatIf task), so it solves, plans consolidation and bounds right there.
import { lowerBound } from '../bound/index.ts';
import { inThreadLp } from '../pool/lp.ts';
import { provisionInput } from '../model/input.ts';
import { provision } from '../solver/provision.ts';
import { WasmSolver } from '../solver/wasm.ts';
import { disruptionPlanner } from './disruption-planner.ts';
import type { WhatIfEngine } from './run.ts';

/** LP time limit: the bound is a yardstick, not worth more than this per snapshot. */
const LP_SECONDS = 30;

export function inThreadEngine(opts: { improveMs?: number; improveWork?: number } = {}): WhatIfEngine {
  const solver = new WasmSolver(opts);
  const lp = inThreadLp;
  return {
    provision: (s, pods, o) => provision(s, pods, { exact: o.exact, solver }),
    lowerBound: (s, pods) => lowerBound(provisionInput(s, pods), lp, { timeLimitSec: LP_SECONDS }),
    planner: disruptionPlanner(solver),
  };
}
