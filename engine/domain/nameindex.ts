// Names by key where one name per key is the rule: a key's one name is held as the string itself, and a Set is made
// only while several names share a key. Cluster state's indexes of Nodes and NodeClaims by providerID (one Node and
// one NodeClaim per instance; several while a providerID is copied) and the cluster model's links of a pod to the
// nodes that list it besides its own use it. A Set per key cost a Set object and its hash table for every key
// (docs/controller-benchmark.md, "shift 18, claims").

export class NameIndex {
  private readonly byKey = new Map<string, string | Set<string>>();

  /** Adds `name` to the names under `key`. */
  add(key: string, name: string): void {
    const had = this.byKey.get(key);
    if (had === undefined) this.byKey.set(key, name);
    else if (typeof had === 'string') {
      if (had !== name) this.byKey.set(key, new Set([had, name]));
    } else had.add(name);
  }

  /** Takes `name` from the names under `key` (the key goes with its last name). */
  drop(key: string, name: string): void {
    const had = this.byKey.get(key);
    if (had === undefined) return;
    if (typeof had === 'string') {
      if (had === name) this.byKey.delete(key);
      return;
    }
    had.delete(name);
    if (had.size === 1) this.byKey.set(key, had.values().next().value!);
    else if (had.size === 0) this.byKey.delete(key);
  }

  /** How many names are under `key`. */
  count(key: string): number {
    const had = this.byKey.get(key);
    return had === undefined ? 0 : typeof had === 'string' ? 1 : had.size;
  }

  /** The name under `key` when it is the only one; undefined when there are none or several. */
  only(key: string): string | undefined {
    const had = this.byKey.get(key);
    return typeof had === 'string' ? had : undefined;
  }

  /** Keys with a name. */
  get size(): number {
    return this.byKey.size;
  }

  clear(): void {
    this.byKey.clear();
  }

  /** The names under `key`, in the order they were added. */
  names(key: string): string[] {
    const had = this.byKey.get(key);
    return had === undefined ? [] : typeof had === 'string' ? [had] : [...had];
  }
}
