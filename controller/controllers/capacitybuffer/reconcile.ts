// capacitybuffer (feature gate CapacityBuffer; Karpenter core pkg/controllers/capacitybuffer/controller.go,
// main at 2266468): for each CapacityBuffer, keyed namespace/name,
//
// 1. resolves its pod shape (resolve.ts) and its replica count (engine bufferReplicas: replicas, the
//    percentage of the scalable's replicas, limits);
// 2. writes status: ReadyForProvisioning (True/Resolved; False with ScalableRefNotFound, PodTemplateNotFound or
//    ResolutionFailed and the error), replicas, podTemplateRef and podTemplateGeneration (podTemplateRef
//    buffers), provisioningStrategy;
// 3. builds the buffer's virtual pods into cluster state (dropped when it is not ready or has no replicas, or
//    is deleted), which every provisioning pass and disruption simulation schedules with the real pods;
// 4. triggers the provisioner, and looks again every 30 s (a scaled Deployment changes a percentage buffer);
//    sooner on any change to the buffer or to a PodTemplate it names.
import { bufferReplicas, formatFieldError, virtualPods, type CapacityBuffer } from '../../../engine/index.ts';
import { conditionsOf, sameConditions, withCondition, type KubeCondition } from '../../operator/conditions.ts';
import { isConflict, isNotFound, type KubeObject } from '../../operator/kube.ts';
import { done, requeueAfter, type ReconcileResult } from '../../operator/result.ts';
import { errText, type Controller } from '../../operator/runtime.ts';
import { bufferKey, type BufferEntry } from '../../state/buffers.ts';
import type { ControllerContext } from '../context.ts';
import { resolveBuffer, UnsupportedRefError, type Resolution } from './resolve.ts';

export const READY_FOR_PROVISIONING = 'ReadyForProvisioning';
const RESYNC_MS = 30_000;

/** What one pass found: the status to write, the virtual pods (when ready), and an error to retry on. */
interface Outcome {
  readonly status: Record<string, unknown>;
  readonly ready: boolean;
  readonly pods?: ReturnType<typeof virtualPods>;
  readonly retry?: unknown;
}

interface BufferTrigger {
  trigger(): void;
}

function condition(
  ctx: ControllerContext,
  entry: BufferEntry,
  status: 'True' | 'False',
  reason: string,
  message: string,
): KubeCondition[] {
  const g = entry.obj.metadata.generation;
  return withCondition(conditionsOf(entry.obj), READY_FOR_PROVISIONING, status, ctx.clock.now(), {
    reason,
    message,
    ...(g !== undefined ? { generation: g } : {}),
  });
}

function failed(ctx: ControllerContext, entry: BufferEntry, reason: string, message: string, retry?: unknown): Outcome {
  return { status: { conditions: condition(ctx, entry, 'False', reason, message) }, ready: false, retry };
}

/** Resolves the buffer into the status to write and its virtual pods. */
async function outcome(ctx: ControllerContext, entry: BufferEntry): Promise<Outcome> {
  const cb = entry.buffer;
  if (!cb) return failed(ctx, entry, 'ResolutionFailed', entry.errors.join('; '));
  if (!cb.podTemplateRef && !cb.scalableRef)
    return failed(ctx, entry, 'ResolutionFailed', 'Neither podTemplateRef nor scalableRef is set');
  let r: Resolution;
  try {
    r = await resolveBuffer(ctx.kube, cb);
  } catch (err) {
    const notFound = cb.podTemplateRef ? 'PodTemplateNotFound' : 'ScalableRefNotFound';
    if (isNotFound(err)) return failed(ctx, entry, notFound, errText(err));
    return failed(ctx, entry, 'ResolutionFailed', errText(err), err instanceof UnsupportedRefError ? undefined : err);
  }
  return resolved(ctx, entry, cb, r);
}

function resolved(ctx: ControllerContext, entry: BufferEntry, cb: CapacityBuffer, r: Resolution): Outcome {
  // Virtual pods are as old as their buffer: the same pods from one resolution to the next.
  const created = Date.parse(entry.obj.metadata.creationTimestamp ?? '') || ctx.clock.now();
  // One pod first: its requests size the limits, and a template that makes no pod is said on the status.
  const one = virtualPods(cb, r.template, 1, created);
  if (!one.ok) return failed(ctx, entry, 'ResolutionFailed', one.errors.map(formatFieldError).join('; '));
  const replicas = bufferReplicas(cb, one.value[0]!.requests, r.scalableReplicas);
  const status: Record<string, unknown> = {
    conditions: condition(ctx, entry, 'True', 'Resolved', 'Pod template resolved successfully'),
    replicas,
    podTemplateRef: r.podTemplate ? { name: r.podTemplate.name } : null,
    podTemplateGeneration: r.podTemplate ? r.podTemplate.generation : null,
    provisioningStrategy: cb.provisioningStrategy,
  };
  const pods = replicas > 0 ? virtualPods(cb, r.template, replicas, created) : undefined;
  return { status, ready: true, ...(pods ? { pods } : {}) };
}

