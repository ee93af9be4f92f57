// Server-side apply as a verb (PATCH with application/apply-patch+yaml): create the object when it does
// not exist, otherwise merge the applied configuration over it and prune what the same field manager
// applied before and has now left out (the merge itself is in strategic.ts).
import { errors } from './errors.ts';
import type { ResourceInfo } from './resources.ts';
import type { Store } from './store.ts';
import { serverSideApply } from './strategic.ts';
import { isObject, type JsonObject, type KObject, type WriteOptions } from './types.ts';

/** The last configuration each field manager applied, per object uid (and subresource). */
export class AppliedConfigs {
  private readonly byUid = new Map<string, Map<string, JsonObject>>();

  get(uid: string, key: string): JsonObject | undefined {
    return this.byUid.get(uid)?.get(key);
  }

  set(uid: string, key: string, applied: JsonObject): void {
    let byManager = this.byUid.get(uid);
    if (!byManager) this.byUid.set(uid, (byManager = new Map()));
    byManager.set(key, applied);
  }

  forget(uid: string): void {
    this.byUid.delete(uid);
  }
}

/** What apply needs of the registry: its store, the applied configurations, and its write steps. */
interface ApplyRegistry {
  readonly store: Pick<Store, 'get' | 'getByUid'>;
  readonly applied: AppliedConfigs;
  create(r: ResourceInfo, ns: string, body: unknown, opts: WriteOptions): KObject;
  incoming(r: ResourceInfo, ns: string, body: unknown): KObject;
  prepareUpdate(r: ResourceInfo, old: KObject, incoming: KObject, sub: 'status' | undefined): KObject;
  commit(r: ResourceInfo, old: KObject, next: KObject, opts: WriteOptions): KObject;
}

export function serverSideApplyTo(
  reg: ApplyRegistry,
  r: ResourceInfo,
  ns: string,
  name: string,
  body: unknown,
  opts: WriteOptions,
): KObject {
  const manager = opts.fieldManager;
  if (!manager)
    throw errors.badRequest('PATCH with application/apply-patch+yaml requires the fieldManager query parameter');
  if (!isObject(body)) throw errors.badRequest('apply: the body must be an object');
  const applied = structuredClone(body);
  const meta = isObject(applied.metadata) ? applied.metadata : (applied.metadata = {});
  delete meta.managedFields;
  if (meta.name !== undefined && meta.name !== name)
    throw errors.badRequest(
      `the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`,
    );
  const key = `${manager}|${opts.subresource ?? ''}`;
  const remember = (obj: KObject): KObject => {
    if (!opts.dryRun && reg.store.getByUid(obj.metadata.uid!)) reg.applied.set(obj.metadata.uid!, key, applied);
    return obj;
  };
  const old = reg.store.get(r.key, ns, name);
  if (!old) {
    if (opts.subresource) throw errors.notFound(r, name);
    return remember(reg.create(r, ns, { ...applied, metadata: { ...meta, name } }, opts));
  }
  const merged = serverSideApply(old, applied, reg.applied.get(old.metadata.uid!, key), !r.crd);
  return remember(reg.commit(r, old, reg.prepareUpdate(r, old, reg.incoming(r, ns, merged), opts.subresource), opts));
}
