// What every method receives and returns, and the options resolved once per disrupt call.
import type { Snapshot } from '../domain/types.ts';
import { ModelCaches } from '../model/caches.ts';
import type { ProvisionSolver } from '../model/types.ts';
import { WasmSolver } from '../solver/wasm.ts';
import { DEFAULT_K } from './balanced.ts';
import type { PoolBudget } from './budgets.ts';
import type { SimContext, Truncation } from './simulate.ts';
import type { Candidate, Command, ConsolidationMove, DisruptOptions, Explanation, LoopState } from './types.ts';
import { INITIAL_LOOP_STATE, METHOD_DEADLINES } from './types.ts';

/** The repack's default minimum saving, as a share of the replaced nodes' price (DisruptOptions.repackMinSavingsShare). */
const DEFAULT_MIN_SAVINGS_SHARE = 0.05;

export interface Resolved {
  /** What this call remembers per input object (the caller's, or its own). */
  readonly caches: ModelCaches;
  readonly sim: SimContext;
  readonly repackSim: SimContext;
  /** Fired when a simulation's solver, or the repack's search, was cut short by its wall-clock safety net. */
  readonly truncation: Truncation;
  readonly state: LoopState;
  readonly elapsedMs: () => number;
  readonly singleNodeTimeoutMs: number;
  readonly multiNodeTimeoutMs: number;
  readonly multiNodeCap: number;
  readonly repackDeadlineMs: number;
  readonly repackMinSavingsPerHour: number;
  readonly repackMinSavingsShare: number;
  readonly k: number;
  readonly poolCosts?: ReadonlyMap<string, number>;
  readonly queued?: ReadonlySet<string>;
}

export function resolve(opts: DisruptOptions): Resolved {
  const caches = opts.caches ?? new ModelCaches();
  // One solver instance for every simulation of the call (a wasm instance per simulation would cost its set-up each time).
  const solver: ProvisionSolver = opts.solver ?? new WasmSolver();
  const truncation: Truncation = { fired: false };
  const sim: SimContext = {
    solver,
    caches,
    truncation,
    ...(opts.wellKnownLabels ? { wellKnownLabels: opts.wellKnownLabels } : {}),
  };
  return {
    caches,
    sim,
    repackSim: { ...sim, solver: opts.repackSolver ?? solver },
    truncation,
    state: opts.state ?? INITIAL_LOOP_STATE,
    // Without a clock nothing times out: elapsed time stays 0.
    elapsedMs: opts.elapsedMs ?? (() => 0),
    singleNodeTimeoutMs: opts.singleNodeTimeoutMs ?? METHOD_DEADLINES.singleNodeTimeoutMs,
    multiNodeTimeoutMs: opts.multiNodeTimeoutMs ?? METHOD_DEADLINES.multiNodeTimeoutMs,
    multiNodeCap: opts.multiNodeCap ?? 100,
    repackDeadlineMs: opts.repackDeadlineMs ?? METHOD_DEADLINES.repackDeadlineMs,
    repackMinSavingsPerHour: opts.repackMinSavingsPerHour ?? 0,
    repackMinSavingsShare: opts.repackMinSavingsShare ?? DEFAULT_MIN_SAVINGS_SHARE,
    k: opts.balancedK ?? DEFAULT_K,
    ...(opts.poolCosts ? { poolCosts: opts.poolCosts } : {}),
    ...(opts.queued ? { queued: opts.queued } : {}),
  };
}

export interface MethodInput {
  readonly s: Snapshot;
  /** Candidates passing the method's filter, in the method's order. */
  readonly candidates: readonly Candidate[];
  /** Every candidate before the method filter (Balanced pool totals). */
  readonly all: readonly Candidate[];
  readonly budgets: ReadonlyMap<string, PoolBudget>;
  readonly r: Resolved;
}

export interface MethodOutput {
  readonly commands: readonly Command[];
  /** Per node the method considered and did not take. */
  readonly explanations: readonly Explanation[];
  /** Found nothing, no candidate held back by a budget, no timeout: remember "consolidated". */
  readonly consolidated: boolean;
  readonly timedOut?: boolean;
  /** Single-node: pools not reached before a timeout. */
  readonly unseenPools?: readonly string[];
  /** Balanced approvals of the chosen command, per pool (ConsolidationApproved events). */
  readonly approvals?: ReadonlyMap<string, string>;
  /** Moves scored (consolidation_moves_total, consolidation_score). */
  readonly moves?: readonly ConsolidationMove[];
  /** Repack: the steps after the first. */
  readonly followUps?: readonly Command[];
}
