// The in-process API: every verb the HTTP server offers, as methods. The simulated kubelet, scheduler
// and controllers write through this; tests may too. Requests through here are never subject to fault
// injection (that is for the controller's HTTP traffic).
import { deleteCollection, deleteObject, installGarbageCollector, type DeleteOptions } from './deletion.ts';
import type { Status } from './errors.ts';
import { evict } from './eviction.ts';
import { Registry, type ListOptions, type PatchType, type RegistryOptions } from './registry.ts';
import type { ResourceInfo } from './resources.ts';
import { bind, getScale, writeScale } from './subresources.ts';
import type { JsonObject, KObject } from './types.ts';

export class Api extends Registry {
  constructor(opts: RegistryOptions) {
    super(opts);
    installGarbageCollector(this);
  }

  delete(
    resource: string | ResourceInfo,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions = {},
  ): KObject {
    return deleteObject(this, resource, namespace, name, opts);
  }

  deleteCollection(
    resource: string | ResourceInfo,
    namespace: string | undefined,
    list: ListOptions = {},
    opts: DeleteOptions = {},
  ): KObject[] {
    const r = this.resources.resolve(resource);
    return deleteCollection(this, r, namespace, this.list(r, namespace, list).items, opts);
  }

  /** POST pods/NAME/eviction with a policy/v1 Eviction body (default: an empty one). */
  evict(
    namespace: string,
    name: string,
    body: unknown = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } },
  ): Status {
    return evict(this, namespace, name, body);
  }

  /** Binds a pod to a node (what kube-scheduler's POST pods/NAME/binding does). */
  bind(namespace: string, name: string, nodeName: string): KObject {
    return bind(this, namespace, name, {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name, namespace },
      target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
    });
  }

  getScale(resource: string | ResourceInfo, namespace: string, name: string): JsonObject {
    return getScale(this, this.resources.resolve(resource), namespace, name);
  }

  /** Sets spec.replicas through the scale subresource. */
  scale(resource: string | ResourceInfo, namespace: string, name: string, replicas: number): JsonObject {
    return writeScale(this, this.resources.resolve(resource), namespace, name, { spec: { replicas } }, 'merge');
  }

  /** Shorthand for a merge patch of the status subresource. */
  patchStatus(resource: string | ResourceInfo, namespace: string | undefined, name: string, status: unknown): KObject {
    return this.patch(resource, namespace, name, 'merge', { status }, { subresource: 'status' });
  }

  /** The object if it exists, else undefined (no 404). */
  find(resource: string | ResourceInfo, namespace: string | undefined, name: string): KObject | undefined {
    const r = this.resources.resolve(resource);
    return this.store.get(r.key, r.namespaced ? (namespace ?? '') : '', name);
  }
}

export type { DeleteOptions, PatchType };
