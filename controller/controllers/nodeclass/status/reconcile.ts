// nodeclass.status: Karpenter's EC2NodeClass controller for whichever cloud provider resolves node classes
// (CloudProvider.nodeClasses: the AWS provider against EC2, IAM and SSM; the simulator against its account).
//
// 1. The finalizer karpenter.k8s.aws/termination goes on first (optimistic lock on the finalizer list).
// 2. A class that does not validate gets ValidationSucceeded=False and Ready=False naming the fields.
// 3. Otherwise the provider resolves it: annotations it returns (the static drift hash) are written, NodeClaims
//    of the class with another hash version get the new hash, the status goes through the status
//    subresource with the object's resourceVersion (a conflict re-reads the object and retries), every
//    condition that is False is reported as a Warning event, and the class is looked at again when the
//    provider says (5 min when Ready, sooner while not or after a failed cloud call).
// 4. A deleted class keeps its finalizer while any NodeClaim uses it (WaitingOnNodeClaimTermination event;
//    NodeClaim deletions and a 10 s requeue bring it back), then the provider cleans up (launch templates,
//    the instance profile) and the finalizer is removed.
// Node-class readiness reaches NodePools through nodepool.readiness, which mirrors Ready.
import type { EC2NodeClass } from '../../../../engine/index.ts';
import type { NodeClassProvider, NodeClassStatusResult } from '../../../cloudprovider/types.ts';
import { conditionsOf, sameConditions, withCondition, type KubeCondition } from '../../../operator/conditions.ts';
import { targetOf } from '../../../operator/events.ts';
import { canonicalJson } from '../../../operator/hash.ts';
import { ignoreNotFound, isConflict, type KubeObject } from '../../../operator/kube.ts';
import { done, requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import { errText } from '../../../operator/runtime.ts';
import type { NodeClaimEntry } from '../../../state/statenode.ts';
import type { ControllerContext } from '../../context.ts';

/** Karpenter's EC2NodeClass finalizer (karpenter.k8s.aws/v1 TerminationFinalizer). */
const NODECLASS_FINALIZER = 'karpenter.k8s.aws/termination';
const WAIT_FOR_NODECLAIMS_MS = 10_000;
const STATUS_WRITE_ATTEMPTS = 3;

const usesClass = (c: NodeClaimEntry, name: string): boolean => {
  const ref = c.info.nodeClassRef;
  return ref.name === name && ref.kind === 'EC2NodeClass' && (ref.group === '' || ref.group === 'karpenter.k8s.aws');
};

/**
 * Whether merge-patching `next` over `old` would change nothing (conditions compared as a set). As in a
 * merge patch, a null in `next` removes the field.
 */
function sameStatus(old: Record<string, unknown>, next: Readonly<Record<string, unknown>>): boolean {
  const { conditions: oc, ...oldRest } = old;
  const { conditions: nc, ...newRest } = next;
  const merged: Record<string, unknown> = { ...oldRest };
  for (const [k, v] of Object.entries(newRest)) {
    if (v === null) delete merged[k];
    else merged[k] = v;
  }
  return (
    canonicalJson(oldRest) === canonicalJson(merged) &&
    sameConditions((oc ?? []) as KubeCondition[], (nc ?? []) as KubeCondition[])
  );
}

/**
 * A new class, a spec change, a deletion, or a lost finalizer; not our own status and annotation writes
 * (each would cost another round of cloud calls). The periodic requeue catches changes in the cloud.
 */
function needsLook(obj: KubeObject, old: KubeObject | undefined): boolean {
  if (!old) return true;
  const m = obj.metadata;
  return (
    m.generation !== old.metadata.generation ||
    Boolean(m.deletionTimestamp) !== Boolean(old.metadata.deletionTimestamp) ||
    !(m.finalizers ?? []).includes(NODECLASS_FINALIZER)
  );
}

export function newNodeClassStatus(ctx: ControllerContext, provider: NodeClassProvider): Controller {
  return {
    name: 'nodeclass.status',
    reads: ['EC2NodeClass', 'NodeClaim'],
    reconcile: (name) => reconcile(ctx, provider, name),
    register(enqueue) {
      for (const c of ctx.cluster.nodeClasses()) enqueue(c.obj.metadata.name!);
      return ctx.cluster.subscribe((c) => {
        if (c.kind === 'EC2NodeClass' && c.type === 'upsert' && needsLook(c.obj, c.old)) enqueue(c.name);
        if (c.kind === 'NodeClaim' && c.type === 'delete') {
          const ref = (c.obj.spec?.['nodeClassRef'] as { name?: string } | undefined)?.name;
          if (ref && ctx.cluster.nodeClass(ref)?.obj.metadata.deletionTimestamp) enqueue(ref);
        }
      });
    },
  };
}

async function reconcile(ctx: ControllerContext, provider: NodeClassProvider, name: string): Promise<ReconcileResult> {
  const entry = ctx.cluster.nodeClass(name);
  if (!entry) return done;
  let obj = entry.obj;
  if (obj.metadata.deletionTimestamp) return terminate(ctx, provider, obj, entry.nodeClass);
  if (!(obj.metadata.finalizers ?? []).includes(NODECLASS_FINALIZER)) obj = await addFinalizer(ctx, obj);
  if (!entry.nodeClass) return invalid(ctx, obj, entry.errors);
  const r = await provider.resolve(entry.nodeClass);
  for (const e of r.errors)
    ctx.log.warn(
      { ec2nodeclass: name, err: errText(e) },
      'resolving the node class: a cloud call failed; its status fields were kept',
    );
  obj = await writeAnnotations(ctx, obj, r.annotations);
  await rewriteClaimHashes(ctx, name, r);
  reportFalse(ctx, await writeStatus(ctx, obj, r.status));
  return requeueAfter(r.requeueAfterMs);
}

async function addFinalizer(ctx: ControllerContext, obj: KubeObject): Promise<KubeObject> {
  const m = obj.metadata;
  const latest = await ctx.kube.patch('EC2NodeClass', m.name!, {
    metadata: { resourceVersion: m.resourceVersion, finalizers: [...(m.finalizers ?? []), NODECLASS_FINALIZER] },
  });
  ctx.cluster.applyNodeClass(latest);
  return latest;
}

/** The status write, retried with a fresh resourceVersion when another writer moved the object on. */
async function writeStatus(
  ctx: ControllerContext,
  obj: KubeObject,
  next: Readonly<Record<string, unknown>>,
): Promise<KubeObject> {
  let cur = obj;
  for (let attempt = 1; ; attempt++) {
    if (sameStatus(cur.status ?? {}, next)) return cur;
    try {
      const latest = await ctx.kube.patchStatus(
        'EC2NodeClass',
        cur.metadata.name!,
        { ...next },
        { ...(cur.metadata.resourceVersion ? { resourceVersion: cur.metadata.resourceVersion } : {}) },
      );
      ctx.cluster.applyNodeClass(latest);
      return latest;
    } catch (e) {
      if (!isConflict(e) || attempt >= STATUS_WRITE_ATTEMPTS) throw e;
      cur = await ctx.kube.get('EC2NodeClass', cur.metadata.name!);
      ctx.cluster.applyNodeClass(cur);
    }
  }
}

async function writeAnnotations(
  ctx: ControllerContext,
  obj: KubeObject,
  annotations: Readonly<Record<string, string>>,
): Promise<KubeObject> {
  const have = obj.metadata.annotations ?? {};
  if (Object.entries(annotations).every(([k, v]) => have[k] === v)) return obj;
  const latest = await ctx.kube.patch('EC2NodeClass', obj.metadata.name!, { metadata: { annotations } });
  ctx.cluster.applyNodeClass(latest);
  return latest;
}

/** NodeClaims launched under another hash version take the current hash rather than drifting. */
async function rewriteClaimHashes(ctx: ControllerContext, name: string, r: NodeClassStatusResult): Promise<void> {
  const want = r.nodeClaimAnnotations;
  if (!want) return;
  const version = want.values[want.key];
  for (const c of ctx.cluster.nodeClaims()) {
    const have = c.info.annotations[want.key];
    if (!usesClass(c, name) || have === undefined || have === version || c.info.deletionTimestamp !== undefined)
      continue;
    ctx.log.info(
      { nodeclaim: c.info.name, from: have, to: version },
      'rewriting the node-class hash of a nodeclaim launched under another hash version',
    );
    await ctx.kube.patch('NodeClaim', c.info.name, { metadata: { annotations: want.values } }).catch(ignoreNotFound);
  }
}

function reportFalse(ctx: ControllerContext, obj: KubeObject): void {
  for (const c of conditionsOf(obj)) {
    if (c.type === 'Ready' || c.status !== 'False') continue;
    ctx.events.publish({
      involved: targetOf(obj, 'EC2NodeClass'),
      type: 'Warning',
      reason: c.reason || `${c.type}False`,
      message: c.message || `${c.type} is False`,
    });
  }
}

async function invalid(ctx: ControllerContext, obj: KubeObject, errors: readonly string[]): Promise<ReconcileResult> {
  const now = ctx.clock.now();
  const gen = obj.metadata.generation;
  const g = gen !== undefined ? { generation: gen } : {};
  let conds = withCondition(conditionsOf(obj), 'ValidationSucceeded', 'False', now, {
    reason: 'ValidationFailed',
    message: errors.join('; '),
    ...g,
  });
  conds = withCondition(conds, 'Ready', 'False', now, {
    reason: 'UnhealthyDependents',
    message: 'ValidationSucceeded is False',
    ...g,
  });
  reportFalse(ctx, await writeStatus(ctx, obj, { ...(obj.status ?? {}), conditions: conds }));
  return done;
}

async function terminate(
  ctx: ControllerContext,
  provider: NodeClassProvider,
  obj: KubeObject,
  nc: EC2NodeClass | undefined,
): Promise<ReconcileResult> {
  const m = obj.metadata;
  if (!(m.finalizers ?? []).includes(NODECLASS_FINALIZER)) return done;
  const users = ctx.cluster
    .nodeClaims()
    .filter((c) => usesClass(c, m.name!))
    .map((c) => c.info.name)
    .sort();
  if (users.length) {
    const shown = users.slice(0, 5).join(', ') + (users.length > 5 ? ` and ${users.length - 5} other(s)` : '');
    ctx.events.publish({
      involved: targetOf(obj, 'EC2NodeClass'),
      type: 'Normal',
      reason: 'WaitingOnNodeClaimTermination',
      message: `Waiting on NodeClaim termination for ${shown}`,
    });
    return requeueAfter(WAIT_FOR_NODECLAIMS_MS);
  }
  if (nc) await provider.finalize(nc);
  await ctx.kube
    .patch('EC2NodeClass', m.name!, {
      metadata: {
        resourceVersion: m.resourceVersion,
        finalizers: (m.finalizers ?? []).filter((f) => f !== NODECLASS_FINALIZER),
      },
    })
    .catch(ignoreNotFound);
  ctx.log.info({ ec2nodeclass: m.name }, 'released the node class');
  return done;
}
