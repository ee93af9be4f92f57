// The in-memory object store: the simulated etcd. It owns the global resourceVersion (one counter for all
// kinds, like etcd's revision), keeps every object deep-frozen (readers share them, writers copy), keeps
// a window of recent changes so watches can resume from a resourceVersion (older ones get 410 Gone), and
// indexes owners so garbage collection finds dependents without scanning, and pods by spec.nodeName (as
// kube-apiserver's watch cache does), so that listing one node's pods does not read every pod.
//
// The store knows nothing of API semantics (finalizers, status, validation): registry.ts does.
import { matches, labelsOf, fieldsOf, type Selector } from './selectors.ts';
import { deepFreeze, type EventType, type KObject, type StoreEvent } from './types.ts';

export interface ObjectRef {
  readonly resource: string;
  readonly namespace: string;
  readonly name: string;
}

export interface ListFilter {
  readonly namespace?: string | undefined;
  readonly labels?: Selector | undefined;
  readonly fields?: Selector | undefined;
}

interface StoreOptions {
  /** How many changes to keep for resuming watches (default 10,000). */
  readonly eventWindow?: number;
  /** Where a failing subscriber's error goes (the write itself still succeeds). */
  readonly onListenerError?: (err: unknown) => void;
}

const nsKey = (namespace: string, name: string): string => `${namespace}/${name}`;

const nodeNameOf = (pod: KObject): string | undefined => {
  const n = (pod.spec as { nodeName?: unknown } | undefined)?.nodeName;
  return typeof n === 'string' && n !== '' ? n : undefined;
};

export class Store {
  private rv = 0;
  private readonly objects = new Map<string, Map<string, KObject>>();
  private readonly byUid = new Map<string, ObjectRef>();
  private readonly dependentsOf = new Map<string, Set<string>>(); // owner uid -> dependent uids
  /** Pods by spec.nodeName (bound pods only), each node's in the order they were bound. */
  private readonly podsByNode = new Map<string, Map<string, KObject>>();
  private history: StoreEvent[] = [];
  /** resourceVersions at or below this are no longer in the history. */
  private floor = 0;
  private readonly listeners = new Set<(e: StoreEvent) => void>();
  private readonly window: number;
  private readonly onListenerError: (err: unknown) => void;

  constructor(opts: StoreOptions = {}) {
    this.window = Math.max(1, opts.eventWindow ?? 10_000);
    this.onListenerError = opts.onListenerError ?? ((err) => console.error('sim store: subscriber failed', err));
  }

  /** The resourceVersion of the latest change (what a list returns). */
  resourceVersion(): number {
    return this.rv;
  }

  get(resource: string, namespace: string, name: string): KObject | undefined {
    return this.objects.get(resource)?.get(nsKey(namespace, name));
  }

  getByUid(uid: string): (ObjectRef & { object: KObject }) | undefined {
    const ref = this.byUid.get(uid);
    const object = ref && this.get(ref.resource, ref.namespace, ref.name);
    return ref && object ? { ...ref, object } : undefined;
  }

  list(resource: string, filter: ListFilter = {}): KObject[] {
    const out: KObject[] = [];
    for (const obj of this.candidates(resource, filter)) {
      if (this.selects(obj, filter)) out.push(obj);
    }
    return out;
  }

  /** What a list must look at: one node's pods when the field selector names the node, else every object. */
  private candidates(resource: string, filter: ListFilter): Iterable<KObject> {
    const node =
      resource === 'pods'
        ? filter.fields?.find((r) => r.key === 'spec.nodeName' && r.op === 'eq' && r.value !== '')
        : undefined;
    if (node?.op === 'eq') return this.podsByNode.get(node.value)?.values() ?? [];
    return this.objects.get(resource)?.values() ?? [];
  }

  count(resource: string): number {
    return this.objects.get(resource)?.size ?? 0;
  }

  selects(obj: KObject, filter: ListFilter): boolean {
    if (filter.namespace && (obj.metadata.namespace ?? '') !== filter.namespace) return false;
    if (filter.labels?.length && !matches(filter.labels, labelsOf(obj))) return false;
    if (filter.fields?.length && !matches(filter.fields, fieldsOf(obj))) return false;
    return true;
  }

