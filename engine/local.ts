// The engine in the calling thread: what the Engine's workers run (engine/pool/engine.worker.ts), and what
// benchmarks and tests call directly to measure or check the solvers and decisions themselves. The
// controller, the simulator and the CLI never import this module (scripts/lint-layers.mjs): they reach these
// decisions through createEngine (engine/index.ts), so no decision runs on their event loop.
export { provision } from './solver/provision.ts';
export { WasmSolver, type WasmSolverOptions } from './solver/wasm.ts';
export { solveReference } from './solver/reference/scheduler.ts';
export { ModelCaches } from './model/caches.ts';
export { disrupt } from './disruption/disrupt.ts';
export { validate } from './disruption/validate.ts';
export { explainNode } from './disruption/explain.ts';
export { templateClaim } from './disruption/staticdrift.ts';
export { staticScaleDown } from './disruption/staticscale.ts';
export { planRepack } from './disruption/repack.ts';
export { computeConsolidation } from './disruption/consolidation.ts';
export { simulate } from './disruption/simulate.ts';
export { lowerBound, type LpSolver } from './bound/index.ts';
export { buildBoundModel, type BoundModel } from './bound/model.ts';
export { inThreadLp } from './pool/lp.ts';
export { whatIf } from './whatif/run.ts';
export { inThreadEngine } from './whatif/engines.ts';
export { runWhatIfJob } from './whatif/job.ts';
export { ClusterModel, StaleModelError } from './cluster/model.ts';
export { ModelMirror, type SnapshotDelta } from './cluster/delta.ts';
