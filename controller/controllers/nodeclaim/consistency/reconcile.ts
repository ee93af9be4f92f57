// nodeclaim.consistency (Karpenter's consistency controller): every 10 minutes per initialized NodeClaim,
// the registered Node must have at least 90% of the capacity the NodeClaim expected for every resource it
// requested; each shortfall is published as a FailedConsistencyCheck event ("expected 16Gi of resource
// memory, but found 12Gi (75.0% of expected)") and logged, and the NodeClaim's ConsistentStateFound
// condition says whether any was found.
import { findCondition, conditionsOf, withCondition } from '../../../operator/conditions.ts';
import { targetOf } from '../../../operator/events.ts';
import { done, requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { NodeClaimEntry } from '../../../state/statenode.ts';
import type { ControllerContext } from '../../context.ts';

const SCAN_PERIOD_MS = 10 * 60_000;

/** The raw quantity strings of a resource list (status.capacity), for the messages. */
const raw = (o: unknown, key: string): string => String((o as Record<string, unknown> | undefined)?.[key] ?? '0');

/** The node-shape issues of one NodeClaim and its Node, in Karpenter's words. */
function nodeShapeIssues(
  claim: NodeClaimEntry,
  nodeCapacity: Readonly<Record<string, number>>,
  nodeCapacityRaw: unknown,
): string[] {
  const issues: string[] = [];
  for (const [resource, requested] of Object.entries(claim.info.requests)) {
    const expected = claim.info.capacity[resource] ?? 0;
    if (!requested || !expected) continue;
    const pct = (nodeCapacity[resource] ?? 0) / expected;
    if (pct < 0.9)
      issues.push(
        `expected ${raw(claim.obj.status?.['capacity'], resource)} of resource ${resource}, but found ${raw(nodeCapacityRaw, resource)} (${(pct * 100).toFixed(1)}% of expected)`,
      );
  }
  return issues;
}

export function newConsistency(ctx: ControllerContext): Controller {
  const lastScanned = new Map<string, number>();

  async function reconcile(name: string): Promise<ReconcileResult> {
    const claim = ctx.cluster.nodeClaim(name);
    if (!claim || claim.info.deletionTimestamp !== undefined) {
      lastScanned.delete(name);
      return done;
    }
    if (!claim.info.providerId || findCondition(claim.obj, 'Initialized')?.status !== 'True') return done;
    const now = ctx.clock.now();
    const last = lastScanned.get(name);
    if (last !== undefined && now - last < SCAN_PERIOD_MS) return requeueAfter(SCAN_PERIOD_MS - (now - last));
    const node = ctx.cluster.nodeByProviderID(claim.info.providerId);
    if (!node) return done;
    lastScanned.set(name, now);
    const issues = nodeShapeIssues(claim, node.info.capacity, node.obj.status?.['capacity']);
    for (const issue of issues) {
      ctx.log.info({ node: node.info.name, issue }, 'failed consistency check');
      ctx.events.publish({
        involved: targetOf(claim.obj, 'NodeClaim'),
        type: 'Warning',
        reason: 'FailedConsistencyCheck',
        message: issue,
      });
    }
    const want = issues.length ? 'False' : 'True';
    if (findCondition(claim.obj, 'ConsistentStateFound')?.status !== want) {
      const conds = issues.length
        ? withCondition(conditionsOf(claim.obj), 'ConsistentStateFound', 'False', now, {
            reason: 'ConsistencyCheckFailed',
            message: 'Consistency Check Failed',
          })
        : withCondition(conditionsOf(claim.obj), 'ConsistentStateFound', 'True', now);
      const rv = claim.obj.metadata.resourceVersion;
      ctx.cluster.applyNodeClaim(
        await ctx.kube.patchStatus('NodeClaim', name, { conditions: conds }, rv ? { resourceVersion: rv } : {}),
      );
    }
    return requeueAfter(SCAN_PERIOD_MS);
  }

  return {
    name: 'nodeclaim.consistency',
    reads: ['NodeClaim', 'Node'],
    reconcile,
    register(enqueue) {
      for (const c of ctx.cluster.nodeClaims()) enqueue(c.info.name);
      return ctx.cluster.subscribe((c) => {
        if (c.kind === 'NodeClaim') enqueue(c.name);
      });
    },
  };
}
