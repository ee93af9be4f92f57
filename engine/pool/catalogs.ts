// What-if jobs name their instance types instead of carrying them. A built snapshot holds a region's catalog
// (about 1,400 types with their offerings, megabytes packed) twice over: per NodePool and by name. Packing it
// for every job made the caller's thread the bottleneck of a batch (it packs every job, while the workers
// share the solving) and made every worker unpack and re-encode the same catalog per job. Here the caller packs
// each instance type once, in a chunk of the types first met together, into a SharedArrayBuffer (shared with
// every worker, not copied); a job carries its chunks and refers to types by (chunk, index). A worker unpacks a
// chunk the first time it sees it and then hands every job the same InstanceType objects, so the solver's
// per-type caches stay warm across the jobs of a batch.
import type { InstanceType } from '../domain/types.ts';
import type { Built } from '../whatif/build.ts';
import { pack, unpack } from './codec.ts';

/** Packed instance types, shared with the workers. */
export interface TypeChunk {
  readonly id: number;
  readonly bytes: SharedArrayBuffer;
}

/** An instance type as a job names it: [chunk id, index in the chunk]. */
type TypeRef = readonly [number, number];

/** A built snapshot as it crosses to a worker: the types by reference. */
export interface WireBuilt extends Omit<Built, 'snapshot' | 'catalog'> {
  readonly snapshot: Omit<Built['snapshot'], 'instanceTypes'> & {
    readonly instanceTypes: ReadonlyArray<readonly [string, readonly TypeRef[]]>;
  };
  readonly catalog: ReadonlyArray<readonly [string, TypeRef]>;
}

/** The caller's side: which chunk holds each instance type it has shipped. */
export class TypeShipper {
  private nextId = 1;
  private readonly where = new WeakMap<InstanceType, { readonly chunk: TypeChunk; readonly index: number }>();

  /** The built snapshot with its types as references, and the chunks they are in (new types packed first). */
  encode(built: Built): { readonly built: WireBuilt; readonly chunks: readonly TypeChunk[] } {
    const all = [...built.snapshot.instanceTypes.values()].flat().concat([...built.catalog.values()]);
    this.packNew(all);
    const chunks = new Map<number, TypeChunk>();
    const ref = (it: InstanceType): TypeRef => {
      const at = this.where.get(it)!;
      chunks.set(at.chunk.id, at.chunk);
      return [at.chunk.id, at.index];
    };
    const { snapshot, catalog, ...rest } = built;
    const wire: WireBuilt = {
      ...rest,
      snapshot: { ...snapshot, instanceTypes: [...snapshot.instanceTypes].map(([pool, its]) => [pool, its.map(ref)]) },
      catalog: [...catalog].map(([name, it]) => [name, ref(it)]),
    };
    return { built: wire, chunks: [...chunks.values()] };
  }

  private packNew(types: readonly InstanceType[]): void {
    const fresh = [...new Set(types.filter((it) => !this.where.has(it)))];
    if (!fresh.length) return;
    const packed = new Uint8Array(pack(fresh));
    const bytes = new SharedArrayBuffer(packed.byteLength);
    new Uint8Array(bytes).set(packed);
    const chunk: TypeChunk = { id: this.nextId++, bytes };
    fresh.forEach((it, index) => this.where.set(it, { chunk, index }));
  }
}

/** How many chunks a worker keeps unpacked (the least recently used goes first). */
const KEPT_CHUNKS = 16;

/** A worker's side: the chunks it has unpacked, as the same objects for every job. */
export class TypeStore {
  private readonly chunks = new Map<number, readonly InstanceType[]>();

  /** The built snapshot with its types resolved. */
  decode(wire: WireBuilt, chunks: readonly TypeChunk[]): Built {
    const byId = new Map(chunks.map((c) => [c.id, this.chunk(c)] as const));
    const typeOf = ([chunk, index]: TypeRef): InstanceType => {
      const it = byId.get(chunk)?.[index];
      if (!it) throw new Error(`what-if job: instance type ${chunk}/${index} is in no chunk the job carries`);
      return it;
    };
    const { snapshot, catalog, ...rest } = wire;
    return {
      ...rest,
      snapshot: {
        ...snapshot,
        instanceTypes: new Map(snapshot.instanceTypes.map(([pool, refs]) => [pool, refs.map(typeOf)] as const)),
      },
      catalog: new Map(catalog.map(([name, r]) => [name, typeOf(r)] as const)),
    };
  }

  private chunk(c: TypeChunk): readonly InstanceType[] {
    let types = this.chunks.get(c.id);
    if (types) this.chunks.delete(c.id);
    else types = unpack<InstanceType[]>(new Uint8Array(c.bytes).slice().buffer);
    this.chunks.set(c.id, types);
    for (const id of this.chunks.keys()) {
      if (this.chunks.size <= KEPT_CHUNKS) break;
      this.chunks.delete(id);
    }
    return types;
  }
}
