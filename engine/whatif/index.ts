// engine/whatif's public surface (re-exported by engine/index.ts).
export * from './types.ts';
export { buildSnapshot, regionOf, DEFAULT_REGION, WhatIfError, type BuildOptions, type Built } from './build.ts';
export { consolidationPlanner, type ConsolidationCommand, type ConsolidationPlan, type ConsolidationPlanner, type ProvisionFn } from './consolidation.ts';
export { whatIf, type WhatIfEngine, type WhatIfInput } from './run.ts';
export { allowedDisruptions } from './budgets.ts';
export { inThreadEngine, pooledEngine } from './engines.ts';
export { nodeGroups, type NodeGroup } from './nodegroups.ts';
export { proposeNodePools, type Proposal, type ProposedNodePool, type ProposalOptions } from './proposal.ts';
export { adoptForMigration, mapGroups, migrationReport, missingNodePools, renameNodePools, unmanagedCluster, withDrift } from './migration.ts';
