// engine.lowerBound: the LP bound on the $/h of new capacity for a set of pods (model.ts explains it).
import type { ProvisionInput } from '../model/types.ts';
import { buildBoundModel, type BoundModel } from './model.ts';

export interface LpResult {
  readonly status: string;
  /** HiGHS model status (7 = optimal). */
  readonly statusCode: number;
  readonly objective: number;
  readonly seconds: number;
}

/** Who solves the covering LP (HiGHS in a pool worker: engine/pool/lp.ts). */
export interface LpSolver {
  solveLp(model: BoundModel, opts?: { readonly signal?: AbortSignal; readonly timeLimitSec?: number }): Promise<LpResult>;
}

export interface LowerBound {
  /** US dollars per hour; no plan for these pods on new nodes can cost less. */
  readonly perHour: number;
  /** 'optimal', or why the bound is not proven ('time-limit', 'infeasible', ...). */
  readonly status: string;
  readonly groups: number;
  readonly variables: number;
  readonly constraints: number;
  /** Pods no NodePool option can host, left out of the bound. */
  readonly unplaceable: readonly string[];
  readonly seconds: number;
}

const STATUS: Record<number, string> = { 7: 'optimal', 8: 'infeasible', 13: 'time-limit', 6: 'empty' };

export async function lowerBound(input: ProvisionInput, pool: LpSolver, opts: { signal?: AbortSignal; timeLimitSec?: number } = {}): Promise<LowerBound> {
  const b = buildBoundModel(input);
  const r = await pool.solveLp(b.model, opts);
  const optimal = r.statusCode === 7 || b.model.numCols === 0;
  return {
    perHour: optimal ? r.objective / 1e6 : 0,
    status: optimal ? 'optimal' : (STATUS[r.statusCode] ?? `status ${r.statusCode}`),
    groups: b.groups,
    variables: b.model.numCols,
    constraints: b.model.numRows,
    unplaceable: b.unplaceable,
    seconds: r.seconds,
  };
}
