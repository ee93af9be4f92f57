// An Engine: the engine's decisions on a worker pool. The controller, the what-if jobs and the benchmarks
// create one and close it when done; `provision()` in provision.ts is the in-thread shortcut.
import type { Pod, Snapshot } from './domain/types.ts';
import { PooledSolver, SolverPool, type PoolOptions } from './pool/pool.ts';
import { lowerBound, type LowerBound } from './bound/index.ts';
import { provisionInput } from './model/input.ts';
import { provision, type ProvisionOptions } from './solver/provision.ts';
import type { ProvisionPlan } from './model/types.ts';

export interface EngineConfig extends PoolOptions {
  /**
   * Wall-clock safety net of the solver's improvement phase per call, ms (default 20 s). The phase is budgeted by
   * work (`improveWork`), so plans do not depend on the machine; a plan the safety net cut short says `truncated`.
   */
  readonly improveMs?: number;
  /** Work budget of the improvement phase per call (default: the solver's DEFAULT_IMPROVE_WORK). */
  readonly improveWork?: number;
  /** Per-call timeout, ms (default 60 s, Karpenter's solve timeout). */
  readonly timeoutMs?: number;
}

export interface Engine {
  /** The LP lower bound on the $/h of new capacity for these pods (engine/bound). */
  lowerBound(s: Snapshot, pods: readonly Pod[], opts?: { signal?: AbortSignal; timeLimitSec?: number; wellKnownLabels?: ReadonlySet<string> }): Promise<LowerBound>;
  provision(s: Snapshot, pending: readonly Pod[], opts?: ProvisionOptions & { signal?: AbortSignal }): Promise<ProvisionPlan>;
  readonly pool: SolverPool;
  close(): Promise<void>;
}

export function createEngine(config: EngineConfig = {}): Engine {
  const pool = new SolverPool(config);
  return {
    pool,
    provision(s, pending, opts = {}) {
      const solver = opts.solver ?? new PooledSolver(pool, {
        ...(config.improveMs !== undefined ? { improveMs: config.improveMs } : {}),
        ...(config.improveWork !== undefined ? { improveWork: config.improveWork } : {}),
        timeoutMs: config.timeoutMs ?? 60_000,
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      return provision(s, pending, { ...opts, solver });
    },
    lowerBound: (s, pods, opts = {}) => lowerBound(provisionInput(s, pods, opts.wellKnownLabels ? { wellKnownLabels: opts.wellKnownLabels } : {}), pool, opts),
    close: () => pool.close(),
  };
}
