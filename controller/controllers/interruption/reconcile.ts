// interruption: reads the cloud provider's interruption feed (SQS on AWS, scenario-injected in the
// simulator) and acts on each message as Karpenter's interruption controller does (docs/karpenter/aws-provider.md
// §6): for every NodeClaim on an instance the message names, publish the message's event, tell the
// provider which capacity was interrupted (spot offering or reservation, so launches avoid it), and for
// every kind but a rebalance recommendation delete the NodeClaim. Deleting is the whole "cordon and
// drain": the termination finalizers taint the Node, evict its pods through the Eviction API (PDBs hold),
// and terminate the instance, while the provisioner, seeing the Node start to delete, launches
// replacements for its pods at once (see controllers/provisioning). No message, however malformed, stops
// the loop; the long poll runs outside the work queue, so the controller counts as idle while it waits.
//
// When a message is deleted from the queue (acknowledged):
// 1. once it was handled: every NodeClaim it names was acted on (a failure leaves it in the inbox, and the
//    work queue retries it with backoff);
// 2. or once it is proven stale: no NodeClaim names its instance while cluster state is synced (every kind
//    listed and no launch in flight whose instance could be this one), or it is older than a launch can
//    take. Until then a message whose instance no visible NodeClaim names is left in the queue, not
//    deleted: SQS delivers it again after its visibility timeout, when the NodeClaim may be visible.
// Messages are keyed by event id, so SQS delivering a message again (a new receipt handle) while it is
// still being handled, or after it was handled, never acts twice: the latest handle is the one deleted.
import type { InterruptedCapacity, InterruptionEvent, InterruptionSource } from '../../cloudprovider/types.ts';
import { targetOf, type Event } from '../../operator/events.ts';
import { ignoreNotFound } from '../../operator/kube.ts';
import { done, type ReconcileResult } from '../../operator/result.ts';
import { errText, type Controller } from '../../operator/runtime.ts';
import type { NodeClaimEntry } from '../../state/statenode.ts';
import type { ControllerContext } from '../context.ts';
import { actionFor, instanceIdOf, kindOf, noticeFor, TERMINATING, type MessageKind } from './messages.ts';
import { LAUNCH_TIMEOUT_MS } from '../nodeclaim/lifecycle/liveness.ts';
import { STATE_NODES } from '../reads.ts';

/** Pause after a failed receive (SQS unreachable, credentials) before polling again. */
const RECEIVE_RETRY_MS = 10_000;
/** An unmatched message older than this is stale however busy launches are (a launch that takes longer is deleted). */
const UNMATCHED_MAX_AGE_MS = LAUNCH_TIMEOUT_MS;
/** How long a handled message's event id is remembered, so a late redelivery is deleted without acting. */
const HANDLED_MEMORY_MS = 10 * 60_000;

/** A message in the inbox: its latest receipt handle, and how far its handling got. */
interface Entry {
  readonly event: InterruptionEvent;
  handle: string;
  /** Acted on: only the acknowledgement is left (a retry after a failed delete does not act again). */
  acted: boolean;
}

type Outcome = 'handled' | 'waiting';

export function newInterruption(ctx: ControllerContext, source: InterruptionSource): Controller {
  const inbox = new Inbox(ctx, source);
  return {
    name: 'interruption',
    reads: STATE_NODES,
    reconcile: (id) => inbox.reconcile(id),
    register(enqueue) {
      void inbox.poll(enqueue);
      return () => inbox.stop();
    },
  };
}

