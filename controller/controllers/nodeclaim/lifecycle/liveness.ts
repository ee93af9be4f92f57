// Liveness (docs/karpenter/disruption.md §5.4): a NodeClaim that has not launched 5 minutes after its Launched
// condition last moved, or has not registered 15 minutes after its Registered condition last moved, is
// deleted (so provisioning can try again elsewhere).
import { targetOf } from '../../../operator/events.ts';
import { ignoreNotFound } from '../../../operator/kube.ts';
import { transitionTime } from '../../../operator/conditions.ts';
import type { ControllerContext } from '../../context.ts';
import { condition, conditionIs, deleted, stop, type Draft, type Step } from './draft.ts';

export const LAUNCH_TIMEOUT_MS = 5 * 60_000;
const REGISTRATION_TIMEOUT_MS = 15 * 60_000;

export async function liveness(ctx: ControllerContext, d: Draft): Promise<Step> {
  if (conditionIs(d, 'Registered', 'True')) return stop();
  const now = ctx.clock.now();
  const checks: Array<[string, number, string]> = [
    ['Launched', LAUNCH_TIMEOUT_MS, 'launch_timeout'],
    ['Registered', REGISTRATION_TIMEOUT_MS, 'registration_timeout'],
  ];
  let soonest = Infinity;
  for (const [type, timeout, reason] of checks) {
    if (conditionIs(d, type, 'True')) continue;
    const since = transitionTime(condition(d, type)) ?? now;
    if (now - since >= timeout) {
      ctx.log.warn({ nodeclaim: d.info.name, reason, sinceMs: now - since }, 'nodeclaim timed out; deleting');
      ctx.events.publish({
        involved: targetOf(d.obj, 'NodeClaim'),
        type: 'Warning',
        reason: 'NodeClaimTimedOut',
        message: `NodeClaim ${d.info.name} did not ${type === 'Launched' ? 'launch' : 'register'} within ${timeout / 60_000} minutes; deleting it`,
      });
      await ctx.kube.delete('NodeClaim', d.info.name).catch(ignoreNotFound);
      ctx.metrics.nodeClaimsDisrupted.inc({
        reason,
        nodepool: d.info.nodePoolName ?? '',
        capacity_type: d.labels['karpenter.sh/capacity-type'] ?? '',
      });
      return deleted;
    }
    soonest = Math.min(soonest, since + timeout - now);
  }
  return Number.isFinite(soonest) ? stop(soonest) : stop();
}
