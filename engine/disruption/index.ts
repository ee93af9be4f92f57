// The disruption engine's data and pure helpers (re-exported by engine/index.ts). The decisions (disrupt,
// validate, explainNode, the repack, the simulations) run on the Engine's workers; engine/local.ts has them
// for those workers, benchmarks and tests.
export * from './types.ts';
export { methodsFor, reasonOf } from './disrupt.ts';
export { doNotDisruptEvent, doNotDisruptEvents, goDurationError, type PodEvent } from './podevents.ts';
export { validationFailureReason, type ValidationCategory, type ValidationResult } from './validate.ts';
export type { NodeReport } from './explain.ts';
export { applyCommand, launchedNode } from './apply.ts';
export type { RepackPlan, RepackStep } from './repack.ts';
export { expired, expiresAt } from './expiration.ts';
export {
  driftReason,
  hashDrifted,
  requirementsDrifted,
  instanceTypeNotFound,
  INSTANCE_TYPE_CHECK_AGE_MS,
  type DriftReason,
  type DriftCheckOptions,
} from './driftcheck.ts';
export { nodePoolHash, canonicalTemplate, NODEPOOL_HASH_VERSION } from './hash.ts';
export {
  budgetMapping,
  budgetNodes,
  budgetActive,
  checkBudget,
  windowEnd,
  budgetExplanation,
  MAX_INT32,
  type PoolBudget,
  type BudgetCheck,
} from './budgets.ts';
export {
  candidateSet,
  newCandidate,
  managedPools,
  bySavingsRatio,
  describeCandidate,
  type CandidateSet,
  type CandidateResult,
} from './candidates.ts';
export {
  evictionCost,
  doNotDisrupt,
  doNotDisruptActive,
  podBlock,
  reschedulablePods,
  rescheduleDisruptionCost,
  lifetimeRemaining,
  lifetimeDisruptionCost,
  currentlyReschedulable,
  POD_DELETION_COST_ANNOTATION,
  type DoNotDisrupt,
  type PodBlock,
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
  type PoolScore,
  type BalancedEvaluation,
} from './balanced.ts';
export { worstLaunchPrice, filterByPrice, nodeOfferingPrice, estimatedSavings } from './pricing.ts';
export { SPOT_TO_SPOT_MIN_TYPES, type ConsolidationOutcome, type NoConsolidation } from './consolidation.ts';
export { provisionablePending, blockedDestinations, type Simulation, type SimContext } from './simulate.ts';
export { commandString, commandTimeoutMs, makeCommand } from './command.ts';
export { interleave } from './singlenode.ts';
export { filterOutSameInstanceType } from './multinode.ts';
export { driftOrder } from './drift.ts';
