// Replacement NodeClaims for a disruption command (docs/karpenter/disruption.md §5.7 step 4): built from the
// NodePool exactly as the provisioner builds its own (provisioning/nodeclaim.ts), written into cluster
// state at once, and counted in karpenter_nodeclaims_created_total with the lower-case disruption reason
// (Karpenter's provisioner.WithReason). NodePool limits are re-checked against current usage without the
// candidates, which the command removes.
import type { Command, Pod, Snapshot } from '../../../engine/index.ts';
import { ignoreNotFound } from '../../operator/kube.ts';
import type { ControllerContext } from '../context.ts';
import { add, exceededLimit, poolUsage, worstCaseCapacity } from '../provisioning/limits.ts';
import { nodeClaimFor } from '../provisioning/nodeclaim.ts';

/** Creates the command's replacements in order; on any failure deletes those created and throws. */
export async function createReplacements(ctx: ControllerContext, cmd: Command, snapshot: Snapshot): Promise<string[]> {
  const gone = new Set(cmd.candidates.map((c) => c.providerId));
  const others = ctx.cluster.stateNodes().filter((n) => !n.providerId || !gone.has(n.providerId));
  const usage = new Map<string, Record<string, number>>();
  const names: string[] = [];
  try {
    for (const plan of cmd.replacements) {
      const entry = ctx.cluster.nodePool(plan.nodePool);
      const pool = entry?.pool;
      if (!entry || !pool) throw new Error(`nodepool ${plan.nodePool} of a replacement is gone`);
      const next = add(
        usage.get(pool.name) ?? poolUsage(others, pool.name),
        worstCaseCapacity(plan, snapshot.instanceTypes.get(pool.name) ?? []),
      );
      const exceeded = exceededLimit(pool.name, pool.limits, next);
      if (exceeded) throw new Error(`replacement for ${cmd.kind} would exceed a limit: ${exceeded}`);
      const created = await ctx.kube.create('NodeClaim', nodeClaimFor(plan, pool, entry.obj));
      usage.set(pool.name, next);
      ctx.cluster.applyNodeClaim(created);
      names.push(created.metadata.name!);
      ctx.metrics.nodeClaimsCreated.inc({
        reason: cmd.reason.toLowerCase(),
        nodepool: pool.name,
        min_values_relaxed: String(plan.minValuesRelaxed ?? false),
      });
      ctx.log.info(
        {
          nodeclaim: created.metadata.name,
          nodepool: pool.name,
          reason: cmd.reason,
          pods: plan.pods.length,
          instanceTypes: plan.instanceTypes.slice(0, 5).map((o) => o.name),
        },
        'created replacement nodeclaim',
      );
    }
  } catch (err) {
    await deleteNodeClaims(ctx, names);
    throw err;
  }
  return names;
}

export async function deleteNodeClaims(ctx: ControllerContext, names: readonly string[]): Promise<void> {
  for (const n of names) await ctx.kube.delete('NodeClaim', n).catch(ignoreNotFound);
}

/** Who goes where, for Nominated events: moved pods by uid, with their destination. */
export function destinations(
  cmd: Command,
  replacementNames: readonly string[],
  snapshot: Snapshot,
): Array<{ pod: Pod; nodeClaim?: string; node?: string; providerId?: string }> {
  const pods = new Map<string, Pod>();
  for (const n of snapshot.nodes) for (const p of n.pods) pods.set(p.uid, p);
  const out: Array<{ pod: Pod; nodeClaim?: string; node?: string; providerId?: string }> = [];
  for (const m of cmd.podsMoved) {
    const pod = pods.get(m.uid);
    if (!pod) continue;
    if (m.to.startsWith('replacement:')) {
      const name = replacementNames[Number(m.to.slice('replacement:'.length))];
      if (name) out.push({ pod, nodeClaim: name });
      continue;
    }
    const dest = snapshot.nodes.find((n) => n.name === m.to);
    if (!dest) continue;
    out.push({
      pod,
      ...(dest.nodeClaimName ? { nodeClaim: dest.nodeClaimName } : {}),
      ...(dest.hasNode ? { node: dest.name } : {}),
      ...(dest.providerId ? { providerId: dest.providerId } : {}),
    });
  }
  return out;
}
