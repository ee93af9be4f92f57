// What-if jobs name their instance types instead of carrying them. A built snapshot holds a region's catalog
// (about 1,400 types with their offerings, megabytes packed) twice over: per NodePool and by name. Packing it
// for every job made the caller's thread the bottleneck of a batch (it packs every job, while the workers
// share the solving) and made every worker unpack and re-encode the same catalog per job. Here the caller packs
// each instance type once, in a chunk of the types first met together, into a SharedArrayBuffer (shared with
// every worker, not copied), and each list of types (a NodePool's, the catalog's) once too, as a chunk of
// references; a job names its lists by id. A worker unpacks a chunk the first time it sees it and then hands
// every job the same objects (the same InstanceTypes, the same lists, the same catalog Map), so the solver's
// per-type caches stay warm across the jobs of a batch. Naming a list instead of its ~1,400 references took a
// batch job's packing on the caller's thread from about 2.5 to 0.5 ms (docs/benchmarks.md, "Worker pool").
import type { InstanceType } from '../domain/types.ts';
import type { Built } from '../whatif/build.ts';
import { pack, unpack } from './codec.ts';

/**
 * Shared with the workers: packed instance types, or (`list`) a list of types shipped already, as Int32 pairs
 * [chunk id, index in the chunk].
 */
export interface TypeChunk {
  readonly id: number;
  readonly bytes: SharedArrayBuffer;
  readonly list?: true;
}

/** An instance type as a job names it: [chunk id, index in the chunk]. */
type TypeRef = readonly [number, number];

/** A built snapshot as it crosses to a worker: the types by reference, each list of types by its chunk's id. */
export interface WireBuilt extends Omit<Built, 'snapshot' | 'catalog'> {
  readonly snapshot: Omit<Built['snapshot'], 'instanceTypes'> & {
    readonly instanceTypes: ReadonlyArray<readonly [string, number]>;
  };
  /** The list of the catalog's types when each is keyed by its name (as buildSnapshot makes it), else each entry. */
  readonly catalog: number | ReadonlyArray<readonly [string, TypeRef]>;
}

/** How many lists the caller remembers (the oldest is forgotten first; shipped again if met again). */
const KEPT_LISTS = 64;

/** The caller's side: which chunk holds each instance type it has shipped, and the lists it has shipped. */
export class TypeShipper {
  private nextId = 1;
  private readonly where = new WeakMap<InstanceType, { readonly chunk: TypeChunk; readonly index: number }>();
  /** List chunks by their references joined (a list's identity is its types, in order). */
  private readonly lists = new Map<string, TypeChunk>();

  /**
   * The built snapshot with its types as references, and the chunks they are in: types' chunks first (new types
   * packed first), then lists' chunks.
   */
  encode(built: Built): { readonly built: WireBuilt; readonly chunks: readonly TypeChunk[] } {
    const { snapshot, catalog, ...rest } = built;
    const catalogTypes = [...catalog.values()];
    this.packNew([...snapshot.instanceTypes.values(), catalogTypes]);
    const used = new Map<number, TypeChunk>();
    const lists = new Map<number, TypeChunk>();
    const listOf = (its: readonly InstanceType[]): number => {
      const list = this.listOf(its, used);
      lists.set(list.id, list);
      return list.id;
    };
    let byName = true;
    for (const [name, it] of catalog) if (it.name !== name) byName = false;
    const wire: WireBuilt = {
      ...rest,
      snapshot: { ...snapshot, instanceTypes: [...snapshot.instanceTypes].map(([pool, its]) => [pool, listOf(its)]) },
      catalog: byName ? listOf(catalogTypes) : [...catalog].map(([name, it]) => [name, this.ref(it, used)]),
    };
    return { built: wire, chunks: [...used.values(), ...lists.values()] };
  }

  private ref(it: InstanceType, used: Map<number, TypeChunk>): TypeRef {
    const at = this.where.get(it)!;
    used.set(at.chunk.id, at.chunk);
    return [at.chunk.id, at.index];
  }

