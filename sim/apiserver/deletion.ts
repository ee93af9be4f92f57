// Deletion as the real API server and its garbage collector do it:
//
// 1. Preconditions (uid, resourceVersion) must hold, or 409.
// 2. Pods bound to a node are deleted gracefully: deletionTimestamp = now + grace period, and the object
//    stays until the kubelet confirms with grace period 0. Unbound or finished pods go at once.
// 3. Anything with finalizers gets a deletionTimestamp and stays until an update removes the last one.
// 4. Once an object leaves the store, dependents whose owners are all gone are deleted (Background), a
//    Foreground owner waits (finalizer foregroundDeletion) until its dependents are gone, and Orphan
//    strips the owner reference from dependents first.
// 5. A namespace deletes its contents and disappears once it is empty.
import { toKubeTime } from '../../controller/operator/clock.ts';
import { errors } from './errors.ts';
import type { Registry } from './registry.ts';
import type { ResourceInfo } from './resources.ts';
import type { ObjectRef } from './store.ts';
import { draft, type KObject } from './types.ts';

export type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';

export interface DeleteOptions {
  readonly gracePeriodSeconds?: number | undefined;
  readonly propagationPolicy?: PropagationPolicy | undefined;
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string } | undefined;
  readonly dryRun?: boolean | undefined;
}

const FOREGROUND = 'foregroundDeletion';