  /** Uids of objects whose ownerReferences name `uid`. */
  dependents(uid: string): ObjectRef[] {
    const out: ObjectRef[] = [];
    for (const d of this.dependentsOf.get(uid) ?? []) {
      const ref = this.byUid.get(d);
      if (ref) out.push(ref);
    }
    return out;
  }

  /** Stores `obj` (taking ownership and freezing it) with the next resourceVersion. */
  put(resource: string, obj: KObject): StoreEvent {
    const namespace = obj.metadata.namespace ?? '';
    const name = obj.metadata.name!;
    let byName = this.objects.get(resource);
    if (!byName) this.objects.set(resource, (byName = new Map()));
    const old = byName.get(nsKey(namespace, name));
    obj.metadata.resourceVersion = String(++this.rv);
    deepFreeze(obj);
    byName.set(nsKey(namespace, name), obj);
    if (old) this.unindex(resource, old, obj);
    this.index(resource, obj);
    return this.record(old ? 'MODIFIED' : 'ADDED', resource, obj, old);
  }

  /** Removes an object; the DELETED event carries it with a fresh resourceVersion, like the real server. */
  remove(resource: string, namespace: string, name: string): StoreEvent | undefined {
    const byName = this.objects.get(resource);
    const old = byName?.get(nsKey(namespace, name));
    if (!byName || !old) return undefined;
    byName.delete(nsKey(namespace, name));
    this.unindex(resource, old);
    const gone = structuredClone(old);
    gone.metadata.resourceVersion = String(++this.rv);
    return this.record('DELETED', resource, deepFreeze(gone), old);
  }

  /**
   * Changes after `rv`, oldest first, or 'gone' when some of them have left the window (the caller
   * answers 410). `rv` at or beyond the present yields no events.
   */
  eventsSince(rv: number): StoreEvent[] | 'gone' {
    if (rv >= this.rv) return [];
    if (rv < this.floor) return 'gone';
    let lo = 0;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.history[mid]!.rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return this.history.slice(lo);
  }

  /** Forgets all history, so every watch resuming from an older resourceVersion gets 410. */
  compact(): void {
    this.history = [];
    this.floor = this.rv;
  }

  /** Calls `fn` synchronously after every change. `fn` must not write to the store synchronously. */
  subscribe(fn: (e: StoreEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private record(type: EventType, resource: string, object: KObject, old: KObject | undefined): StoreEvent {
    const e: StoreEvent = old ? { type, resource, rv: this.rv, object, old } : { type, resource, rv: this.rv, object };
    this.history.push(e);
    if (this.history.length > this.window * 1.5) {
      const drop = this.history.length - this.window;
      this.floor = this.history[drop - 1]!.rv;
      this.history = this.history.slice(drop);
    }
    for (const l of [...this.listeners]) {
      try {
        l(e);
      } catch (err) {
        this.onListenerError(err);
      }
    }
    return e;
  }

  private index(resource: string, obj: KObject): void {
    const node = resource === 'pods' ? nodeNameOf(obj) : undefined;
    if (node) {
      let pods = this.podsByNode.get(node);
      if (!pods) this.podsByNode.set(node, (pods = new Map()));
      pods.set(nsKey(obj.metadata.namespace ?? '', obj.metadata.name!), obj);
    }
    const uid = obj.metadata.uid;
    if (!uid) return;
    this.byUid.set(uid, { resource, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name! });
    for (const o of obj.metadata.ownerReferences ?? []) {
      let set = this.dependentsOf.get(o.uid);
      if (!set) this.dependentsOf.set(o.uid, (set = new Set()));
      set.add(uid);
    }
  }

  /** Drops `obj` from the indexes; a pod that stays on its node (`next`) keeps its place in the node's list. */
  private unindex(resource: string, obj: KObject, next?: KObject): void {
    const node = resource === 'pods' ? nodeNameOf(obj) : undefined;
    const pods = node ? this.podsByNode.get(node) : undefined;
    if (pods && (!next || nodeNameOf(next) !== node)) {
      pods.delete(nsKey(obj.metadata.namespace ?? '', obj.metadata.name!));
      if (!pods.size) this.podsByNode.delete(node!);
    }
    const uid = obj.metadata.uid;
    if (!uid) return;
    this.byUid.delete(uid);
    for (const o of obj.metadata.ownerReferences ?? []) {
      const set = this.dependentsOf.get(o.uid);
      set?.delete(uid);
      if (set && set.size === 0) this.dependentsOf.delete(o.uid);
    }
  }
}
