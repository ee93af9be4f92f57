// Static drift (docs/karpenter/disruption.md §4.5): drifted nodes of static (replicas) NodePools are replaced one for
// one by a NodeClaim built straight from the pool's template, as many per loop as the budget and the
// pool's node limit leave room for, and not while the pool is still above its replica count.
import type { NodePool, Snapshot } from '../domain/types.ts';
import { NODES } from '../domain/resources.ts';
import { SIMULATION_LABELS } from '../scheduling/labels.ts';
import { intersectsAll } from '../scheduling/requirements.ts';
import { offeringAllowed, templateRequirements } from '../model/templates.ts';
import type { NewNodeClaimPlan } from '../model/types.ts';
import { budgetExplanation } from './budgets.ts';
import { makeCommand } from './command.ts';
import type { MethodInput, MethodOutput } from './method.ts';
import { withOptions } from './pricing.ts';
import type { Candidate, Command, Explanation } from './types.ts';
import { explanation } from './words.ts';

/** A NodeClaim from the pool's template alone: every compatible type with an available offering. */
export function templateClaim(
  s: Pick<Snapshot, 'instanceTypes' | 'options'>,
  pool: NodePool,
): NewNodeClaimPlan | undefined {
  const reqs = new Map([...templateRequirements(pool)].filter(([k]) => !SIMULATION_LABELS.has(k)));
  const its = (s.instanceTypes.get(pool.name) ?? []).filter(
    (it) => intersectsAll(it.requirements, reqs) && it.offerings.some((o) => offeringAllowed(reqs, o)),
  );
  if (!its.length) return undefined;
  const base: NewNodeClaimPlan = {
    nodePool: pool.name,
    pods: [],
    requirements: [],
    instanceTypes: [],
    requests: {},
    labels: { ...pool.template.labels },
    taints: pool.template.taints,
    startupTaints: pool.template.startupTaints,
    price: 0,
  };
  const claim = withOptions(base, reqs, its);
  return { ...claim, instanceTypes: claim.instanceTypes.slice(0, s.options.maxInstanceTypes) };
}

export function staticDrift({ s, candidates, budgets }: MethodInput): MethodOutput {
  const commands: Command[] = [];
  const explanations: Explanation[] = [];
  const byPool = new Map<string, Candidate[]>();
  for (const c of candidates) byPool.set(c.nodePool.name, [...(byPool.get(c.nodePool.name) ?? []), c]);
  for (const [poolName, cs] of byPool) {
    const pool = cs[0]!.nodePool;
    const pb = budgets.get(poolName);
    if (!pb || pb.available <= 0) {
      if (pb) for (const c of cs) explanations.push(budgetExplanation(c.node.name, pb, s.now));
      continue;
    }
    const nodes = s.nodes.filter((n) => n.nodePoolName === poolName && n.hasNodeClaim);
    const deleting = nodes.filter((n) => n.deleting).length;
    const pending = nodes.filter((n) => n.markedForDeletion && !n.deleting).length;
    const active = nodes.length - deleting - pending;
    const replicas = pool.replicas ?? 0;
    const limit = pool.limits[NODES] ?? Infinity;
    const slots = Math.max(0, Math.min(pb.available, cs.length, limit - active - deleting - pending));
    const why =
      active + pending > replicas
        ? `nodepool ${poolName} has ${active + pending} nodes for ${replicas} replicas; drift waits for the scale-down`
        : `nodepool ${poolName} is at its node limit (${limit}); no room for a replacement`;
    const claim = templateClaim(s, pool);
    cs.forEach((c, i) => {
      if (active + pending > replicas || i >= slots || !claim) {
        explanations.push(
          i >= pb.available
            ? budgetExplanation(c.node.name, pb, s.now, pb.available)
            : explanation(
                c.node.name,
                'static-limits',
                claim ? why : `nodepool ${poolName} offers no instance type for a replacement`,
              ),
        );
        return;
      }
      commands.push(makeCommand('Drifted', 'static-drift', [c], [claim]));
    });
  }
  return { commands, explanations, consolidated: false };
}
