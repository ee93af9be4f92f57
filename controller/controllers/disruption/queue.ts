// Running a disruption command (spec/disruption.md §5.7): mark each candidate disrupted (the
// karpenter.sh/disrupted:NoSchedule taint on its Node, DisruptionReason on its NodeClaim), mark it for
// deletion in cluster state (so provisioning re-plans its pods), then delete its NodeClaim; termination
// drains and removes it. `replace` commands (replacements launched and initialized first) arrive with the
// disruption engine.
import { conditionsOf, withCondition } from '../../operator/conditions.ts';
import { targetOf } from '../../operator/events.ts';
import { ignoreNotFound } from '../../operator/kube.ts';
import type { ControllerContext } from '../context.ts';
import { DISRUPTED_TAINT } from '../keys.ts';
import { reschedulable } from './emptiness.ts';
import type { Candidate, Command } from './types.ts';

type TaintJson = { key: string; value?: string; effect: string };

async function markDisrupted(ctx: ControllerContext, c: Candidate, reason: string): Promise<void> {
  const node = ctx.cluster.nodeByProviderID(c.providerId);
  if (node) {
    const taints = (node.obj.spec?.['taints'] ?? []) as TaintJson[];
    if (!taints.some((t) => t.key === DISRUPTED_TAINT.key && t.effect === DISRUPTED_TAINT.effect)) {
      ctx.cluster.applyNode(await ctx.kube.patch('Node', node.info.name, {
        metadata: { resourceVersion: node.obj.metadata.resourceVersion },
        spec: { taints: [...taints.filter((t) => t.key !== DISRUPTED_TAINT.key), { ...DISRUPTED_TAINT }] },
      }));
    }
  }
  const claim = ctx.cluster.nodeClaim(c.nodeClaimName);
  if (claim) {
    const conds = withCondition(conditionsOf(claim.obj), 'DisruptionReason', 'True', ctx.clock.now(), { reason });
    const rv = claim.obj.metadata.resourceVersion;
    ctx.cluster.applyNodeClaim(await ctx.kube.patchStatus('NodeClaim', c.nodeClaimName, { conditions: conds }, rv ? { resourceVersion: rv } : {}));
  }
}

/** Starts a command; returns the candidates it deleted. */
export async function execute(ctx: ControllerContext, cmd: Command): Promise<Candidate[]> {
  if (cmd.decision === 'replace') throw new Error(`disruption: replace commands are not supported yet (${cmd.reason}, ${cmd.candidates.length} candidate(s))`);
  const log = ctx.log;
  const marked: Candidate[] = [];
  for (const c of cmd.candidates) {
    try {
      await markDisrupted(ctx, c, cmd.reason);
      marked.push(c);
    } catch (err) {
      log.warn({ nodeclaim: c.nodeClaimName, err: String(err) }, 'marking a candidate disrupted failed; leaving it');
    }
  }
  if (!marked.length) return [];
  log.info({ decision: cmd.decision, reason: cmd.reason, nodes: marked.map((c) => c.node.name), instanceTypes: marked.map((c) => c.node.labels['node.kubernetes.io/instance-type']), savingsPerHour: marked.reduce((a, c) => a + c.price, 0) }, 'disrupting node(s)');
  ctx.cluster.markForDeletion(...marked.map((c) => c.providerId));
  const reason = cmd.reason.toLowerCase();
  ctx.metrics.disruptionDecisions.inc({ decision: cmd.decision, reason, consolidation_type: cmd.consolidationType });
  for (const c of marked) {
    await ctx.kube.delete('NodeClaim', c.nodeClaimName).catch(ignoreNotFound);
    const node = ctx.cluster.nodeByProviderID(c.providerId);
    const claim = ctx.cluster.nodeClaim(c.nodeClaimName);
    if (node) ctx.events.publish({ involved: targetOf(node.obj, 'Node'), type: 'Normal', reason: 'DisruptionTerminating', message: `Disrupting Node: ${cmd.reason}` });
    if (claim) ctx.events.publish({ involved: targetOf(claim.obj, 'NodeClaim'), type: 'Normal', reason: 'DisruptionTerminating', message: `Disrupting NodeClaim: ${cmd.reason}` });
    const labels = { reason, nodepool: c.nodePool.name, capacity_type: c.node.labels['karpenter.sh/capacity-type'] ?? '' };
    ctx.metrics.nodeClaimsDisrupted.inc(labels);
    ctx.metrics.podsDisruptionInitiated.inc(labels, c.node.pods.filter(reschedulable).length);
  }
  return marked;
}
