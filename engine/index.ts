// The engine's public surface: the only module controller/, sim/ and cli/ import. It has the domain, the
// parsers and validation, the catalog, the disruption and what-if data, and createEngine: decisions run on
// the Engine's worker pool. What runs decisions in the calling thread is in local.ts (workers, benchmarks,
// tests); scripts/lint-layers.mjs keeps it out of this surface.
export * from './domain/types.ts';
export * from './domain/resources.ts';
export * from './domain/quantity.ts';
export { NameIndex } from './domain/nameindex.ts';
export * from './domain/text.ts';
export * from './domain/dra.ts';
export * from './catalog/index.ts';
export * from './api/index.ts';
export {
  nextAfter,
  parseCron,
  scheduleActive,
  CronError,
  type CronSchedule,
} from './disruption/cron.ts';
export * from './disruption/index.ts';
export * from './domain/money.ts';
export { incompatibleNodePools, provisionInput, snapshotOf } from './model/input.ts';
export type {
  NewNodeClaimPlan,
  PodError,
  ProvisionInput,
  ProvisionPlan,
  ProvisionSolver,
} from './model/types.ts';
export { verifyPlan } from './verify/verify.ts';
// The AWS provider's launch-time filters (engine/launch/filter.ts): the launch path and the planner share them.
export {
  isExotic,
  MAX_INSTANCE_TYPES as MAX_LAUNCH_INSTANCE_TYPES,
  selectCandidates as selectLaunchCandidates,
  type Candidate as LaunchCandidate,
} from './launch/filter.ts';
export { asLaunched } from './launch/price.ts';
export {
  NODEPOOL_LABEL,
  CAPACITY_TYPE_LABEL,
  REGISTERED_LABEL,
  INITIALIZED_LABEL,
  ZONE_LABEL,
  REGION_LABEL,
  INSTANCE_TYPE_LABEL,
  ARCH_LABEL,
  OS_LABEL,
  WINDOWS_BUILD_LABEL,
  HOSTNAME_LABEL,
  ZONE_ID_LABEL,
  DO_NOT_DISRUPT_ANNOTATION,
  NODEPOOL_HASH_ANNOTATION,
  NODEPOOL_HASH_VERSION_ANNOTATION,
  DISRUPTED_TAINT_KEY,
  withExtraWellKnown,
  normalizeKey,
} from './scheduling/labels.ts';
export { defaultSelector, withDefaultSpread } from './scheduling/defaultspread.ts';
export { tolerates, toleratesAll, firstUntolerated, formatTaint, isKnownEphemeralTaint } from './scheduling/taints.ts';
export {
  selectorMatches,
  isTerminal,
  isTerminating,
  isActive,
  isOwnedByDaemonSet,
  isMirrorPod,
  podKey,
} from './scheduling/pods.ts';
export {
  createEngine,
  type ClusterDecisions,
  type ClusterEngine,
  type Engine,
  type EngineDisruptOptions,
} from './engine.ts';
export type { DeltaStats } from './cluster/delta.ts';
export { PodInterner } from './cluster/intern.ts';
export { PoolError, type EnginePool, type PoolOptions } from './pool/pool.ts';
export { MissingPackageError } from './pool/missing-package.ts';
export type { WorkerMemory } from './pool/engine.worker.ts';
export { moduleUrl, workerModule } from './pool/module-url.ts';
// The requirement algebra as a namespace (its add/get/has would collide with resources.ts), for the
// controller's cloud providers, which build instance-type requirements and check launch compatibility.
export * as reqs from './scheduling/requirements.ts';
export { ABI_VERSION } from '../solver-as/abi.ts';
export type { LowerBound } from './bound/index.ts';
export { fromLabels, fromSelectorRequirements, intersects, singleValueLabels } from './scheduling/requirements.ts';
// What-if reports (engine/whatif): snapshots in, plans, costs and explanations out.
export * from './whatif/index.ts';
export { mulberry32, type Rng } from './domain/random.ts';
