// The engine's public surface: the only module controller/, cli/ and bench/ import.
export * from './domain/types.ts';
export * from './domain/resources.ts';
export * from './domain/quantity.ts';
export * from './domain/text.ts';
export * from './domain/dra.ts';
export * from './catalog/index.ts';
export * from './api/index.ts';
export { nextAfter, parseCron, scheduleActive, CronError, type CronResult, type CronSchedule } from './disruption/cron.ts';
export * from './disruption/index.ts';
export * from './domain/money.ts';
export { incompatibleNodePools, provisionInput, snapshotOf, type IncompatibleNodePool } from './model/input.ts';
export { provision, type ProvisionOptions } from './solver/provision.ts';
export type { InstanceTypeOption, NewNodeClaimPlan, PodError, ProvisionInput, ProvisionPlan, ProvisionSolver } from './model/types.ts';
export { solveReference } from './solver/reference/scheduler.ts';
export { ModelCaches, type CacheStats } from './model/caches.ts';
export { WasmSolver, type WasmSolverOptions } from './solver/wasm.ts';
export { verifyPlan, type Violation } from './verify/verify.ts';
// The AWS provider's launch-time filters (engine/launch/filter.ts): the launch path and the planner share them.
export {
  isExotic, MAX_INSTANCE_TYPES as MAX_LAUNCH_INSTANCE_TYPES, reservationRank as launchReservationRank,
  selectCandidates as selectLaunchCandidates, type Candidate as LaunchCandidate, type ReservationKind as LaunchReservationKind,
  type Selection as LaunchSelection,
} from './launch/filter.ts';
export { asLaunched } from './launch/price.ts';
export {
  NODEPOOL_LABEL, CAPACITY_TYPE_LABEL, REGISTERED_LABEL, INITIALIZED_LABEL, ZONE_LABEL, REGION_LABEL, INSTANCE_TYPE_LABEL, ARCH_LABEL, OS_LABEL, WINDOWS_BUILD_LABEL,
  HOSTNAME_LABEL, ZONE_ID_LABEL, DO_NOT_DISRUPT_ANNOTATION, NODEPOOL_HASH_ANNOTATION, NODEPOOL_HASH_VERSION_ANNOTATION, DISRUPTED_TAINT_KEY,
  UNREGISTERED_TAINT_KEY, withExtraWellKnown, normalizeKey,
} from './scheduling/labels.ts';
export { defaultSelector, withDefaultSpread } from './scheduling/defaultspread.ts';
export { tolerates, toleratesAll, firstUntolerated, formatTaint, isKnownEphemeralTaint } from './scheduling/taints.ts';
export { selectorMatches, isTerminal, isTerminating, isActive, isOwnedByDaemonSet, isMirrorPod, podKey } from './scheduling/pods.ts';
export { createEngine, type Engine, type EngineConfig } from './engine.ts';
export { PooledSolver, SolverPool, PoolError, inThreadLp, type PoolOptions, type CallOptions, type LpSolver } from './pool/pool.ts';
export { moduleUrl, workerModule, type WorkerModule } from './pool/module-url.ts';
// The requirement algebra as a namespace (its add/get/has would collide with resources.ts), for the
// controller's cloud providers, which build instance-type requirements and check launch compatibility.
export * as reqs from './scheduling/requirements.ts';
export { ABI_VERSION } from '../solver-as/abi.ts';
export { lowerBound, type LowerBound } from './bound/index.ts';
export { buildBoundModel, type BoundModel } from './bound/model.ts';
export { fromLabels, fromSelectorRequirements, intersects, singleValueLabels } from './scheduling/requirements.ts';
// What-if reports (engine/whatif): snapshots in, plans, costs and explanations out.
export * from './whatif/index.ts';
export { mulberry32, type Rng } from './domain/random.ts';
