// Vector bin packing instances for `npm run bench -- packing`, generated here in the manner of the literature's
// benchmark classes (written from their published descriptions, seeded): one-dimensional uniform items
// (Falkenauer's "u" classes), one-dimensional triplets that fill every bin exactly (Falkenauer's "t" classes),
// two-dimensional items in the styles of Spieksma's and Caprara and Toth's classes (independent, positively and
// negatively correlated dimensions, large items), two-dimensional triplets, and three dimensions. A bin is one
// instance type of the bin's capacity at $1/h in a custom catalog (engine/catalog/custom.ts); an item is a pod
// requesting its sizes: cpu in millicores for the first dimension, memory in MiB for the second, and an extended
// resource for the third. So the cost of a plan in $/h is its number of bins.
import { customInstanceTypes, DEFAULT_ENGINE_OPTIONS, type Pod, type ProvisionInput } from '../../engine/index.ts';
import { nodePool, pod } from '../../test/fixtures/builders.ts';
import { mulberry32, type Rng } from './random.ts';

const DIM3 = 'example.com/dim3';
type Item = readonly number[];

export interface PackingInstance {
  readonly name: string;
  readonly family: string;
  readonly dims: number;
  readonly capacity: number;
  readonly items: readonly Item[];
  /** The optimum, where the construction fixes it (triplets fill every bin exactly). */
  readonly optimum?: number;
}

const int = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));

/** Falkenauer-style triplets of capacity W: three items in (W/4, W/2) summing to exactly W, per bin. */
function triplets(rng: Rng, bins: number, W: number): number[] {
  const out: number[] = [];
  for (let b = 0; b < bins; b++) {
    const a = int(rng, Math.ceil(0.38 * W), Math.floor(0.49 * W));
    const c = int(rng, Math.ceil(0.25 * W) + 1, Math.floor((W - a) / 2));
    out.push(a, c, W - a - c);
  }
  return out;
}

/** Shuffled in place, seeded (Fisher-Yates), so triplets do not arrive bin by bin. */
function shuffle<T>(rng: Rng, xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

type Family = {
  name: string;
  dims: number;
  capacity: number;
  make: (rng: Rng, n: number) => { items: Item[]; optimum?: number };
};

const FAMILIES: readonly Family[] = [
  {
    name: 'uniform-1d',
    dims: 1,
    capacity: 150,
    make: (rng, n) => ({ items: Array.from({ length: n }, () => [int(rng, 20, 100)]) }),
  },
  {
    name: 'triplets-1d',
    dims: 1,
    capacity: 1000,
    make: (rng, n) => ({
      items: shuffle(
        rng,
        triplets(rng, n / 3, 1000).map((s) => [s]),
      ),
      optimum: n / 3,
    }),
  },
  {
    name: 'uniform-2d',
    dims: 2,
    capacity: 150,
    make: (rng, n) => ({ items: Array.from({ length: n }, () => [int(rng, 20, 100), int(rng, 20, 100)]) }),
  },
  {
    name: 'correlated-2d',
    dims: 2,
    capacity: 150,
    make: (rng, n) => ({
      items: Array.from({ length: n }, () => {
        const a = int(rng, 20, 100);
        return [a, Math.max(1, a + int(rng, -10, 10))];
      }),
    }),
  },
  {
    name: 'anticorrelated-2d',
    dims: 2,
    capacity: 150,
    make: (rng, n) => ({
      items: Array.from({ length: n }, () => {
        const a = int(rng, 20, 100);
        return [a, Math.max(1, 120 - a + int(rng, -10, 10))];
      }),
    }),
  },
  {
    name: 'large-2d',
    dims: 2,
    capacity: 1000,
    make: (rng, n) => ({ items: Array.from({ length: n }, () => [int(rng, 250, 500), int(rng, 250, 500)]) }),
  },
  {
    name: 'triplets-2d',
    dims: 2,
    capacity: 1000,
    make: (rng, n) => {
      const a = triplets(rng, n / 3, 1000);
      const b = triplets(rng, n / 3, 1000);
      return {
        items: shuffle(
          rng,
          a.map((s, i) => [s, b[i]!]),
        ),
        optimum: n / 3,
      };
    },
  },
  {
    name: 'uniform-3d',
    dims: 3,
    capacity: 100,
    make: (rng, n) => ({
      items: Array.from({ length: n }, () => [int(rng, 10, 50), int(rng, 10, 50), int(rng, 10, 50)]),
    }),
  },
];

/** The instances of one run: every family at each size, with `seeds` seeds each. */
export function packingInstances(sizes: readonly number[], seeds: number): PackingInstance[] {
  const out: PackingInstance[] = [];
  for (const f of FAMILIES) {
    for (const n of sizes) {
      const count = f.name.startsWith('triplets') ? Math.round(n / 3) * 3 : n;
      for (let s = 1; s <= seeds; s++) {
        const { items, optimum } = f.make(mulberry32(1000 * count + s), count);
        out.push({
          name: `${f.name}-${count}-s${s}`,
          family: f.name,
          dims: f.dims,
          capacity: f.capacity,
          items,
          ...(optimum !== undefined ? { optimum } : {}),
        });
      }
    }
  }
  return out;
}

/** One bin type of the instance's capacity at $1/h, and one pod per item. */
export function packingInput(inst: PackingInstance): ProvisionInput {
  const W = inst.capacity;
  const [bin] = customInstanceTypes([
    {
      name: 'bin',
      capacity: { cpu: `${W}m`, memory: `${W}Mi`, pods: 100000, ...(inst.dims >= 3 ? { [DIM3]: W } : {}) },
      offerings: [{ zone: 'zone-a', capacityType: 'on-demand', price: 1 }],
    },
  ]);
  const pool = nodePool({ name: 'bins' });
  const pods: Pod[] = inst.items.map((it, i) =>
    pod({
      name: `item-${i}`,
      cpu: `${it[0]}m`,
      memory: `${it[1] ?? 0}Mi`,
      ...(inst.dims >= 3 ? { resources: { [DIM3]: String(it[2]) } } : {}),
      createdAt: i,
    }),
  );
  return {
    nodePools: [pool],
    instanceTypes: new Map([[pool.name, [bin!]]]),
    nodes: [],
    pods,
    daemonSets: [],
    options: DEFAULT_ENGINE_OPTIONS,
  };
}
