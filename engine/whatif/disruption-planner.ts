// The what-if consolidation planner backed by the disruption engine: the decisions the controller would take,
// loop after loop, on a cluster that does not change in between. Each loop asks `disrupt()` for one decision,
// carries it out on the snapshot (`applyCommand`), and goes again until the engine finds nothing; the last
// answer's explanations say why every remaining node stays.
//
// exact: Karpenter's methods (emptiness, drift, multi-node, single-node) and nothing else. Otherwise the
// global repack replaces Karpenter's consolidation search (emptiness and drift still run first): on the
// consolidation benchmark it ends cheaper and an order of magnitude faster (docs/disruption.md).
import { applyCommand } from '../disruption/apply.ts';
import { disrupt } from '../disruption/disrupt.ts';
import { INITIAL_LOOP_STATE, type Command, type LoopState } from '../disruption/types.ts';
import type { Snapshot, StateNode } from '../domain/types.ts';
import { ModelCaches } from '../model/caches.ts';
import type { ProvisionSolver } from '../model/types.ts';
import type { ConsolidationCommand, ConsolidationPlan, ConsolidationPlanner } from './consolidation.ts';
import type { NodeExplanation } from './types.ts';

/** A plan longer than this is cut (and says so): each loop is a full decision on the whole cluster. */
const MAX_LOOPS = 500;

const METHOD_WORDS: Readonly<Record<string, string>> = {
  emptiness: 'empty node',
  'static-drift': 'static drift',
  drift: 'drift',
  multi: 'multi-node consolidation',
  single: 'single-node consolidation',
  repack: 'global repack',
};

/** Why Karpenter takes the step, and by which method (the saving is the move's own field). */
function describe(c: Command): string {
  return `${c.reason} (${METHOD_WORDS[c.method] ?? c.method})`;
}

function toCommand(c: Command, names: readonly string[]): ConsolidationCommand {
  const onExisting = new Map<string, string[]>();
  for (const m of c.podsMoved) {
    if (m.to.startsWith('replacement:')) continue;
    const list = onExisting.get(m.to);
    if (list) list.push(m.uid);
    else onExisting.set(m.to, [m.uid]);
  }
  return {
    kind: c.kind,
    candidates: c.candidates.map((x) => x.name),
    replacements: c.replacements,
    savingsPerHour: c.savingsPerHour,
    podsMoved: c.podsMoved.length,
    reason: describe(c),
    replacementNames: names,
    onExisting,
  };
}

/**
 * What-if answers for the steady state: every node whose NodePool consolidates at all counts as
 * Consolidatable, as it will once consolidateAfter has passed (the controller clears the condition when
 * pods land and sets it again later). `consolidateAfter: Never` is honoured.
 */
function settle(s: Snapshot): Snapshot {
  const after = new Map(s.nodePools.map((p) => [p.name, p.disruption.consolidateAfter]));
  return {
    ...s,
    nodes: s.nodes.map((n: StateNode) => {
      if (!n.hasNodeClaim || n.conditions.consolidatable === true) return n;
      const a = after.get(n.nodePoolName ?? '');
      if (a === undefined || a === null) return n;
      return { ...n, conditions: { ...n.conditions, consolidatable: true } };
    }),
  };
}

/** `catalogCaches`: where each plan's caches keep their catalog-scope slots (model/caches.ts), across plans. */
export function disruptionPlanner(solver: ProvisionSolver, catalogCaches?: ModelCaches): ConsolidationPlanner {
  return {
    name: 'disruption',
    async plan(start, opts): Promise<ConsolidationPlan> {
      let s = settle(start);
      let state: LoopState = INITIAL_LOOP_STATE;
      // Loop after loop over mostly the same node and pod objects: what one decision worked out, the next reuses.
      const caches = new ModelCaches(catalogCaches);
      const commands: ConsolidationCommand[] = [];
      let truncated = false;
      const done = (kept: NodeExplanation[]): ConsolidationPlan => ({
        commands,
        kept,
        final: s,
        ...(truncated ? { truncated: true as const } : {}),
      });
      let seq = 0;
      const nameFor = (pool: string): string => opts.name?.(pool) ?? `${pool}-whatif-${++seq}`;
      for (let loop = 0; loop < MAX_LOOPS; loop++) {
        // No wall clock: deadlines would make the plan depend on how busy the machine is (what-if reports
        // must be the same on any machine), and an offline plan can afford every search step.
        const r = await disrupt(s, {
          solver,
          caches,
          state,
          consolidationState: loop,
          repack: opts.exact ? 'off' : 'only',
          elapsedMs: () => 0,
        });
        state = r.state;
        const d = r.decision;
        if (d.truncated) truncated = true;
        if (d.kind === 'noop') return done(keptReasons(s, d.explanations));
        opts.onProgress?.({
          done: commands.length + 1 + (d.concurrent?.length ?? 0),
          planned: commands.length + 1 + (d.concurrent?.length ?? 0) + (d.followUps?.length ?? 0),
        });
        // Static drift starts several commands in one loop; repack follow-ups are re-planned by the next loop.
        for (const c of [d, ...(d.concurrent ?? [])]) {
          const names = c.replacements.map((r) => nameFor(r.nodePool));
          s = settle(applyCommand(s, c, (i) => names[i]!));
          commands.push(toCommand(c, names));
        }
      }
      return done(
        s.nodes.map((n) => ({ node: n.name, reason: `not evaluated: the plan was cut after ${MAX_LOOPS} decisions` })),
      );
    },
  };
}

/**
 * One reason per remaining node: the last explanation the engine gave for it. Methods run in order, so the
 * last is the most thorough look at the node (single-node consolidation or the repack, after multi-node's
 * budget pre-filter).
 */
function keptReasons(
  s: Snapshot,
  explanations: ReadonlyArray<{ node: string; message: string; code: string }>,
): NodeExplanation[] {
  const last = new Map<string, { message: string; code: string }>();
  for (const e of explanations) last.set(e.node, e);
  return s.nodes
    .filter((n) => n.managed)
    .map((n) => {
      const e = last.get(n.name);
      return e
        ? { node: n.name, reason: e.message, code: e.code }
        : { node: n.name, reason: 'no decision would disrupt it' };
    });
}
