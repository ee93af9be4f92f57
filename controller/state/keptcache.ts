// client-node's informer cache as a view of what cluster state keeps. ListWatch (cache.js) holds every object it
// delivered in a map of namespaces, each a map of names: it reads that map to tell an add from an update, to drop an
// event for the version it has (isSameVersion), and, when a relist answers, to call `delete` for what the list no
// longer has. The controller never reads the cache otherwise (it reads cluster state). For pods, cluster state keeps
// the very objects the cache would (the pod's record, podrecord.ts, made by the informer's keep), in maps of the same
// shape (Workloads' pod table): the cache's own maps were an entry per pod beside cluster state's. With this view the
// cache reads cluster state's maps instead, and its writes do nothing: the handlers it calls next (apply, remove)
// write cluster state. A write the handlers leave undone (an object that does not parse, a stale version, a handler
// that threw) is one the cache does not have either: the next event of that object is handled again, not dropped.
//
// The view stands in for ListWatch's private `objects` field (client-node 2.x cache.js); `viewCache` checks that the
// field is there and a Map, and fails at start-up otherwise, so a client-node that keeps its cache elsewhere is caught
// by the informer tests rather than left with two caches or none.
import type { KubernetesObject, ListWatch } from '@kubernetes/client-node';
import type { KubeObject } from '../operator/kube.ts';

/** One namespace's objects by name (a Map of cluster state's; only read here). */
interface KeptNames {
  readonly size: number;
  get(name: string): KubeObject | undefined;
  has(name: string): boolean;
  entries(): Iterable<[string, KubeObject]>;
  values(): Iterable<KubeObject>;
}

/** Objects by namespace and then by name, as cluster state keeps them (a Map of Maps; only read here). */
export interface KeptObjects {
  readonly size: number;
  get(namespace: string): KeptNames | undefined;
  has(namespace: string): boolean;
  keys(): Iterable<string>;
}

/** One namespace of the view: reads cluster state's map of that namespace as it is at each call. */
class NamespaceView {
  constructor(
    private readonly kept: KeptObjects,
    private readonly namespace: string,
  ) {}

  private get names(): KeptNames | undefined {
    return this.kept.get(this.namespace);
  }

  get size(): number {
    return this.names?.size ?? 0;
  }

  get(name: string): KubeObject | undefined {
    return this.names?.get(name);
  }

  has(name: string): boolean {
    return this.names?.has(name) ?? false;
  }

  /** The cache storing an object: the handler it calls next stores it in cluster state. */
  set(): this {
    return this;
  }

  /** Whether cluster state has the object: the cache then calls `remove`, which takes it out. */
  delete(name: string): boolean {
    return this.has(name);
  }

  /** A copy: a relist calls `remove` for entries while it walks them. */
  entries(): IterableIterator<[string, KubeObject]> {
    return [...(this.names?.entries() ?? [])].values();
  }

  values(): IterableIterator<KubeObject> {
    return [...(this.names?.values() ?? [])].values();
  }

  forEach(f: (o: KubeObject, name: string) => void): void {
    for (const [name, o] of this.entries()) f(o, name);
  }
}

/** The namespaces of the view: every namespace reads as present (an empty one as empty), writes do nothing. */
class CacheView {
  constructor(private readonly kept: KeptObjects) {}

  get size(): number {
    return this.kept.size;
  }

  get(namespace: string): NamespaceView {
    return new NamespaceView(this.kept, namespace);
  }

  has(namespace: string): boolean {
    return this.kept.has(namespace);
  }

  set(): this {
    return this;
  }

  delete(namespace: string): boolean {
    return this.kept.has(namespace);
  }

  /** A copy, as NamespaceView.entries. */
  entries(): IterableIterator<[string, NamespaceView]> {
    return [...this.kept.keys()].map((ns): [string, NamespaceView] => [ns, this.get(ns)]).values();
  }

  values(): IterableIterator<NamespaceView> {
    return [...this.kept.keys()].map((ns) => this.get(ns)).values();
  }
}

/**
 * Makes `lw`'s cache a view of `kept` (see the top of this file); its handlers must keep in `kept` every object they
 * are given to apply and take out every object they are given to remove. Throws if `lw` keeps no `objects` map.
 */
export function viewCache(lw: ListWatch<KubernetesObject>, kept: KeptObjects): void {
  const fields = lw as unknown as { objects?: unknown };
  if (!(fields.objects instanceof Map) || fields.objects.size > 0)
    throw new Error(
      "client-node's ListWatch keeps no empty `objects` map: the informer cache this controller reads through cluster state has moved (controller/state/keptcache.ts)",
    );
  fields.objects = new CacheView(kept);
}