/** Whether the status to write differs from the buffer's (conditions compared without their times). */
function statusChanged(entry: BufferEntry, status: Record<string, unknown>): boolean {
  const cur = (entry.obj.status ?? {}) as Record<string, unknown>;
  return Object.entries(status).some(([k, v]) =>
    k === 'conditions'
      ? !sameConditions(conditionsOf(entry.obj), v as KubeCondition[])
      : JSON.stringify(cur[k] ?? null) !== JSON.stringify(v ?? null),
  );
}

/** Writes what changed; false on a conflict (someone wrote first) or a buffer gone meanwhile. */
async function writeStatus(
  ctx: ControllerContext,
  entry: BufferEntry,
  status: Record<string, unknown>,
): Promise<boolean> {
  if (!statusChanged(entry, status)) return true;
  try {
    const updated = await ctx.kube.patchStatus('CapacityBuffer', entry.obj.metadata.name!, status, {
      namespace: entry.obj.metadata.namespace ?? 'default',
      ...(entry.obj.metadata.resourceVersion ? { resourceVersion: entry.obj.metadata.resourceVersion } : {}),
    });
    ctx.cluster.workloads.buffers.applyBuffer(updated);
    return true;
  } catch (err) {
    if (isConflict(err) || isNotFound(err)) return false;
    throw err;
  }
}

/** Every buffer now, then a buffer on a change to its spec (or its deletion) and to a PodTemplate it names. */
function watchBuffers(ctx: ControllerContext, enqueue: (key: string) => void): () => void {
  const buffers = ctx.cluster.workloads.buffers;
  for (const e of buffers.buffers()) enqueue(bufferKey(e.obj));
  return ctx.cluster.subscribe((c) => {
    const spec = (o: KubeObject | undefined) => JSON.stringify([o?.spec ?? null, o?.metadata.generation]);
    if (c.kind === 'CapacityBuffer' && (c.type === 'delete' || !c.old || spec(c.obj) !== spec(c.old)))
      enqueue(bufferKey(c.obj));
    if (c.kind === 'PodTemplate')
      for (const e of buffers.buffers())
        if (e.obj.metadata.namespace === c.namespace && e.buffer?.podTemplateRef?.name === c.name)
          enqueue(bufferKey(e.obj));
  });
}

export function newCapacityBuffer(ctx: ControllerContext, provisioner: BufferTrigger | undefined): Controller {
  const buffers = ctx.cluster.workloads.buffers;
  /** The spec the cached virtual pods were built from, per buffer (rebuilt only when it changes). */
  const builtFrom = new Map<string, string>();

  /** The virtual pods into cluster state, keeping the prior list when the buffer's shape and count are unchanged. */
  function cache(key: string, entry: BufferEntry, o: Outcome): void {
    if (!o.ready || !o.pods?.ok) {
      builtFrom.delete(key);
      buffers.setVirtualPods(key, undefined);
      return;
    }
    const from = JSON.stringify([entry.obj.metadata.uid, o.pods.value.length, o.pods.value[0]]);
    if (builtFrom.get(key) === from && buffers.virtualPodsOf(key)) return;
    builtFrom.set(key, from);
    buffers.setVirtualPods(key, o.pods.value);
  }

  async function reconcile(key: string): Promise<ReconcileResult> {
    const entry = buffers.buffer(key);
    if (!entry) {
      builtFrom.delete(key);
      buffers.setVirtualPods(key, undefined);
      // A provisioning pass recounts where the remaining buffers' pods sit.
      provisioner?.trigger();
      return done;
    }
    const o = await outcome(ctx, entry);
    const written = await writeStatus(ctx, entry, o.status);
    cache(key, entry, o);
    if (!written) return requeueAfter(1_000);
    if (o.retry !== undefined) throw o.retry;
    if (o.ready) provisioner?.trigger();
    else
      ctx.log.info(
        { capacitybuffer: key, status: o.status['conditions'] },
        'capacitybuffer not ready for provisioning',
      );
    return requeueAfter(RESYNC_MS);
  }

  return {
    name: 'capacitybuffer',
    reads: ['CapacityBuffer', 'PodTemplate'],
    reconcile: (key) => reconcile(key).catch((err) => (isNotFound(err) ? done : Promise.reject(err))),
    register: (enqueue) => watchBuffers(ctx, enqueue),
  };
}
