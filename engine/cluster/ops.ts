// The engine's decisions over a cluster model, as a pool worker runs them: provision, disrupt, validate,
// explain a node, bound the cost, and a static NodePool's NodeClaim and scale-down. An operation is plain data (it crosses a thread); options that are
// functions or objects with behaviour on the caller's side (a solver, a clock) are replaced by what the
// worker provides: its own wasm solver, and its monotonic clock when the caller asks for deadlines.
import { lowerBound, type LowerBound, type LpSolver } from '../bound/index.ts';
import { applyCommands } from '../disruption/apply.ts';
import { disrupt } from '../disruption/disrupt.ts';
import { explainNode, type NodeReport } from '../disruption/explain.ts';
import type { Command, Decision, DisruptOptions } from '../disruption/types.ts';
import type { ValidationResult } from '../disruption/types.ts';
import { validate } from '../disruption/validate.ts';
import { templateClaim } from '../disruption/staticdrift.ts';
import { staticScaleDown } from '../disruption/staticscale.ts';
import type { NodePool, Snapshot } from '../domain/types.ts';
import { provisionInput } from '../model/input.ts';
import type { NewNodeClaimPlan, ProvisionInput, ProvisionPlan, ProvisionSolver } from '../model/types.ts';
import type { PodRefs } from './delta.ts';
import type { ClusterModel } from './model.ts';
import { toWire, type WireDisruptResult } from './wire-decision.ts';

/** Disruption options as they cross to a worker. */
export interface WireDisruptOptions
  extends Omit<DisruptOptions, 'solver' | 'repackSolver' | 'caches' | 'elapsedMs' | 'wellKnownLabels'> {
  /** Method deadlines (Karpenter's timeouts, the repack's) count wall time in the worker; without it nothing times out. */
  readonly deadlines?: boolean;
  readonly wellKnownLabels?: ReadonlySet<string>;
}

export interface WireProvisionOptions {
  readonly exact?: boolean;
  readonly wellKnownLabels?: ReadonlySet<string>;
  readonly consolidation?: ProvisionInput['consolidation'];
  readonly reservedOfferingMode?: ProvisionInput['reservedOfferingMode'];
}

export type EngineOp =
  | { readonly op: 'provision'; readonly pending: PodRefs; readonly opts: WireProvisionOptions }
  | { readonly op: 'disrupt'; readonly opts: WireDisruptOptions }
  | { readonly op: 'validate'; readonly decision: Decision | Command; readonly opts: WireDisruptOptions }
  | { readonly op: 'explainNode'; readonly node: string; readonly opts: WireDisruptOptions }
  | {
      readonly op: 'lowerBound';
      readonly pods: PodRefs;
      readonly opts: { readonly timeLimitSec?: number; readonly wellKnownLabels?: ReadonlySet<string> };
    }
  | {
      /** The model carries the commands out on itself (applyCommands), as the caller does on its snapshot. */
      readonly op: 'carryOut';
      /** The commands, or their places among the commands of the last decision the model kept (keepDecision). */
      readonly commands: readonly Command[] | { readonly decided: readonly number[] };
      readonly names: ReadonlyArray<readonly string[] | undefined>;
    }
  | { readonly op: 'staticClaim'; readonly pool: string }
  | {
      readonly op: 'staticScaleDown';
      readonly pool: string;
      readonly unlaunched: readonly string[];
      readonly count: number;
    };

type OpResult =
  | ProvisionPlan
  | WireDisruptResult
  | ValidationResult
  | NodeReport
  | LowerBound
  | NewNodeClaimPlan
  | undefined
  | readonly string[];

/** What a worker lends the operations: its solvers and a clock for deadlines. */
export interface OpContext {
  /** The solver for a solve: exact (Karpenter's algorithm only) or with the improvement phase. */
  readonly solver: (exact: boolean) => ProvisionSolver;
  readonly lp: LpSolver;
  /** Monotonic ms (the worker's performance.now). */
  readonly clock: () => number;
}

function disruptOptions(model: ClusterModel, o: WireDisruptOptions, ctx: OpContext): DisruptOptions {
  const { deadlines, wellKnownLabels, ...rest } = o;
  const known = model.wellKnownLabels(wellKnownLabels);
  return {
    ...rest,
    solver: ctx.solver(false),
    caches: model.caches,
    ...(deadlines ? { elapsedMs: ctx.clock } : {}),
    ...(known ? { wellKnownLabels: known } : {}),
  };
}

/** The snapshot's NodePool of that name (a static decision names the pool it is about). */
function poolNamed(s: Snapshot, name: string): NodePool {
  const pool = s.nodePools.find((p) => p.name === name);
  if (!pool) throw new Error(`the snapshot has no NodePool ${name}`);
  return pool;
}

export async function runOp(model: ClusterModel, op: EngineOp, ctx: OpContext): Promise<OpResult> {
  const s = model.snapshot();
  switch (op.op) {
    case 'provision': {
      const known = model.wellKnownLabels(op.opts.wellKnownLabels);
      const input = provisionInput(s, model.podsOf(op.pending), {
        ...op.opts,
        caches: model.caches,
        ...(known ? { wellKnownLabels: known } : {}),
      });
      return ctx.solver(op.opts.exact ?? false).solve(input);
    }
    case 'disrupt': {
      const r = await disrupt(s, disruptOptions(model, op.opts, ctx));
      model.keepDecision(r.decision);
      return toWire(r);
    }
    case 'validate':
      return validate(s, op.decision, disruptOptions(model, op.opts, ctx));
    case 'explainNode':
      return explainNode(s, op.node, disruptOptions(model, op.opts, ctx));
    case 'lowerBound': {
      const known = model.wellKnownLabels(op.opts.wellKnownLabels);
      const input = provisionInput(s, model.podsOf(op.pods), {
        caches: model.caches,
        ...(known ? { wellKnownLabels: known } : {}),
      });
      return lowerBound(
        input,
        ctx.lp,
        op.opts.timeLimitSec !== undefined ? { timeLimitSec: op.opts.timeLimitSec } : {},
      );
    }
    case 'carryOut':
      model.adopt(
        applyCommands(s, 'decided' in op.commands ? model.decidedCommands(op.commands.decided) : op.commands, op.names),
      );
      return undefined;
    case 'staticClaim':
      return templateClaim(s, poolNamed(s, op.pool));
    case 'staticScaleDown':
      return staticScaleDown(s.nodes, s.now, poolNamed(s, op.pool), op.unlaunched, op.count);
  }
}