/** The messages delivered and not yet deleted, the ones recently handled, and the long poll that fills it. */
class Inbox {
  /** Messages received and not yet deleted, by event id. */
  private readonly inbox = new Map<string, Entry>();
  /** Event ids handled (or proven stale) and deleted, with when. */
  private readonly handled = new Map<string, number>();
  /** Event ids logged as waiting for their NodeClaim (logged once at info). */
  private readonly waitingLogged = new Set<string>();
  private readonly abort = new AbortController();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly source: InterruptionSource,
  ) {}

  stop(): void {
    this.abort.abort();
  }

  async reconcile(id: string): Promise<ReconcileResult> {
    const entry = this.inbox.get(id);
    if (!entry) return done;
    if (!entry.acted && (await act(this.ctx, this.source, entry.event)) === 'waiting') return this.leaveInQueue(entry);
    entry.acted = true;
    // The latest handle: SQS may have delivered the message again while it was being handled.
    await this.source.acknowledge(entry.handle);
    this.inbox.delete(id);
    this.waitingLogged.delete(id);
    this.handled.set(id, this.ctx.clock.now());
    this.ctx.metrics.interruptionDeleted.inc();
    return done;
  }

  /** Long-polls the source until the controller stops; a failed receive waits RECEIVE_RETRY_MS. */
  async poll(enqueue: (key: string) => void): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      try {
        const batch = await this.source.receive(signal);
        for (const m of batch) this.arrived(m, enqueue);
      } catch (err) {
        if (signal.aborted) break;
        this.ctx.log.error(
          { err: errText(err) },
          `receiving interruption messages failed; retrying in ${RECEIVE_RETRY_MS / 1000} s`,
        );
        await this.ctx.clock.sleep(RECEIVE_RETRY_MS, signal).catch(() => undefined);
      }
    }
  }

  /** Leaves the message in the queue: SQS delivers it again once its visibility timeout ends. */
  private leaveInQueue(entry: Entry): ReconcileResult {
    const id = entry.event.id;
    this.inbox.delete(id);
    const first = !this.waitingLogged.has(id);
    this.waitingLogged.add(id);
    const fields = { id, messageKind: kindOf(entry.event), instances: instancesOf(entry.event) };
    const message =
      'no visible nodeclaim names the instance yet and cluster state is not synced; leaving the message in the queue';
    if (first) this.ctx.log.info(fields, message);
    else this.ctx.log.debug(fields, message);
    return done;
  }

  /** A delivered message: new ones go to the inbox; a redelivery only updates the handle, or is deleted if handled. */
  private arrived(
    m: { readonly event: InterruptionEvent; readonly handle: string },
    enqueue: (key: string) => void,
  ): void {
    const id = m.event.id;
    this.forgetOldHandled();
    if (this.handled.has(id)) return this.deleteRedelivered(id, m.handle);
    const entry = this.inbox.get(id);
    if (entry) {
      this.ctx.log.debug(
        { id, acted: entry.acted },
        'interruption message delivered again while in hand; keeping its latest receipt handle',
      );
      entry.handle = m.handle;
      return;
    }
    received(this.ctx, m.event);
    this.inbox.set(id, { event: m.event, handle: m.handle, acted: false });
    enqueue(id);
  }

  /** A message delivered again after it was handled: deleted without acting. */
  private deleteRedelivered(id: string, handle: string): void {
    const { log, metrics } = this.ctx;
    log.debug({ id }, 'interruption message delivered again after it was handled; deleting it');
    this.source.acknowledge(handle).then(
      () => metrics.interruptionDeleted.inc(),
      (err: unknown) => log.warn({ id, err: errText(err) }, 'deleting a redelivered interruption message failed'),
    );
  }

  private forgetOldHandled(): void {
    const before = this.ctx.clock.now() - HANDLED_MEMORY_MS;
    for (const [id, at] of this.handled) if (at < before) this.handled.delete(id);
  }
}

/** Counts and times a message each time it is delivered (a retried handling does not count it again). */
function received(ctx: ControllerContext, e: InterruptionEvent): void {
  ctx.metrics.interruptionReceived.inc({ message_type: kindOf(e) });
  if (Number.isFinite(e.time))
    ctx.metrics.interruptionQueueDuration.observe(Math.max(0, (ctx.clock.now() - e.time) / 1000));
}

/** Acts on every NodeClaim the message names; throws (after trying them all) if any failed. */
async function act(ctx: ControllerContext, source: InterruptionSource, e: InterruptionEvent): Promise<Outcome> {
  const kind = kindOf(e);
  if (kind === 'no_op') {
    ctx.log.debug(
      { id: e.id, detail: e.kind === 'noop' ? e.detail : `state ${e.kind === 'stateChange' ? e.state : ''}` },
      'ignoring interruption message',
    );
    return 'handled';
  }
  if (!instancesOf(e).length) ctx.log.warn({ id: e.id, messageKind: kind }, 'interruption message names no instance');
  const targets = targetsOf(ctx, e);
  if (!targets) return 'waiting';
  const failures: string[] = [];
  for (const claim of targets) {
    try {
      await handleClaim(ctx, source, e, kind, claim);
    } catch (err) {
      failures.push(`nodeclaim ${claim.info.name}: ${errText(err)}`);
    }
  }
  if (failures.length) throw new Error(`acting on interruption message ${e.id} (${kind}): ${failures.join('; ')}`);
  return 'handled';
}

/** The instance ids a message names (none for a no-op). */
function instancesOf(e: InterruptionEvent): string[] {
  const named = (e as { instanceIds?: unknown }).instanceIds;
  return Array.isArray(named) ? named.map(String) : [];
}

/** The NodeClaims a message names, or undefined while an instance it names may belong to one not visible yet. */
function targetsOf(ctx: ControllerContext, e: InterruptionEvent): NodeClaimEntry[] | undefined {
  const targets: NodeClaimEntry[] = [];
  for (const id of instancesOf(e)) {
    const claims = claimsOn(ctx, id);
    if (!claims.length && !provenStale(ctx, e)) return undefined;
    targets.push(...claims);
  }
  return targets;
}

