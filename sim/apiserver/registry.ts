// API semantics over the store: what create, update, patch and their status-subresource forms mean.
// Both the HTTP server and the in-process simulation (kubelet, scheduler, controllers) write through
// here, so a write from either side behaves the same: names are generated, uids and timestamps set,
// resourceVersions checked (409 on a stale one), status isolated behind its subresource, generation
// bumped on spec changes, defaults and validation hooks applied (422), finalizers honoured.
// Deletion lives in deletion.ts, eviction in eviction.ts, binding and scale in subresources.ts.
import { toKubeTime, type Clock } from '../../controller/operator/clock.ts';
import { STATUS_ON_CREATE } from './defaults.ts';
import { errors } from './errors.ts';
import { Ids } from './ids.ts';
import { jsonPatch, mergePatch } from './patch.ts';
import type { ResourceInfo, ResourceTable } from './resources.ts';
import { parseFieldSelector, parseLabelSelector } from './selectors.ts';
import type { Store } from './store.ts';
import { AppliedConfigs, serverSideApplyTo } from './apply.ts';
import { strategicMerge } from './strategic.ts';
import {
  draft,
  isObject,
  jsonEqual,
  type FieldError,
  type FieldValidation,
  type JsonObject,
  type KObject,
  type WriteOptions,
} from './types.ts';

export type { FieldValidation, WriteOptions };

export type PatchType = 'merge' | 'strategic' | 'json' | 'apply';

export interface AdmissionRequest {
  readonly operation: 'CREATE' | 'UPDATE';
  readonly resource: ResourceInfo;
  readonly subresource?: 'status' | undefined;
  /** The object about to be stored. A validator may default fields by changing it in place. */
  readonly object: KObject;
  readonly oldObject?: KObject | undefined;
  /** What the client asked for (?fieldValidation=); Strict by default. */
  readonly fieldValidation: FieldValidation;
}

/** A validation hook for one resource: returns the field errors (none = accepted). */
export type Validator = (req: AdmissionRequest) => readonly FieldError[] | undefined | void;

export interface ListOptions {
  readonly labelSelector?: string | undefined;
  readonly fieldSelector?: string | undefined;
}

export interface RegistryOptions {
  readonly clock: Clock;
  readonly resources: ResourceTable;
  readonly store: Store;
  readonly random: () => number;
}

