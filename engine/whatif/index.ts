// engine/whatif's data and the snapshot builder (re-exported by engine/index.ts). A report is made on the
// Engine's workers (Engine.whatIf); engine/local.ts has the in-thread whatIf for those workers and benchmarks.
export * from './types.ts';
export {
  buildSnapshot,
  emptyClusterObjects,
  regionOf,
  DEFAULT_REGION,
  WhatIfError,
  type BuildOptions,
  type Built,
} from './build.ts';
export type { ConsolidationCommand, ConsolidationPlan, ConsolidationPlanner, ProvisionFn } from './consolidation.ts';
export type { WhatIfEngine } from './run.ts';
export type { WhatIfJob } from './job.ts';
export { nodeGroups, type NodeGroup } from './nodegroups.ts';
export { proposeNodePools, type Proposal } from './proposal.ts';
export {
  adoptForMigration,
  mapGroups,
  migrationReport,
  missingNodePools,
  renameNodePools,
  unmanagedCluster,
  withDrift,
} from './migration.ts';