/** NodeClaims by instance id, from cluster state (Karpenter's status.instanceID field index). */
function claimsOn(ctx: ControllerContext, instanceId: string): NodeClaimEntry[] {
  return ctx.cluster
    .nodeClaims()
    .filter((c) => c.info.providerId !== undefined && instanceIdOf(c.info.providerId) === instanceId);
}

/**
 * No NodeClaim names the instance and none can: cluster state is synced (every kind listed, every
 * NodeClaim launched and recorded), or the message is older than any launch may take.
 */
function provenStale(ctx: ControllerContext, e: InterruptionEvent): boolean {
  if (ctx.cluster.synced()) return true;
  return Number.isFinite(e.time) && ctx.clock.now() - e.time > UNMATCHED_MAX_AGE_MS;
}

/** One NodeClaim a message names: its notice, the capacity marked unavailable, and the delete its kind calls for. */
async function handleClaim(
  ctx: ControllerContext,
  source: InterruptionSource,
  e: InterruptionEvent,
  kind: MessageKind,
  claim: NodeClaimEntry,
): Promise<void> {
  const info = claim.info;
  const node = info.providerId ? ctx.cluster.nodeByProviderID(info.providerId) : undefined;
  const action = actionFor(kind);
  const targets = [targetOf(claim.obj, 'NodeClaim'), ...(node ? [targetOf(node.obj, 'Node')] : [])];
  publishNotice(ctx, kind, targets, node);
  ctx.metrics.interruptionActions.inc({ action_type: action });
  if (kind === 'spot_interrupted' || kind === 'capacity_reservation_interrupted')
    source.markUnavailable?.(e, interruptedCapacity(info.labels));
  if (action === 'NoAction' || info.deletionTimestamp !== undefined) return;
  await ctx.kube
    .delete('NodeClaim', info.name, { ...(claim.obj.metadata.uid ? { uid: claim.obj.metadata.uid } : {}) })
    .catch(ignoreNotFound);
  ctx.log.info(
    {
      queue: ctx.options.interruptionQueue,
      messageKind: kind,
      nodeclaim: info.name,
      action,
      ...(node ? { node: node.info.name } : {}),
    },
    'initiating delete from interruption message',
  );
  ctx.events.publish(
    ...targets.map((t) => ({
      involved: t,
      type: 'Warning' as const,
      reason: TERMINATING.reason,
      message: t.kind === 'Node' ? TERMINATING.node : TERMINATING.nodeClaim,
      dedupeValues: [TERMINATING.reason, t.uid ?? t.name],
    })),
  );
  ctx.metrics.nodeClaimsDisrupted.inc({
    reason: kind,
    nodepool: info.nodePoolName ?? '',
    capacity_type: info.labels['karpenter.sh/capacity-type'] ?? '',
  });
}

/** The message kind's event on the NodeClaim and its Node, and on the Node's pods for a spot interruption. */
function publishNotice(
  ctx: ControllerContext,
  kind: MessageKind,
  targets: ReadonlyArray<ReturnType<typeof targetOf>>,
  node: { readonly info: { readonly name: string } } | undefined,
): void {
  const notice = noticeFor(kind);
  if (!notice) return;
  const evts: Event[] = targets.map((t) => ({
    involved: t,
    type: notice.type,
    reason: notice.reason,
    message: notice.message,
    dedupeValues: [notice.reason, t.uid ?? t.name],
  }));
  if (kind === 'spot_interrupted' && node) {
    for (const p of ctx.cluster.workloads.podsOn(node.info.name)) {
      evts.push({
        involved: { kind: 'Pod', apiVersion: 'v1', name: p.name, namespace: p.namespace, uid: p.uid },
        type: 'Warning',
        reason: notice.reason,
        message: notice.message,
        dedupeValues: [notice.reason, p.uid],
      });
    }
  }
  ctx.events.publish(...evts);
}

/** The interrupted capacity as the NodeClaim's labels name it (type, zone, capacity type, reservation). */
function interruptedCapacity(labels: Readonly<Record<string, string>>): InterruptedCapacity {
  const type = labels['node.kubernetes.io/instance-type'];
  const zone = labels['topology.kubernetes.io/zone'];
  const capacityType = labels['karpenter.sh/capacity-type'];
  const reservationId = labels['karpenter.k8s.aws/capacity-reservation-id'];
  return {
    ...(type ? { instanceType: type } : {}),
    ...(zone ? { zone } : {}),
    ...(capacityType ? { capacityType } : {}),
    ...(reservationId ? { reservationId } : {}),
  };
}
