// engine/whatif's public surface (re-exported by engine/index.ts).
export * from './types.ts';
export { buildSnapshot, regionOf, DEFAULT_REGION, WhatIfError, type BuildOptions, type Built } from './build.ts';
export type { ConsolidationCommand, ConsolidationPlan, ConsolidationPlanner, ProvisionFn } from './consolidation.ts';
export { whatIf, type WhatIfEngine, type WhatIfInput } from './run.ts';
export { inThreadEngine } from './engines.ts';
export { nodeGroups, type NodeGroup } from './nodegroups.ts';
export { proposeNodePools, type Proposal, type ProposedNodePool, type ProposalOptions } from './proposal.ts';
export { adoptForMigration, mapGroups, migrationReport, missingNodePools, renameNodePools, unmanagedCluster, withDrift } from './migration.ts';
