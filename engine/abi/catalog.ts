// The instance-type and offering part of the solver's input block, memoised per template.
//
// Every solve used to re-encode each template's instance types (1,371 on the real catalog): their label
// values into the key space, their requirements as sparse bitsets, allocatable and capacity vectors, one
// record per offering. Consolidation simulations, a warm cluster model's decisions and what-if jobs solve many
// times with the same templates (the scheduling model's templates are remembered by the identity of the
// NodePool, instance types, daemonsets and well-known labels, all immutable domain objects), so that work is
// done once per template and reused, in the caller's ModelCaches:
//
// - `catalogValues(t)`: the label values the template's instance types and offerings add to the key space;
//   it depends on the template alone.
// - `encodeTemplateTypes(...)`: the template's instance-type records, their sparse requirement lists, their
//   f64 vectors and their offering records, all relative to the chunk; the caller appends them to the block's
//   pools and relocates the indices. A chunk is reused only for the same template AND the same fingerprint:
//   the key-space entries of every key the encoding looks up (index, words, the sorted value universe), the
//   resource dimensions and the limit dimensions. Anything else the bytes depend on comes from the template.
//
// The per-type and per-offering encoders below are the only code that writes those records, with or without
// the cache, so a field added to an offering record is added once.
import * as A from '../../solver-as/abi.ts';
import type { Offering, Requirements, Resources } from '../domain/types.ts';
import { toMicros } from '../domain/money.ts';
import { CAPACITY_TYPE_LABEL, HOSTNAME_LABEL, RESERVATION_ID_LABEL, ZONE_LABEL } from '../scheduling/labels.ts';
import { isExotic } from '../launch/filter.ts';
import { cacheSlot, type ModelCaches } from '../model/caches.ts';
import type { DaemonGroup, Template } from '../model/templates.ts';
import type { KeySpace } from './keyspace.ts';
import { F64s, Words } from './writer.ts';

export { RESERVATION_ID_LABEL };

/** Keys the offering records look up in the key space. */
const OFFERING_KEYS = [ZONE_LABEL, CAPACITY_TYPE_LABEL, RESERVATION_ID_LABEL] as const;

export function withoutHostname(r: Requirements): Requirements {
  if (!r.has(HOSTNAME_LABEL)) return r;
  const m = new Map(r);
  m.delete(HOSTNAME_LABEL);
  return m;
}

const CATALOG_VALUES = cacheSlot<Template, ReadonlyMap<string, ReadonlySet<string>>>('catalog values', 'catalog');

/** Every key and value the template's instance types and offerings contribute to the key space. */
export function catalogValues(t: Template, caches?: ModelCaches): ReadonlyMap<string, ReadonlySet<string>> {
  return caches ? caches.memo(CATALOG_VALUES, t, () => collectValues(t)) : collectValues(t);
}

function collectValues(t: Template): ReadonlyMap<string, ReadonlySet<string>> {
  const m = new Map<string, Set<string>>();
  const set = (key: string): Set<string> => {
    let s = m.get(key);
    if (!s) m.set(key, (s = new Set()));
    return s;
  };
  // Values one at a time (no array per offering): a what-if job collects these for a whole region's catalog.
  for (const it of t.instanceTypes) {
    for (const r of it.requirements.values()) {
      const s = set(r.key);
      for (const v of r.values) s.add(v);
    }
    for (const o of it.offerings) {
      set(ZONE_LABEL).add(o.zone);
      set(CAPACITY_TYPE_LABEL).add(o.capacityType);
      if (o.reservationId !== undefined) set(RESERVATION_ID_LABEL).add(o.reservationId);
    }
  }
  return m;
}

/** Appends one offering record (O_STRIDE i32 words, the price as an f64 at O_PRICE) at record `i`. */
function encodeOffering(o: Offering, ks: KeySpace, i32: Int32Array, f64: Float64Array, i: number): void {
  const b = i * A.O_STRIDE;
  i32[b + A.O_ZONE] = ks.value(ZONE_LABEL, o.zone);
  i32[b + A.O_CT] = ks.value(CAPACITY_TYPE_LABEL, o.capacityType);
  i32[b + A.O_RESV] = o.reservationId !== undefined ? ks.value(RESERVATION_ID_LABEL, o.reservationId) : -1;
  i32[b + A.O_AVAILABLE] = o.available ? 1 : 0;
  f64[(b + A.O_PRICE) / 2] = toMicros(o.price);
}

/** A template's instance types and offerings, encoded with indices relative to the chunk. */
export interface TypesChunk {
  /** IT_STRIDE words per instance type: IT_REQS indexes `words` (-1: none), IT_ALLOC and IT_CAP index `f64s`, IT_DG indexes `groups`, IT_OFFS the chunk's offerings; IT_TMPL is 0. */
  readonly its: Int32Array;
  readonly words: Int32Array;
  readonly f64s: Float64Array;
  /** O_STRIDE words per offering. */
  readonly offerings: Uint8Array;
  readonly offeringCount: number;
  /** Daemon groups in order of first use by the instance types. */
  readonly groups: readonly DaemonGroup[];
}

function anyNegative(r: Resources): boolean {
  for (const k in r) if (r[k]! < 0) return true;
  return false;
}

