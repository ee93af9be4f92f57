// The disruption engine's data and pure helpers (re-exported by engine/index.ts). The decisions (disrupt,
// validate, explainNode, the repack, the simulations) run on the Engine's workers; engine/local.ts has them
// for those workers, benchmarks and tests.
export * from './types.ts';
export { doNotDisruptEvent, doNotDisruptEvents, goDurationError } from './podevents.ts';
export type { NodeReport } from './explain.ts';
export { applyCommand, applyCommands, launchedNode } from './apply.ts';
export { expired, expiresAt } from './expiration.ts';
export {
  driftReason,
  INSTANCE_TYPE_CHECK_AGE_MS,
} from './driftcheck.ts';
export { nodePoolHash, NODEPOOL_HASH_VERSION } from './hash.ts';
export {
  budgetMapping,
  budgetNodes,
  budgetActive,
  checkBudget,
  windowEnd,
  budgetExplanation,
  MAX_INT32,
  type PoolBudget,
} from './budgets.ts';
export {
  candidateSet,
  newCandidate,
  managedPools,
  bySavingsRatio,
  describeCandidate,
  interleave,
  type CandidateSet,
} from './candidates.ts';
export {
  evictionCost,
  doNotDisrupt,
  podBlock,
  reschedulablePods,
  rescheduleDisruptionCost,
  lifetimeDisruptionCost,
  currentlyReschedulable,
  POD_DELETION_COST_ANNOTATION,
  provisionablePending,
} from './pods.ts';
export {
  nodePoolTotals,
  scoreMove,
  evaluateBalancedMove,
  couldApprove,
  approves,
  approvalMessage,
  DEFAULT_K,
  type PoolTotals,
  type BalancedEvaluation,
} from './balanced.ts';
export { worstLaunchPrice, filterByPrice, nodeOfferingPrice, estimatedSavings } from './pricing.ts';
export type { Simulation, SimContext } from './simulate.ts';
export { commandString, commandTimeoutMs, makeCommand } from './command.ts';