const NAME_RE = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export class Registry {
  readonly clock: Clock;
  readonly resources: ResourceTable;
  readonly store: Store;
  readonly ids: Ids;
  private readonly validators = new Map<string, Validator[]>();
  /** Last applied configuration per object and field manager, for server-side apply. */
  readonly applied = new AppliedConfigs();
  /** Run after an object leaves the store (garbage collection, namespace cleanup); set by deletion.ts. */
  afterRemoval: (r: ResourceInfo, removed: KObject) => void = () => {};

  constructor(opts: RegistryOptions) {
    this.clock = opts.clock;
    this.resources = opts.resources;
    this.store = opts.store;
    this.ids = new Ids(opts.random);
  }

  /** Adds a validation hook for a resource; returns a function that removes it. */
  addValidator(resource: string | ResourceInfo, fn: Validator): () => void {
    const r = this.resources.resolve(resource);
    const list = this.validators.get(r.key) ?? [];
    list.push(fn);
    this.validators.set(r.key, list);
    return () => {
      const i = list.indexOf(fn);
      if (i >= 0) list.splice(i, 1);
    };
  }

  /** The namespace a request addresses: required for namespaced kinds, '' for cluster-scoped ones. */
  namespaceOf(r: ResourceInfo, namespace: string | undefined): string {
    if (!r.namespaced) return '';
    if (!namespace) throw errors.badRequest(`${r.key} is namespaced: a namespace is required`);
    return namespace;
  }

  get(resource: string | ResourceInfo, namespace: string | undefined, name: string): KObject {
    const r = this.resources.resolve(resource);
    const obj = this.store.get(r.key, this.namespaceOf(r, namespace), name);
    if (!obj) throw errors.notFound(r, name);
    return obj;
  }

  list(
    resource: string | ResourceInfo,
    namespace: string | undefined,
    opts: ListOptions = {},
  ): { items: KObject[]; resourceVersion: string } {
    const r = this.resources.resolve(resource);
    const items = this.store.list(r.key, {
      namespace: r.namespaced ? namespace : undefined,
      labels: parseLabelSelector(opts.labelSelector),
      fields: parseFieldSelector(opts.fieldSelector),
    });
    return { items, resourceVersion: String(this.store.resourceVersion()) };
  }

  create(
    resource: string | ResourceInfo,
    namespace: string | undefined,
    body: unknown,
    opts: WriteOptions = {},
  ): KObject {
    const r = this.resources.resolve(resource);
    if (opts.subresource) throw errors.methodNotAllowed('POST', `${r.key}/${opts.subresource}`);
    const ns = this.namespaceOf(r, namespace);
    const obj = this.incoming(r, ns, body);
    const m = obj.metadata;
    if (!m.name) {
      if (!m.generateName)
        throw errors.invalid(r, '', [
          {
            field: 'metadata.name',
            type: 'FieldValueRequired',
            message: 'Required value: name or generateName is required',
          },
        ]);
      do m.name = `${m.generateName}${this.ids.suffix()}`;
      while (this.store.get(r.key, ns, m.name));
    }
    this.checkName(r, m.name);
    if (r.namespaced) this.checkNamespace(r, ns, m.name);
    for (const k of ['deletionTimestamp', 'deletionGracePeriodSeconds', 'resourceVersion', 'managedFields'] as const)
      delete m[k];
    m.uid = this.ids.uid();
    m.creationTimestamp = toKubeTime(this.clock.now());
    m.generation = 1;
    if (r.crd && r.subresources.includes('status')) delete obj.status;
    const initial = STATUS_ON_CREATE[r.key];
    r.defaults?.(obj);
    if (initial) obj.status = initial(obj);
    this.admit(r, 'CREATE', obj, undefined, opts);
    if (this.store.get(r.key, ns, m.name)) throw errors.alreadyExists(r, m.name);
    if (opts.dryRun) return obj;
    this.store.put(r.key, obj);
    return obj;
  }

  update(
    resource: string | ResourceInfo,
    namespace: string | undefined,
    name: string,
    body: unknown,
    opts: WriteOptions = {},
  ): KObject {
    const r = this.resources.resolve(resource);
    const ns = this.namespaceOf(r, namespace);
    const old = this.get(r, ns, name);
    const incoming = this.incoming(r, ns, body);
    if (incoming.metadata.name && incoming.metadata.name !== name) {
      throw errors.badRequest(
        `the name of the object (${incoming.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    return this.commit(r, old, this.prepareUpdate(r, old, incoming, opts.subresource), opts);
  }

  patch(
    resource: string | ResourceInfo,
    namespace: string | undefined,
    name: string,
    type: PatchType,
    body: unknown,
    opts: WriteOptions = {},
  ): KObject {
    const r = this.resources.resolve(resource);
    const ns = this.namespaceOf(r, namespace);
    if (type === 'apply') return serverSideApplyTo(this, r, ns, name, body, opts);
    const old = this.get(r, ns, name);
    let patched: unknown;
    if (type === 'json') patched = jsonPatch(old, body);
    else {
      if (!isObject(body)) throw errors.badRequest(`${type} patch: the body must be a JSON object`);
      if (type === 'strategic' && r.crd) throw errors.unsupportedMediaType('application/strategic-merge-patch+json');
      patched = type === 'merge' ? mergePatch(old, body) : strategicMerge(old, body);
    }
    const incoming = this.incoming(r, ns, patched);
    if (incoming.metadata.name !== name) throw errors.badRequest(`a patch cannot change metadata.name (${name})`);
    return this.commit(r, old, this.prepareUpdate(r, old, incoming, opts.subresource), opts);
  }

  /** Shorthand for the status subresource. */
  updateStatus(
    resource: string | ResourceInfo,
    namespace: string | undefined,
    name: string,
    body: unknown,
    opts: WriteOptions = {},
  ): KObject {
    return this.update(resource, namespace, name, body, { ...opts, subresource: 'status' });
  }

  /** A fresh, checked copy of a request body, with apiVersion, kind and namespace filled in. */
  incoming(r: ResourceInfo, ns: string, body: unknown): KObject {
    if (!isObject(body)) throw errors.badRequest(`the body of a ${r.kind} request must be a JSON object`);
    const obj = structuredClone(body) as KObject;
    if (obj.kind !== undefined && obj.kind !== r.kind)
      throw errors.badRequest(
        `the kind of the object (${String(obj.kind)}) does not match the resource ${r.key} (${r.kind})`,
      );
    if (obj.apiVersion !== undefined && obj.apiVersion !== r.apiVersion) {
      throw errors.badRequest(
        `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${r.apiVersion})`,
      );
    }
    obj.apiVersion = r.apiVersion;
    obj.kind = r.kind;
    if (!isObject(obj.metadata)) obj.metadata = {};
    const m = obj.metadata;
    if (r.namespaced) {
      if (m.namespace && m.namespace !== ns)
        throw errors.badRequest(
          `the namespace of the provided object (${m.namespace}) does not match the namespace sent on the request (${ns})`,
        );
      m.namespace = ns;
    } else delete m.namespace;
    return obj;
  }

  /** The object an update would store: immutable metadata kept, status isolated, generation bumped. */
  prepareUpdate(r: ResourceInfo, old: KObject, incoming: KObject, sub: 'status' | undefined): KObject {
    const om = old.metadata;
    const rv = incoming.metadata.resourceVersion;
    if (rv && rv !== om.resourceVersion) throw errors.conflict(r, om.name!);
    if (sub === 'status') {
      if (!r.subresources.includes('status')) throw errors.pathNotFound(`${r.key}/status`);
      const next = draft(old);
      if (incoming.status === undefined) delete next.status;
      else next.status = incoming.status;
      return next;
    }
    const next = incoming;
    const m = next.metadata;
    for (const k of [
      'name',
      'namespace',
      'uid',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'generateName',
      'generation',
    ] as const) {
      if (om[k] === undefined) delete m[k];
      else (m as Record<string, unknown>)[k] = om[k];
    }
    delete m.managedFields;
    m.resourceVersion = om.resourceVersion;
    if (r.subresources.includes('status')) {
      if (old.status === undefined) delete next.status;
      else next.status = structuredClone(old.status);
    }
    r.defaults?.(next);
    if (om.deletionTimestamp) {
      const added = (m.finalizers ?? []).filter((f) => !(om.finalizers ?? []).includes(f));
      if (added.length)
        throw errors.invalid(r, om.name!, [
          {
            field: 'metadata.finalizers',
            type: 'FieldValueForbidden',
            message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
          },
        ]);
    }
    if (!jsonEqual(withoutMetaAndStatus(old), withoutMetaAndStatus(next))) m.generation = (om.generation ?? 1) + 1;
    return next;
  }

  /** Admits and stores an update; a no-op update keeps the old object and resourceVersion. */
  commit(r: ResourceInfo, old: KObject, next: KObject, opts: WriteOptions = {}): KObject {
    this.admit(r, 'UPDATE', next, old, opts);
    if (jsonEqual(next, old)) return old;
    if (opts.dryRun) return next;
    if (this.finished(r, next)) return this.removeNow(r, next);
    this.store.put(r.key, next);
    return next;
  }

  /** Being deleted, no finalizers left and (pods) the kubelet has confirmed with grace period 0. */
  finished(r: ResourceInfo, obj: KObject): boolean {
    const m = obj.metadata;
    if (!m.deletionTimestamp || (m.finalizers?.length ?? 0) > 0) return false;
    return r.key !== 'pods' || (m.deletionGracePeriodSeconds ?? 0) === 0;
  }

  /** Takes an object out of the store and runs what follows a removal (garbage collection). */
  removeNow(r: ResourceInfo, obj: KObject): KObject {
    const e = this.store.remove(r.key, obj.metadata.namespace ?? '', obj.metadata.name!);
    if (!e) return obj;
    this.applied.forget(obj.metadata.uid ?? '');
    this.afterRemoval(r, e.object);
    return e.object;
  }

  private admit(
    r: ResourceInfo,
    operation: 'CREATE' | 'UPDATE',
    object: KObject,
    oldObject: KObject | undefined,
    opts: WriteOptions,
  ): void {
    const hooks = this.validators.get(r.key);
    if (!hooks?.length) return;
    const found: FieldError[] = [];
    for (const hook of hooks) {
      const errs = hook({
        operation,
        resource: r,
        subresource: opts.subresource,
        object,
        oldObject,
        fieldValidation: opts.fieldValidation ?? 'Strict',
      });
      if (errs) found.push(...errs);
    }
    if (found.length) throw errors.invalid(r, object.metadata.name ?? '', found);
  }

  private checkName(r: ResourceInfo, name: string): void {
    if (name.length > 253 || !NAME_RE.test(name)) {
      throw errors.invalid(r, name, [
        {
          field: 'metadata.name',
          message: `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
        },
      ]);
    }
  }

  private checkNamespace(r: ResourceInfo, ns: string, name: string): void {
    const nsObj = this.store.get('namespaces', '', ns);
    if (!nsObj) throw errors.notFound(this.resources.resolve('namespaces'), ns);
    if (nsObj.metadata.deletionTimestamp)
      throw errors.forbidden(r, name, `unable to create new content in namespace ${ns} because it is being terminated`);
  }
}

function withoutMetaAndStatus(o: KObject): JsonObject {
  const { metadata: _m, status: _s, ...rest } = o;
  return rest;
}
