// WhatIfEngines: the engine calls what-if needs, either in the calling thread (a what-if task already
// runs in a pool worker, so it solves and bounds right there) or on an Engine's worker pool.
import { lowerBound } from '../bound/index.ts';
import type { Engine } from '../engine.ts';
import { inThreadLp } from '../pool/pool.ts';
import { provision, provisionInput } from '../provision.ts';
import { WasmSolver } from '../solver/wasm.ts';
import type { WhatIfEngine } from './run.ts';

/** LP time limit: the bound is a yardstick, not worth more than this per snapshot. */
const LP_SECONDS = 30;

export function inThreadEngine(opts: { improveMs?: number; improveWork?: number } = {}): WhatIfEngine {
  const solver = new WasmSolver(opts);
  const lp = inThreadLp();
  return {
    solver,
    provision: (s, pods, o) => provision(s, pods, { exact: o.exact, solver }),
    lowerBound: (s, pods) => lowerBound(provisionInput(s, pods), lp, { timeLimitSec: LP_SECONDS }),
  };
}

export function pooledEngine(engine: Engine): WhatIfEngine {
  return {
    provision: (s, pods, o) => engine.provision(s, pods, { exact: o.exact }),
    lowerBound: (s, pods) => engine.lowerBound(s, pods, { timeLimitSec: LP_SECONDS }),
  };
}
