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
//
// Some slots hold work that depends on the catalog alone (a NodePool's templates, their encoded instance types,
// the bound's options per template): `catalog` scope. A ModelCaches made over a longer-lived one (`new
// ModelCaches(catalog)`) keeps those slots there, so calls that each make their own caches (a what-if job's
// disruption plan, its bound) share them: a pool worker keeps one across its jobs (pool/job-catalog.ts). Their keys
// are the domain objects themselves, so a changed catalog (new objects) is a miss, never a stale entry.

/** A named cache: the key type, the value type and its index in every ModelCaches. */
interface CacheSlot<K extends object, V> {
  readonly id: number;
  readonly name: string;
  /** 'catalog': kept in the catalog caches a ModelCaches is made over, when it is (see above). */
  readonly scope: 'call' | 'catalog';
  /** Phantom fields: the key and value types. */
  readonly _key?: K;
  readonly _value?: V;
}

const names: string[] = [];

/** Declares a cache (once, at module load). The name shows in `stats()`. */
export function cacheSlot<K extends object, V>(name: string, scope: 'call' | 'catalog' = 'call'): CacheSlot<K, V> {
  if (names.includes(name)) throw new Error(`cache slot ${name} declared twice`);
  names.push(name);
  return { id: names.length - 1, name, scope };
}

/**
 * The entry kept for `key` (an object) that `matches`, in a cache whose slot maps a key to a short list of entries
 * (for values worked out of several parts of an object: the first part is the key, the others are compared in
 * the list); undefined when none does. Counted as a hit or a miss.
 */
export function keptEntry<E>(
  caches: ModelCaches,
  slot: CacheSlot<object, E[]>,
  key: object,
  matches: (e: E) => boolean,
): E | undefined {
  const list = caches.map(slot).get(key);
  let hit: E | undefined;
  if (list) for (let i = 0; i < list.length && hit === undefined; i++) if (matches(list[i]!)) hit = list[i];
  caches.record(slot, hit !== undefined);
  return hit;
}

/** The most entries kept for one key by keepEntry (the oldest goes first). */
const ENTRIES_PER_KEY = 16;

/** Keeps `entry` for `key` (see keptEntry) and returns it. */
export function keepEntry<E>(caches: ModelCaches, slot: CacheSlot<object, E[]>, key: object, entry: E): E {
  const m = caches.map(slot);
  const list = m.get(key);
  if (!list) m.set(key, [entry]);
  else {
    // Objects that share the key but not the other parts (made anew per solve) would grow the list forever.
    if (list.length >= ENTRIES_PER_KEY) list.shift();
    list.push(entry);
  }
  return entry;
}

interface CacheStats {
  readonly hits: number;
  readonly misses: number;
}

export class ModelCaches {
  private maps: Array<WeakMap<object, unknown> | undefined> = [];
  private hits: number[] = [];
  private misses: number[] = [];

  /** `catalog`: where the catalog-scope slots are kept (default here). */
  constructor(private readonly catalog?: ModelCaches) {}

  /** The value cached for `key`, or undefined (counted as a hit or a miss). */
  get<K extends object, V>(slot: CacheSlot<K, V>, key: K): V | undefined {
    const v = this.map(slot).get(key);
    this.record(slot, v !== undefined);
    return v;
  }

  set<K extends object, V>(slot: CacheSlot<K, V>, key: K, value: V): V {
    this.map(slot).set(key, value);
    return value;
  }

  /** The slot's map itself, for caches keyed by more than one object (count with `record`). */
  map<K extends object, V>(slot: CacheSlot<K, V>): WeakMap<K, V> {
    if (slot.scope === 'catalog' && this.catalog) return this.catalog.map(slot);
    let m = this.maps[slot.id];
    if (!m) this.maps[slot.id] = m = new WeakMap();
    return m as WeakMap<K, V>;
  }

  /** Counts a lookup of a cache used through `map`. */
  record(slot: CacheSlot<object, unknown>, hit: boolean): void {
    if (hit) this.hits[slot.id] = (this.hits[slot.id] ?? 0) + 1;
    else this.misses[slot.id] = (this.misses[slot.id] ?? 0) + 1;
    // The catalog caches count the lookups of their slots too: what every call over them reused.
    if (slot.scope === 'catalog') this.catalog?.record(slot, hit);
  }

  /** The cached value for `key`, computing and keeping it on a miss. */
  memo<K extends object, V>(slot: CacheSlot<K, V>, key: K, compute: () => V): V {
    const v = this.get(slot, key);
    return v !== undefined ? v : this.set(slot, key, compute());
  }

  /** Forgets every cached value and count (the catalog caches it is made over keep theirs). */
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