function podGrace(pod: KObject, requested: number | undefined): number {
  const spec = (pod.spec ?? {}) as { nodeName?: string; terminationGracePeriodSeconds?: number };
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  if (!spec.nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
  return Math.max(0, requested ?? spec.terminationGracePeriodSeconds ?? 30);
}

export function deleteObject(
  reg: Registry,
  resource: string | ResourceInfo,
  namespace: string | undefined,
  name: string,
  opts: DeleteOptions = {},
): KObject {
  const r = reg.resources.resolve(resource);
  const old = reg.get(r, namespace, name);
  const pre = opts.preconditions;
  if (pre?.uid && pre.uid !== old.metadata.uid)
    throw errors.conflict(
      r,
      name,
      `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid}`,
    );
  if (pre?.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion) {
    throw errors.conflict(
      r,
      name,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion}`,
    );
  }
  if (r.key === 'namespaces') return deleteNamespace(reg, r, old, opts);
  const policy = opts.propagationPolicy ?? 'Background';
  if (policy === 'Orphan' && !opts.dryRun) orphanDependents(reg, old);
  const next = draft(old);
  const m = next.metadata;
  const now = reg.clock.now();
  if (r.key === 'pods') {
    const grace = podGrace(old, opts.gracePeriodSeconds);
    // A pod already terminating only changes when the new grace period is shorter.
    if (m.deletionTimestamp && grace >= (m.deletionGracePeriodSeconds ?? 0)) return old;
    m.deletionTimestamp = toKubeTime(now + grace * 1000);
    m.deletionGracePeriodSeconds = grace;
  } else {
    if (m.deletionTimestamp) return old;
    m.deletionTimestamp = toKubeTime(now);
    m.deletionGracePeriodSeconds = 0;
    if (policy === 'Foreground' && reg.store.dependents(m.uid!).length > 0)
      m.finalizers = [...(m.finalizers ?? []), FOREGROUND];
  }
  if (opts.dryRun) return next;
  if (reg.finished(r, next)) return reg.removeNow(r, old);
  if (m.generation !== undefined && !old.metadata.deletionTimestamp) m.generation += 1;
  reg.store.put(r.key, next);
  if (policy === 'Foreground') for (const d of reg.store.dependents(m.uid!)) deleteQuietly(reg, d, 'Background');
  return next;
}

/** Deletes every object of a collection that matches the list options. */
export function deleteCollection(
  reg: Registry,
  r: ResourceInfo,
  namespace: string | undefined,
  items: readonly KObject[],
  opts: DeleteOptions = {},
): KObject[] {
  return items.map((o) => deleteObject(reg, r, namespace, o.metadata.name!, opts));
}

function deleteQuietly(reg: Registry, ref: ObjectRef, policy: PropagationPolicy): void {
  try {
    deleteObject(reg, ref.resource, ref.namespace, ref.name, { propagationPolicy: policy });
  } catch (e) {
    if ((e as { code?: number }).code !== 404) throw e;
  }
}

function orphanDependents(reg: Registry, owner: KObject): void {
  for (const d of reg.store.dependents(owner.metadata.uid!)) dropOwnerRef(reg, d, owner.metadata.uid!);
}

function dropOwnerRef(reg: Registry, ref: ObjectRef, ownerUid: string): void {
  const r = reg.resources.resolve(ref.resource);
  const cur = reg.store.get(r.key, ref.namespace, ref.name);
  if (!cur) return;
  const next = draft(cur);
  next.metadata.ownerReferences = (next.metadata.ownerReferences ?? []).filter((o) => o.uid !== ownerUid);
  if (next.metadata.ownerReferences.length === 0) delete next.metadata.ownerReferences;
  reg.commit(r, cur, next);
}

function deleteNamespace(reg: Registry, r: ResourceInfo, old: KObject, opts: DeleteOptions): KObject {
  if (old.metadata.deletionTimestamp) return old;
  const next = draft(old);
  next.metadata.deletionTimestamp = toKubeTime(reg.clock.now());
  next.metadata.deletionGracePeriodSeconds = 0;
  next.status = { ...((next.status as object) ?? {}), phase: 'Terminating' };
  if (opts.dryRun) return next;
  reg.store.put(r.key, next);
  const ns = old.metadata.name!;
  for (const res of reg.resources.all) {
    if (!res.namespaced) continue;
    for (const o of reg.store.list(res.key, { namespace: ns }))
      deleteQuietly(reg, { resource: res.key, namespace: ns, name: o.metadata.name! }, 'Background');
  }
  return finishNamespace(reg, ns) ?? next;
}

function namespaceEmpty(reg: Registry, ns: string): boolean {
  return reg.resources.all.every((res) => !res.namespaced || reg.store.list(res.key, { namespace: ns }).length === 0);
}

function finishNamespace(reg: Registry, ns: string): KObject | undefined {
  const nsObj = reg.store.get('namespaces', '', ns);
  if (!nsObj?.metadata.deletionTimestamp || !namespaceEmpty(reg, ns)) return undefined;
  return reg.removeNow(reg.resources.resolve('namespaces'), nsObj);
}

/** What follows a removal: the garbage collector's cascade and namespace cleanup. */
export function installGarbageCollector(reg: Registry): void {
  reg.afterRemoval = (r, removed) => {
    const uid = removed.metadata.uid!;
    for (const d of reg.store.dependents(uid)) {
      const dep = reg.store.get(d.resource, d.namespace, d.name);
      if (!dep) continue;
      const others = (dep.metadata.ownerReferences ?? []).filter((o) => o.uid !== uid && reg.store.getByUid(o.uid));
      if (others.length > 0) dropOwnerRef(reg, d, uid);
      else if (!dep.metadata.deletionTimestamp) deleteQuietly(reg, d, 'Background');
    }
    for (const o of removed.metadata.ownerReferences ?? []) releaseForegroundOwner(reg, o.uid);
    if (r.namespaced) finishNamespace(reg, removed.metadata.namespace ?? '');
  };
}

function releaseForegroundOwner(reg: Registry, ownerUid: string): void {
  const owner = reg.store.getByUid(ownerUid);
  if (!owner?.object.metadata.finalizers?.includes(FOREGROUND)) return;
  if (reg.store.dependents(ownerUid).length > 0) return;
  const r = reg.resources.resolve(owner.resource);
  const next = draft(owner.object);
  next.metadata.finalizers = next.metadata.finalizers!.filter((f) => f !== FOREGROUND);
  reg.commit(r, owner.object, next);
}
