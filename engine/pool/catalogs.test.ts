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
    expect(c.chunks.map((k) => k.id)).toEqual([a.chunks[0]!.id, a.chunks[0]!.id + 1]);
    const one = store.decode(crossing(a.built), a.chunks);
    const two = store.decode(crossing(b.built), b.chunks);
    expect(two.catalog.get(types[3]!.name)).toBe(one.catalog.get(types[3]!.name));
    expect(store.decode(crossing(c.built), c.chunks).catalog.get(more[0]!.name)).toEqual(more[0]);
  });

  it('refuses a job whose types are in no chunk it carries, naming the reference', () => {
    const wire = new TypeShipper().encode(built());
    expect(() => new TypeStore().decode(crossing(wire.built), [])).toThrow(/instance type 1\/0 is in no chunk/);
  });
});
