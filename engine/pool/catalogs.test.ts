import { describe, expect, it } from 'vitest';
import { snapshot } from '../../test/fixtures/builders.ts';
import { fakeInstanceTypes } from '../../test/fixtures/instancetypes.ts';
import type { Built } from '../whatif/build.ts';
import { TypeShipper, TypeStore } from './catalogs.ts';
import { pack, unpack } from './codec.ts';

const types = fakeInstanceTypes(30);
const built = (its = types): Built => ({
  snapshot: snapshot({ instanceTypes: its }),
  region: 'test-region',
  catalog: new Map(its.map((t) => [t.name, t])),
  warnings: [],
});

/** Through a worker's wire: the job packed and unpacked, the chunks as they are (shared memory). */
const crossing = <T>(v: T): T => unpack<T>(pack(v));

describe('what-if jobs name their instance types', () => {
  it('arrive with the same types and catalog they were built with', () => {
    const shipper = new TypeShipper();
    const store = new TypeStore();
    const b = built();
    const wire = shipper.encode(b);
    const back = store.decode(crossing(wire.built), wire.chunks);
    expect(back.catalog).toEqual(b.catalog);
    expect(back.snapshot.instanceTypes).toEqual(b.snapshot.instanceTypes);
    expect({ ...back.snapshot, instanceTypes: undefined }).toEqual({ ...b.snapshot, instanceTypes: undefined });
    // one object per type, shared by a pool's list and the catalog
    const first = back.snapshot.instanceTypes.values().next().value![0]!;
    expect(back.catalog.get(first.name)).toBe(first);
  });

  it('pack each type once per engine, and a worker hands every job the same objects', () => {
    const shipper = new TypeShipper();
    const store = new TypeStore();
    const a = shipper.encode(built());
    const b = shipper.encode(built());
    expect(b.chunks).toEqual(a.chunks);
    expect(b.chunks[0]!.bytes).toBe(a.chunks[0]!.bytes);
    // a job with a type not met before carries a second chunk holding only it
    const more = fakeInstanceTypes(31).slice(30);
    const c = shipper.encode(built([...types, ...more]));
    const typeChunks = c.chunks.filter((k) => !k.list);
    expect(typeChunks.length).toBe(2);
    expect(typeChunks[0]).toBe(a.chunks[0]);
    expect(unpack<unknown[]>(new Uint8Array(typeChunks[1]!.bytes).slice().buffer)).toHaveLength(1);
    const one = store.decode(crossing(a.built), a.chunks);
    const two = store.decode(crossing(b.built), b.chunks);
    expect(two.catalog.get(types[3]!.name)).toBe(one.catalog.get(types[3]!.name));
    expect(store.decode(crossing(c.built), c.chunks).catalog.get(more[0]!.name)).toEqual(more[0]);
  });

  it('ship each list of types once, and a worker hands every job the same lists and catalog', () => {
    const shipper = new TypeShipper();
    const store = new TypeStore();
    // Two jobs built apart: equal lists and catalogs, not the same objects.
    const a = shipper.encode(built([...types]));
    const b = shipper.encode(built([...types]));
    expect(b.built.snapshot.instanceTypes).toEqual(a.built.snapshot.instanceTypes);
    expect(typeof a.built.catalog).toBe('number');
    expect(b.built.catalog).toBe(a.built.catalog);
    // The types' chunk, then the one list (the NodePool's list and the catalog's hold the same types in order).
    expect(a.chunks.map((c) => c.list ?? false)).toEqual([false, true]);
    const one = store.decode(crossing(a.built), a.chunks);
    const two = store.decode(crossing(b.built), b.chunks);
    expect(two.catalog).toBe(one.catalog);
    const [pool] = [...one.snapshot.instanceTypes.keys()];
    expect(two.snapshot.instanceTypes.get(pool!)).toBe(one.snapshot.instanceTypes.get(pool!));
    // A different list (reordered) is a list of its own.
    const c = shipper.encode(built([...types].reverse()));
    expect(c.built.catalog).not.toBe(a.built.catalog);
    expect([...store.decode(crossing(c.built), c.chunks).catalog.keys()]).toEqual(
      [...types].reverse().map((t) => t.name),
    );
  });

  it('carries a catalog not keyed by type name entry by entry', () => {
    const b = built();
    const odd: Built = { ...b, catalog: new Map([['alias', types[2]!], ...b.catalog]) };
    const wire = new TypeShipper().encode(odd);
    expect(Array.isArray(wire.built.catalog)).toBe(true);
    const back = new TypeStore().decode(crossing(wire.built), wire.chunks);
    expect(back.catalog).toEqual(odd.catalog);
    expect(back.catalog.get('alias')).toBe(back.catalog.get(types[2]!.name));
  });

  it('refuses a job whose types are in no chunk it carries, naming the reference', () => {
    const wire = new TypeShipper().encode(built());
    const lists = wire.chunks.filter((c) => c.list);
    expect(() => new TypeStore().decode(crossing(wire.built), [])).toThrow(/instance type list \d+ is in no chunk/);
    expect(() => new TypeStore().decode(crossing(wire.built), lists)).toThrow(/instance type 1\/0 is in no chunk/);
  });
});