  /**
   * The chunk of this list of (shipped) types, made the first time the list is met; its types' chunks go in `used`.
   * A list is found again by a hash of its references and then compared whole.
   */
  private listOf(its: readonly InstanceType[], used: Map<number, TypeChunk>): TypeChunk {
    const refs = new Int32Array(its.length * 2);
    let hash = 0x811c9dc5;
    let last: TypeChunk | undefined;
    for (let i = 0; i < its.length; i++) {
      const at = this.where.get(its[i]!)!;
      if (at.chunk !== last) used.set(at.chunk.id, (last = at.chunk));
      refs[2 * i] = at.chunk.id;
      refs[2 * i + 1] = at.index;
      hash = Math.imul(Math.imul(hash ^ at.chunk.id, 0x01000193) ^ at.index, 0x01000193);
    }
    const key = `${its.length}:${hash >>> 0}`;
    let list = this.lists.get(key);
    if (list && sameRefs(new Int32Array(list.bytes), refs)) this.lists.delete(key);
    else {
      const bytes = new SharedArrayBuffer(refs.byteLength);
      new Int32Array(bytes).set(refs);
      list = { id: this.nextId++, bytes, list: true };
    }
    this.lists.set(key, list);
    if (this.lists.size > KEPT_LISTS) this.lists.delete(this.lists.keys().next().value!);
    return list;
  }

  private packNew(lists: readonly (readonly InstanceType[])[]): void {
    const fresh = new Set<InstanceType>();
    for (const its of lists) for (const it of its) if (!this.where.has(it)) fresh.add(it);
    if (!fresh.size) return;
    const types = [...fresh];
    const packed = new Uint8Array(pack(types));
    const bytes = new SharedArrayBuffer(packed.byteLength);
    new Uint8Array(bytes).set(packed);
    const chunk: TypeChunk = { id: this.nextId++, bytes };
    types.forEach((it, index) => this.where.set(it, { chunk, index }));
  }
}

function sameRefs(a: Int32Array, b: Int32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** How many chunks a worker keeps unpacked (the least recently used goes first). */
const KEPT_CHUNKS = 16;

/** A list as a worker keeps it: its types, and the catalog Map of them by name (made when a job asks). */
interface StoredList {
  readonly types: readonly InstanceType[];
  byName?: ReadonlyMap<string, InstanceType>;
}

/** A worker's side: the chunks it has unpacked, as the same objects for every job. */
export class TypeStore {
  private readonly chunks = new Map<number, readonly InstanceType[]>();
  private readonly lists = new Map<number, StoredList>();

  /** The built snapshot with its types resolved. */
  decode(wire: WireBuilt, chunks: readonly TypeChunk[]): Built {
    const byId = new Map(chunks.filter((c) => !c.list).map((c) => [c.id, this.chunk(c)] as const));
    const typeOf = ([chunk, index]: TypeRef): InstanceType => {
      const it = byId.get(chunk)?.[index];
      if (!it) throw new Error(`what-if job: instance type ${chunk}/${index} is in no chunk the job carries`);
      return it;
    };
    const lists = new Map(chunks.filter((c) => c.list).map((c) => [c.id, this.list(c, typeOf)] as const));
    const listOf = (id: number): StoredList => {
      const list = lists.get(id);
      if (!list) throw new Error(`what-if job: instance type list ${id} is in no chunk the job carries`);
      return list;
    };
    const { snapshot, catalog, ...rest } = wire;
    return {
      ...rest,
      snapshot: {
        ...snapshot,
        instanceTypes: new Map(snapshot.instanceTypes.map(([pool, id]) => [pool, listOf(id).types] as const)),
      },
      catalog: typeof catalog === 'number' ? byName(listOf(catalog)) : new Map(catalog.map(([n, r]) => [n, typeOf(r)])),
    };
  }

  private chunk(c: TypeChunk): readonly InstanceType[] {
    return kept(this.chunks, c.id, () => {
      // A list kept from before may hold the objects of a chunk that was let go: lists are made again.
      this.lists.clear();
      return unpack<InstanceType[]>(new Uint8Array(c.bytes).slice().buffer);
    });
  }

  private list(c: TypeChunk, typeOf: (r: TypeRef) => InstanceType): StoredList {
    return kept(this.lists, c.id, () => {
      const refs = new Int32Array(c.bytes);
      return { types: Array.from({ length: refs.length / 2 }, (_, i) => typeOf([refs[2 * i]!, refs[2 * i + 1]!])) };
    });
  }
}

function byName(list: StoredList): ReadonlyMap<string, InstanceType> {
  return (list.byName ??= new Map(list.types.map((t) => [t.name, t] as const)));
}

/** `id`'s entry of `cache`, made by `make` if absent, as the most recently used; the least recently used go. */
function kept<T>(cache: Map<number, T>, id: number, make: () => T): T {
  let v = cache.get(id);
  if (v !== undefined) cache.delete(id);
  else v = make();
  cache.set(id, v);
  for (const k of cache.keys()) {
    if (cache.size <= KEPT_CHUNKS) break;
    cache.delete(k);
  }
  return v;
}
