// The identity caches of the scheduling model, as explicit state. Snapshot data is immutable, so much of the
// work of a solve is a function of one input object: a NodePool's template requirements, a template's encoded
// instance types, an existing node's starting room, a pod's class hash. A disruption call solves hundreds of
// simulations over the same objects and a warm cluster model (engine/cluster) keeps them across decisions,
// so that work is remembered per object here.
//
// Each cache is a slot a module declares once (`cacheSlot`: a name and an index, no state); a ModelCaches
// holds one WeakMap per slot, plus hit and miss counts. Whoever owns the objects owns the caches: a warm
// cluster model, a disruption call, a solver instance, a test. Nothing is written onto the objects
// themselves, and no cache lives in a module: `reset()` forgets everything, `stats()` says what was reused.

/** A named cache: the key type, the value type and its index in every ModelCaches. */
interface CacheSlot<K extends object, V> {
  readonly id: number;
  readonly name: string;
  /** Phantom fields: the key and value types. */
  readonly _key?: K;
  readonly _value?: V;
}

const names: string[] = [];

/** Declares a cache (once, at module load). The name shows in `stats()`. */
export function cacheSlot<K extends object, V>(name: string): CacheSlot<K, V> {
  if (names.includes(name)) throw new Error(`cache slot ${name} declared twice`);
  names.push(name);
  return { id: names.length - 1, name };
}

/** Stands for an absent part (an optional object field) in the keys of a cache kept by several objects. */
export const ABSENT: object = Object.freeze({});

/** The map under `key` in a cache kept by several objects (`m` maps the first to a map by the next), made empty the first time. */
export function within<V>(m: WeakMap<object, WeakMap<object, V>>, key: object): WeakMap<object, V> {
  let v = m.get(key);
  if (v === undefined) m.set(key, (v = new WeakMap()));
  return v;
}

interface CacheStats {
  readonly hits: number;
  readonly misses: number;
}

export class ModelCaches {
  private maps: Array<WeakMap<object, unknown> | undefined> = [];
  private hits: number[] = [];
  private misses: number[] = [];

  /** The value cached for `key`, or undefined (counted as a hit or a miss). */
  get<K extends object, V>(slot: CacheSlot<K, V>, key: K): V | undefined {
    const v = this.maps[slot.id]?.get(key) as V | undefined;
    if (v === undefined) this.misses[slot.id] = (this.misses[slot.id] ?? 0) + 1;
    else this.hits[slot.id] = (this.hits[slot.id] ?? 0) + 1;
    return v;
  }

  set<K extends object, V>(slot: CacheSlot<K, V>, key: K, value: V): V {
    this.map(slot).set(key, value);
    return value;
  }

  /** The slot's map itself, for caches keyed by more than one object (count with `record`). */
  map<K extends object, V>(slot: CacheSlot<K, V>): WeakMap<K, V> {
    let m = this.maps[slot.id];
    if (!m) this.maps[slot.id] = m = new WeakMap();
    return m as WeakMap<K, V>;
  }

  /** Counts a lookup of a cache used through `map`. */
  record(slot: CacheSlot<object, unknown>, hit: boolean): void {
    if (hit) this.hits[slot.id] = (this.hits[slot.id] ?? 0) + 1;
    else this.misses[slot.id] = (this.misses[slot.id] ?? 0) + 1;
  }

  /** The cached value for `key`, computing and keeping it on a miss. */
  memo<K extends object, V>(slot: CacheSlot<K, V>, key: K, compute: () => V): V {
    const v = this.get(slot, key);
    return v !== undefined ? v : this.set(slot, key, compute());
  }

  /** Forgets every cached value and count. */
  reset(): void {
    this.maps = [];
    this.hits = [];
    this.misses = [];
  }

  /** Hits and misses per cache since creation or the last reset (caches never asked are left out). */
  stats(): Readonly<Record<string, CacheStats>> {
    const out: Record<string, CacheStats> = {};
    names.forEach((name, id) => {
      const hits = this.hits[id] ?? 0;
      const misses = this.misses[id] ?? 0;
      if (hits || misses) out[name] = { hits, misses };
    });
    return out;
  }
}
