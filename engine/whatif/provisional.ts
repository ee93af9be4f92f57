// The provisional consolidation planner, until engine/disruption plugs in (see consolidation.ts):
// 1. emptiness: consolidatable nodes with nothing to reschedule are deleted;
// 2. a global repack: the pods of every other consolidatable node are re-solved together with the
//    provisioning solver onto the nodes that stay plus new NodeClaims. If that is cheaper, the candidates
//    go and the new NodeClaims come; candidates whose pods would not fit anywhere are kept and the solve is
//    repeated without them.
// Both are cut into the steps the NodePools' budgets allow (steps.ts). It is an estimate of what a global
// consolidation can save, not Karpenter's single/multi-node search.
import type { Pod, Snapshot, StateNode } from '../domain/types.ts';
import { CAPACITY_TYPE_LABEL, INSTANCE_TYPE_LABEL, ZONE_LABEL } from '../scheduling/labels.ts';
import { podKey } from '../scheduling/pods.ts';
import type { ProvisionPlan } from '../solver/types.ts';
import { candidatesOf, type Candidate } from './candidates.ts';
import type { ConsolidationCommand, ConsolidationPlanner, ProvisionFn } from './consolidation.ts';
import { stepsByBudget } from './steps.ts';
import type { NodeExplanation } from './types.ts';

const MAX_ROUNDS = 4;
const EPSILON = 1e-9;

/** A managed node's price from its NodePool's instance types (Karpenter prices candidates this way). */
export function poolPrice(s: Snapshot, n: StateNode): number {
  const t = s.instanceTypes.get(n.nodePoolName ?? '')?.find((x) => x.name === n.labels[INSTANCE_TYPE_LABEL]);
  const o = t?.offerings.find((x) => x.zone === n.labels[ZONE_LABEL] && x.capacityType === n.labels[CAPACITY_TYPE_LABEL]);
  return o && Number.isFinite(o.price) ? o.price : 0;
}

function asPending(p: Pod): Pod {
  const { nodeName: _n, ...rest } = p;
  return { ...rest, phase: 'Pending' };
}

interface Repack {
  readonly set: readonly Candidate[];
  readonly plan: ProvisionPlan;
  readonly kept: readonly NodeExplanation[];
}

/** Re-solves the pods of `set` without those nodes; drops candidates whose pods do not fit and retries. */
async function repack(s: Snapshot, gone: ReadonlySet<string>, initial: readonly Candidate[], provision: ProvisionFn, exact: boolean): Promise<Repack | undefined> {
  let set = initial;
  const kept: NodeExplanation[] = [];
  for (let round = 0; round < MAX_ROUNDS && set.length > 0; round++) {
    const leaving = new Set([...gone, ...set.map((c) => c.node.name)]);
    const pods = set.flatMap((c) => c.reschedulable.map(asPending));
    const plan = await provision({ ...s, nodes: s.nodes.filter((n) => !leaving.has(n.name)) }, pods, { exact });
    const failed = new Map([...plan.unschedulable, ...plan.ignored].map((e) => [e.uid, e.reason] as const));
    if (failed.size === 0) return { set, plan, kept };
    set = set.filter((c) => {
      const bad = c.reschedulable.find((p) => failed.has(p.uid));
      if (bad) kept.push({ node: c.node.name, reason: `pod ${podKey(bad)} would not schedule elsewhere: ${failed.get(bad.uid)}` });
      return !bad;
    });
  }
  return set.length === 0 ? { set, plan: { existing: new Map(), newNodeClaims: [], unschedulable: [], ignored: [], costPerHour: 0 }, kept } : undefined;
}

