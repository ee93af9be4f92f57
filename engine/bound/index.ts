// engine.lowerBound: the LP bound on the $/h of new capacity for a set of pods (model.ts explains it).
import type { ProvisionInput } from '../model/types.ts';
import { wholeNodePatternBound, type WholeNodePatterns } from './lagrange.ts';
import { limitsBound } from './limits.ts';
import { buildBoundModel, type BoundModel } from './model.ts';
import { patternBound, type PatternBound } from './patterns.ts';

export interface LpResult {
  readonly status: string;
  /** HiGHS model status (7 = optimal). */
  readonly statusCode: number;
  readonly objective: number;
  readonly seconds: number;
}

/** Who solves the covering LP (HiGHS in a pool worker: engine/pool/lp.ts). */
export interface LpSolver {
  solveLp(
    model: BoundModel,
    opts?: { readonly signal?: AbortSignal; readonly timeLimitSec?: number },
  ): Promise<LpResult>;
}

export interface LowerBound {
  /** US dollars per hour; no plan for these pods on new nodes can cost less: the best of the bounds below. */
  readonly perHour: number;
  /**
   * Which bound `perHour` is: the resource LP, the pattern bound (rounded up to whole nodes when it could be), or the
   * whole-node bound under binding NodePool limits (limits.ts), or that bound with the scarce pod sizes counted whole
   * (lagrange.ts).
   */
  readonly kind: 'lp' | 'patterns' | 'patterns-rounded' | 'whole-nodes' | 'whole-node-patterns';
  /** The resource LP bound, $/h (0 when not proven). */
  readonly lp: number;
  /** The whole-node bound under NodePool limits, $/h (0 where no limit makes it apply). */
  readonly wholeNodes: number;
  /** The whole-node pattern bound under NodePool limits (lagrange.ts): perHour 0 where it does not apply. */
  readonly wholeNodePatterns: WholeNodePatterns;
  /** The integer-aware pattern bound (patterns.ts). */
  readonly patterns: PatternBound;
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

interface BoundOptions {
  readonly signal?: AbortSignal;
  readonly timeLimitSec?: number;
  /** Work budget of the pattern bound (default DEFAULT_BOUND_WORK); 0 leaves it out. */
  readonly patternWork?: number;
  /** Cutting-plane steps of the whole-node pattern bound (default 40, each one dynamic program); 0 leaves it out. */
  readonly wholeNodeSteps?: number;
}

export async function lowerBound(input: ProvisionInput, pool: LpSolver, opts: BoundOptions = {}): Promise<LowerBound> {
  let b = buildBoundModel(input);
  let r = await pool.solveLp(b.model, opts);
  if (r.statusCode === 8) {
    // Infeasible: the NodePools' limits cannot hold these pods at all; bound them without the limits.
    b = buildBoundModel(input, { limits: false });
    r = await pool.solveLp(b.model, opts);
  }
  const optimal = r.statusCode === 7 || b.model.numCols === 0;
  const lp = optimal ? r.objective / 1e6 : 0;
  const patterns =
    opts.patternWork === 0
      ? { perHour: 0, status: 'empty' as const, rounded: false, work: 0, rounds: 0 }
      : patternBound(b, opts.patternWork !== undefined ? { work: opts.patternWork } : {});
  const wholeNodes = limitsBound(input, b);
  const wholeNodePatterns =
    opts.wholeNodeSteps === 0
      ? { perHour: 0, steps: 0, solved: false }
      : wholeNodePatternBound(input, b, opts.wholeNodeSteps !== undefined ? { steps: opts.wholeNodeSteps } : {});
  const best = patterns.perHour > lp;
  const top = Math.max(lp, patterns.perHour);
  const whole = Math.max(wholeNodes, wholeNodePatterns.perHour);
  return {
    perHour: Math.max(top, whole),
    kind:
      whole > top
        ? wholeNodePatterns.perHour > wholeNodes
          ? 'whole-node-patterns'
          : 'whole-nodes'
        : !best
          ? 'lp'
          : patterns.rounded
            ? 'patterns-rounded'
            : 'patterns',
    lp,
    wholeNodes,
    wholeNodePatterns,
    patterns,
    status: optimal ? 'optimal' : (STATUS[r.statusCode] ?? `status ${r.statusCode}`),
    groups: b.groups,
    variables: b.model.numCols,
    constraints: b.model.numRows,
    unplaceable: b.unplaceable,
    seconds: r.seconds,
  };
}