function encodeChunk(t: Template, ks: KeySpace, resources: readonly string[], lds: readonly string[]): TypesChunk {
  const words = new Words();
  const f64 = new F64s();
  const its = new Int32Array(t.instanceTypes.length * A.IT_STRIDE);
  const groups: DaemonGroup[] = [];
  const groupIndex = new Map<DaemonGroup, number>();
  let offeringCount = 0;
  for (const it of t.instanceTypes) offeringCount += it.offerings.length;
  const offBuf = new ArrayBuffer(offeringCount * A.O_STRIDE * 4);
  const offI32 = new Int32Array(offBuf);
  const offF64 = new Float64Array(offBuf);
  let o = 0;
  // One scratch vector each for allocatable and capacity, reused: this runs for every type of the catalog.
  const alloc = new Float64Array(resources.length);
  const cap = new Float64Array(lds.length);
  for (let i = 0; i < t.instanceTypes.length; i++) {
    const it = t.instanceTypes[i]!;
    const negative = anyNegative(it.allocatable);
    for (let r = 0; r < resources.length; r++) alloc[r] = negative ? -1 : (it.allocatable[resources[r]!] ?? 0);
    for (let d = 0; d < lds.length; d++) cap[d] = it.capacity[lds[d]!] ?? 0;
    const reqList = ks.sparseInto(withoutHostname(it.requirements), words);
    const offStart = o;
    for (const of of it.offerings) encodeOffering(of, ks, offI32, offF64, o++);
    const g = t.daemonGroupOf.get(it.name)!;
    let gi = groupIndex.get(g);
    if (gi === undefined) {
      gi = groups.length;
      groupIndex.set(g, gi);
      groups.push(g);
    }
    const b = i * A.IT_STRIDE;
    its[b + A.IT_REQS] = reqList;
    its[b + A.IT_ALLOC] = f64.vector(alloc);
    its[b + A.IT_CAP] = f64.vector(cap);
    its[b + A.IT_DG] = gi;
    its[b + A.IT_OFFS] = offStart;
    its[b + A.IT_NOFFS] = it.offerings.length;
    its[b + A.IT_FLAGS] = isExotic(it) ? A.ITF_EXOTIC : 0;
  }
  return {
    its,
    words: words.view().slice(),
    f64s: f64.view().slice(),
    offerings: new Uint8Array(offBuf),
    offeringCount,
    groups,
  };
}

/** What of the key space, resources and limit dimensions a template's chunk depends on. */
function fingerprint(
  t: Template,
  ks: KeySpace,
  resources: readonly string[],
  lds: readonly string[],
  caches: ModelCaches,
): string {
  const parts: string[] = [resources.join(','), lds.join(',')];
  const keys = new Set<string>(OFFERING_KEYS);
  for (const k of catalogValues(t, caches).keys()) keys.add(k);
  for (const k of keys) {
    const i = ks.index.get(k);
    parts.push(
      i === undefined ? `${k}\u0001-` : `${k}\u0001${i}\u0001${ks.words[i]}\u0001${ks.values[i]!.join('\u0002')}`,
    );
  }
  return parts.join('\u0000');
}

/** Chunks kept per template: a few key spaces (provisioning, consolidation simulations) alternate. */
const CHUNKS_PER_TEMPLATE = 4;
const CHUNKS = cacheSlot<Template, Map<string, TypesChunk>>('catalog chunks', 'catalog');

/** The template's chunk for this key space, from `caches` when the fingerprint matches (none: encoded afresh). */
export function templateTypes(
  t: Template,
  ks: KeySpace,
  resources: readonly string[],
  lds: readonly string[],
  caches?: ModelCaches,
): TypesChunk {
  if (!caches) return encodeChunk(t, ks, resources, lds);
  const fp = fingerprint(t, ks, resources, lds, caches);
  const byFp = caches.map(CHUNKS);
  let chunks = byFp.get(t);
  if (!chunks) byFp.set(t, (chunks = new Map()));
  let c = chunks.get(fp);
  caches.record(CHUNKS, c !== undefined);
  if (c) return c;
  c = encodeChunk(t, ks, resources, lds);
  if (chunks.size >= CHUNKS_PER_TEMPLATE) chunks.delete(chunks.keys().next().value!);
  chunks.set(fp, c);
  return c;
}

/**
 * Appends a chunk for template `ti`: its words and f64 vectors at the pools' ends, its records into `out`
 * from record `at` with indices relocated (offerings start at record `offBase` of the block), its daemon
 * groups numbered through `dgOf`. The offering bytes need no relocation; the caller concatenates them.
 */
export function appendChunk(
  c: TypesChunk,
  ti: number,
  words: Words,
  f64: F64s,
  offBase: number,
  dgOf: (g: DaemonGroup) => number,
  out: Int32Array,
  at: number,
): void {
  const wBase = words.append(c.words);
  const fBase = f64.append(c.f64s);
  const dg = c.groups.map(dgOf);
  const r = c.its;
  out.set(r, at * A.IT_STRIDE);
  for (let b = 0, o = at * A.IT_STRIDE; b < r.length; b += A.IT_STRIDE, o += A.IT_STRIDE) {
    const req = r[b + A.IT_REQS]!;
    out[o + A.IT_REQS] = req < 0 ? -1 : req + wBase;
    out[o + A.IT_ALLOC] = r[b + A.IT_ALLOC]! + fBase;
    out[o + A.IT_CAP] = r[b + A.IT_CAP]! + fBase;
    out[o + A.IT_DG] = dg[r[b + A.IT_DG]!]!;
    out[o + A.IT_OFFS] = r[b + A.IT_OFFS]! + offBase;
    out[o + A.IT_TMPL] = ti;
  }
}

/**
 * Instances left per reservation (the values of the reservation-id key, in interned order) as the reference
 * solver's reservation manager counts them before the solve (`remainingOf`: the smallest count across NodePools).
 */
export function reservationCounts(ks: KeySpace, remainingOf: (id: string) => number): Int32Array {
  const k = ks.index.get(RESERVATION_ID_LABEL);
  const ids = k === undefined ? [] : ks.values[k]!;
  return Int32Array.from(ids, remainingOf);
}