export function provisionalPlanner(provision: ProvisionFn): ConsolidationPlanner {
  return {
    name: 'provisional (emptiness + global repack)',
    async plan(s, opts) {
      const { candidates, blocked } = candidatesOf(s, (n) => poolPrice(s, n));
      const kept: NodeExplanation[] = [...blocked].map(([node, reason]) => ({ node, reason }));
      const commands: ConsolidationCommand[] = [];

      const empty = candidates.filter((c) => c.empty);
      const emptySteps = stepsByBudget(s, empty, 'Empty', new Set());
      for (const step of emptySteps.steps) {
        commands.push({
          kind: 'delete', candidates: step.map((c) => c.node.name), replacements: [], podsMoved: 0,
          savingsPerHour: step.reduce((a, c) => a + c.price, 0), reason: 'empty: no pods to reschedule',
        });
      }
      kept.push(...emptySteps.blocked);
      const gone = new Set(emptySteps.steps.flat().map((c) => c.node.name));

      const busy: Candidate[] = [];
      for (const c of candidates) {
        if (c.empty) continue;
        if (c.pool.disruption.consolidationPolicy === 'WhenEmpty') kept.push({ node: c.node.name, reason: `NodePool "${c.pool.name}" has consolidation policy WhenEmpty, but node is not empty` });
        else busy.push(c);
      }
      const r = busy.length > 0 ? await repack(s, gone, busy, provision, opts.exact) : undefined;
      if (busy.length > 0 && !r) kept.push(...busy.map((c) => ({ node: c.node.name, reason: 'its pods would not all schedule elsewhere after several attempts' })));
      if (!r || r.set.length === 0) return { commands, kept: [...kept, ...(r?.kept ?? [])] };
      kept.push(...r.kept);
      const before = r.set.reduce((a, c) => a + c.price, 0);
      if (r.plan.costPerHour >= before - EPSILON) {
        const why = `re-packing the pods of the ${r.set.length} consolidatable node(s) would cost $${r.plan.costPerHour.toFixed(4)}/h, not less than their $${before.toFixed(4)}/h now`;
        return { commands, kept: [...kept, ...r.set.map((c) => ({ node: c.node.name, reason: why }))] };
      }
      const rc = repackCommands(s, r, gone, opts.name ?? ((pool) => `${pool}-replacement`));
      return { commands: [...commands, ...rc.commands], kept: [...kept, ...rc.blocked] };
    },
  };
}

/**
 * The repack, cut by Underutilized budgets: each step launches the replacements its pods need. The budget's
 * node count leaves out replacements launched by earlier steps, so percentages round a little low.
 */
function repackCommands(s: Snapshot, r: Repack, gone: ReadonlySet<string>, name: (pool: string) => string): { commands: ConsolidationCommand[]; blocked: readonly NodeExplanation[] } {
  const steps = stepsByBudget(s, r.set, 'Underutilized', gone);
  const names = new Map<number, string>();
  // Where each re-packed pod lands: an existing node's name, or the index of its new NodeClaim.
  const dest = new Map<string, string | number>();
  for (const [node, pods] of r.plan.existing) for (const u of pods) dest.set(u, node);
  r.plan.newNodeClaims.forEach((c, i) => c.pods.forEach((u) => dest.set(u, i)));
  const out: ConsolidationCommand[] = [];
  for (const step of steps.steps) {
    const uids = new Set(step.flatMap((c) => c.reschedulable.map((p) => p.uid)));
    const fresh = r.plan.newNodeClaims.map((c, i) => [c, i] as const).filter(([c, i]) => !names.has(i) && c.pods.some((u) => uids.has(u)));
    for (const [c, i] of fresh) names.set(i, name(c.nodePool));
    const onExisting = new Map<string, string[]>();
    for (const u of uids) {
      const d = dest.get(u);
      if (d === undefined || (typeof d === 'number' && fresh.some(([, i]) => i === d))) continue;
      const node = typeof d === 'number' ? names.get(d)! : d;
      onExisting.set(node, [...(onExisting.get(node) ?? []), u]);
    }
    const savings = step.reduce((a, c) => a + c.price, 0) - fresh.reduce((a, [c]) => a + c.price, 0);
    out.push({
      kind: fresh.length > 0 ? 'replace' : 'delete',
      candidates: step.map((c) => c.node.name),
      replacements: fresh.map(([c]) => c),
      replacementNames: fresh.map(([, i]) => names.get(i)!),
      savingsPerHour: savings,
      podsMoved: uids.size,
      reason: `underutilized: re-packing saves $${(r.set.reduce((a, c) => a + c.price, 0) - r.plan.costPerHour).toFixed(4)}/h in all`,
      onExisting,
    });
  }
  return { commands: out, blocked: steps.blocked };
}
