// interruption: reads the cloud provider's interruption feed (SQS on AWS, scenario-injected in the
// simulator) and acts on each message (spec/aws-provider.md §6): a spot interruption, a scheduled
// maintenance or an instance stopping/terminating deletes the affected NodeClaims (their pods are
// re-provisioned while the nodes drain); a rebalance recommendation is only recorded as an event. Every
// message is acknowledged once handled, parseable or not. The long poll runs outside the work queue, so
// the controller counts as idle while it waits. Metrics carry Karpenter's message types; messages the
// source could not parse never arrive here (the source counts and deletes them).
import { interruptionMessageType, type InterruptionEvent, type InterruptionSource } from '../../cloudprovider/types.ts';
import { targetOf } from '../../operator/events.ts';
import { ignoreNotFound } from '../../operator/kube.ts';
import { done, type ReconcileResult } from '../../operator/result.ts';
import type { Controller } from '../../operator/runtime.ts';
import type { ControllerContext } from '../context.ts';

const STOPPING = new Set(['stopping', 'stopped', 'shutting-down', 'terminated']);

const EVENT_REASON: Readonly<Record<InterruptionEvent['kind'], string>> = {
  spotInterruption: 'SpotInterrupted',
  rebalanceRecommendation: 'SpotRebalanceRecommendation',
  scheduledChange: 'InstanceUnhealthy',
  stateChange: 'InstanceStopping',
  capacityReservationInterruption: 'CapacityReservationInterrupted',
  noop: 'Noop',
};

export function newInterruption(ctx: ControllerContext, source: InterruptionSource): Controller {
  const log = ctx.log;
  const inbox = new Map<string, InterruptionEvent>();
  const abort = new AbortController();

  async function onEvent(e: InterruptionEvent): Promise<void> {
    ctx.metrics.interruptionReceived.inc({ message_type: interruptionMessageType(e) });
    ctx.metrics.interruptionQueueDuration.observe(Math.max(0, (ctx.clock.now() - e.time) / 1000));
    if (e.kind === 'noop') return;
    const act = e.kind !== 'rebalanceRecommendation' && (e.kind !== 'stateChange' || STOPPING.has(e.state));
    for (const id of e.instanceIds) {
      const claim = ctx.cluster.nodeClaims().find((c) => c.info.providerId?.endsWith(`/${id}`));
      if (!claim) continue;
      const node = claim.info.providerId ? ctx.cluster.nodeByProviderID(claim.info.providerId) : undefined;
      const message = e.kind === 'spotInterruption' ? 'Spot interruption warning was triggered' : e.kind === 'rebalanceRecommendation' ? 'Spot rebalance recommendation was triggered'
        : e.kind === 'stateChange' ? `Instance is ${e.state}` : 'Instance health event was triggered';
      for (const target of [targetOf(claim.obj, 'NodeClaim'), ...(node ? [targetOf(node.obj, 'Node')] : [])]) {
        ctx.events.publish({ involved: target, type: 'Warning', reason: EVENT_REASON[e.kind], message });
      }
      if (!act || claim.info.deletionTimestamp !== undefined) continue;
      log.info({ nodeclaim: claim.info.name, instance: id, kind: e.kind }, 'deleting an interrupted nodeclaim');
      await ctx.kube.delete('NodeClaim', claim.info.name).catch(ignoreNotFound);
      ctx.metrics.nodeClaimsDisrupted.inc({ reason: 'interrupted', nodepool: claim.info.nodePoolName ?? '', capacity_type: claim.info.labels['karpenter.sh/capacity-type'] ?? '' });
    }
  }

  async function reconcile(handle: string): Promise<ReconcileResult> {
    const e = inbox.get(handle);
    if (!e) return done;
    await onEvent(e);
    await source.acknowledge(handle);
    inbox.delete(handle);
    ctx.metrics.interruptionDeleted.inc();
    return done;
  }

  return {
    name: 'interruption',
    reconcile,
    // Karpenter handles 10 messages at a time (one receive's worth).
    concurrency: 10,
    register(enqueue) {
      void (async () => {
        while (!abort.signal.aborted) {
          try {
            const batch = await source.receive(abort.signal);
            for (const m of batch) {
              inbox.set(m.handle, m.event);
              enqueue(m.handle);
            }
          } catch (err) {
            if (abort.signal.aborted) break;
            log.error({ err: String(err) }, 'receiving interruption messages failed; retrying in 10 s');
            await ctx.clock.sleep(10_000, abort.signal).catch(() => undefined);
          }
        }
      })();
      return () => abort.abort();
    },
  };
}
