// The engine simulations decide on. Starting an engine means starting worker threads that load the engine
// (seconds when they run TypeScript source), so every simulation in a process shares one: each operator
// keeps its own warm models on it, dropped when the operator stops. Its idle workers do not keep the process
// alive.
import { createEngine, type Engine } from '../engine/index.ts';

let shared: Engine | undefined;

/** The process's simulation engine (one worker), started on first use. */
export function simulationEngine(): Engine {
  return (shared ??= createEngine({ threads: 1 }));
}
