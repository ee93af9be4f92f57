// interruption: reads the cloud provider's interruption feed (SQS on AWS, scenario-injected in the
// simulator) and acts on each message as Karpenter's interruption controller does (spec/aws-provider.md
// §6): for every NodeClaim on an instance the message names, publish the message's event, tell the
// provider which capacity was interrupted (spot offering or reservation, so launches avoid it), and for
// every kind but a rebalance recommendation delete the NodeClaim. Deleting is the whole "cordon and
// drain": the termination finalizers taint the Node, evict its pods through the Eviction API (PDBs hold),
// and terminate the instance, while the provisioner, seeing the Node start to delete, launches
// replacements for its pods at once (see controllers/provisioning). A message is acknowledged once handled;
// if handling fails it stays in the inbox and the work queue retries it with backoff. No message, however
// malformed, stops the loop. The long poll runs outside the work queue, so the controller counts as idle
// while it waits.
import type { InterruptionEvent, InterruptionSource } from '../../cloudprovider/types.ts';
import { targetOf, type Event } from '../../operator/events.ts';
import { ignoreNotFound } from '../../operator/kube.ts';
import { done, type ReconcileResult } from '../../operator/result.ts';
import { errText, type Controller } from '../../operator/runtime.ts';
import type { NodeClaimEntry } from '../../state/statenode.ts';
import type { ControllerContext } from '../context.ts';
import { actionFor, instanceIdOf, kindOf, noticeFor, TERMINATING, type MessageKind } from './messages.ts';

/** Pause after a failed receive (SQS unreachable, credentials) before polling again. */
export const RECEIVE_RETRY_MS = 10_000;

export function newInterruption(ctx: ControllerContext, source: InterruptionSource): Controller {
  const log = ctx.log;
  const inbox = new Map<string, InterruptionEvent>();
  const abort = new AbortController();

  /** NodeClaims by instance id, from cluster state (Karpenter's status.instanceID field index). */
  function claimsOn(instanceId: string): NodeClaimEntry[] {
    return ctx.cluster.nodeClaims().filter((c) => c.info.providerId !== undefined && instanceIdOf(c.info.providerId) === instanceId);
  }

  async function handleClaim(e: InterruptionEvent, kind: MessageKind, claim: NodeClaimEntry): Promise<void> {
    const info = claim.info;
    const node = info.providerId ? ctx.cluster.nodeByProviderID(info.providerId) : undefined;
    const action = actionFor(kind);
    const notice = noticeFor(kind);
    const targets = [targetOf(claim.obj, 'NodeClaim'), ...(node ? [targetOf(node.obj, 'Node')] : [])];
    if (notice) {
      const evts: Event[] = targets.map((t) => ({ involved: t, type: notice.type, reason: notice.reason, message: notice.message, dedupeValues: [notice.reason, t.uid ?? t.name] }));
      if (kind === 'spot_interrupted' && node) {
        for (const p of ctx.cluster.workloads.podsOn(node.info.name)) {
          evts.push({ involved: { kind: 'Pod', apiVersion: 'v1', name: p.name, namespace: p.namespace, uid: p.uid }, type: 'Warning', reason: notice.reason, message: notice.message, dedupeValues: [notice.reason, p.uid] });
        }
      }
      ctx.events.publish(...evts);
    }
    ctx.metrics.interruptionActions.inc({ action_type: action });
    if (kind === 'spot_interrupted' || kind === 'capacity_reservation_interrupted') {
      source.markUnavailable?.(e, {
        ...(info.labels['node.kubernetes.io/instance-type'] ? { instanceType: info.labels['node.kubernetes.io/instance-type'] } : {}),
        ...(info.labels['topology.kubernetes.io/zone'] ? { zone: info.labels['topology.kubernetes.io/zone'] } : {}),
        ...(info.labels['karpenter.sh/capacity-type'] ? { capacityType: info.labels['karpenter.sh/capacity-type'] } : {}),
        ...(info.labels['karpenter.k8s.aws/capacity-reservation-id'] ? { reservationId: info.labels['karpenter.k8s.aws/capacity-reservation-id'] } : {}),
      });
    }
    if (action === 'NoAction' || info.deletionTimestamp !== undefined) return;
    await ctx.kube.delete('NodeClaim', info.name, { ...(claim.obj.metadata.uid ? { uid: claim.obj.metadata.uid } : {}) }).catch(ignoreNotFound);
    log.info({ queue: ctx.options.interruptionQueue, messageKind: kind, nodeclaim: info.name, action, ...(node ? { node: node.info.name } : {}) }, 'initiating delete from interruption message');
    ctx.events.publish(...targets.map((t) => ({
      involved: t, type: 'Warning' as const, reason: TERMINATING.reason,
      message: t.kind === 'Node' ? TERMINATING.node : TERMINATING.nodeClaim, dedupeValues: [TERMINATING.reason, t.uid ?? t.name],
    })));
    ctx.metrics.nodeClaimsDisrupted.inc({ reason: kind, nodepool: info.nodePoolName ?? '', capacity_type: info.labels['karpenter.sh/capacity-type'] ?? '' });
  }

  /** Acts on every NodeClaim the message names; throws (after trying them all) if any failed. */
  async function act(e: InterruptionEvent): Promise<void> {
    const kind = kindOf(e);
    if (kind === 'no_op') {
      log.debug({ id: e.id, detail: e.kind === 'noop' ? e.detail : `state ${e.kind === 'stateChange' ? e.state : ''}` }, 'ignoring interruption message');
      return;
    }
    const failures: string[] = [];
    const named = (e as { instanceIds?: unknown }).instanceIds;
    const ids = Array.isArray(named) ? named : [];
    if (!ids.length) log.warn({ id: e.id, messageKind: kind }, 'interruption message names no instance');
    for (const id of ids) {
      for (const claim of claimsOn(String(id))) {
        try {
          await handleClaim(e, kind, claim);
        } catch (err) {
          failures.push(`nodeclaim ${claim.info.name}: ${errText(err)}`);
        }
      }
    }
    if (failures.length) throw new Error(`acting on interruption message ${e.id} (${kind}): ${failures.join('; ')}`);
  }

  async function reconcile(handle: string): Promise<ReconcileResult> {
    const e = inbox.get(handle);
    if (!e) return done;
    await act(e);
    await source.acknowledge(handle);
    inbox.delete(handle);
    ctx.metrics.interruptionDeleted.inc();
    return done;
  }

  /** Counts and times a message once, when it arrives (a retried handling does not count it again). */
  function received(e: InterruptionEvent): void {
    ctx.metrics.interruptionReceived.inc({ message_type: kindOf(e) });
    if (Number.isFinite(e.time)) ctx.metrics.interruptionQueueDuration.observe(Math.max(0, (ctx.clock.now() - e.time) / 1000));
  }

  return {
    name: 'interruption',
    reconcile,
    register(enqueue) {
      void (async () => {
        while (!abort.signal.aborted) {
          try {
            const batch = await source.receive(abort.signal);
            for (const m of batch) {
              received(m.event);
              inbox.set(m.handle, m.event);
              enqueue(m.handle);
            }
          } catch (err) {
            if (abort.signal.aborted) break;
            log.error({ err: errText(err) }, `receiving interruption messages failed; retrying in ${RECEIVE_RETRY_MS / 1000} s`);
            await ctx.clock.sleep(RECEIVE_RETRY_MS, abort.signal).catch(() => undefined);
          }
        }
      })();
      return () => abort.abort();
    },
  };
}
