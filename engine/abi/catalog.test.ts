// The per-template cache of encoded instance types and offerings (catalog.ts) must never change a block:
// blocks encoded with it are byte-identical to blocks encoded without it, across solves that share templates
// but not key spaces; and a catalog with new prices or availability makes a new plan.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ENGINE_OPTIONS, type DaemonSet, type InstanceType, type NodePool } from '../domain/types.ts';
import { withExtraWellKnown } from '../scheduling/labels.ts';
import type { ProvisionInput } from '../model/types.ts';
import { WasmSolver } from '../solver/wasm.ts';
import { nodePool, pod, pods } from '../../test/fixtures/builders.ts';
import {
  defaultFakeInstanceTypes,
  FAKE_WELL_KNOWN_LABELS,
  fakeInstanceType,
  withAvailability,
  withPrices,
} from '../../test/fixtures/instancetypes.ts';
import { problemArb } from '../../test/solver/arbitraries.ts';
import { ModelCaches } from '../model/caches.ts';
import { encodeProvision } from './encode.ts';

const wellKnownLabels = withExtraWellKnown(FAKE_WELL_KNOWN_LABELS);
const solver = new WasmSolver({ build: 'release', improve: false });

const caches = new ModelCaches();

function sameBlocks(input: ProvisionInput): void {
  const cached = encodeProvision({ ...input, caches }, { improve: false, catalogCache: true }).block;
  const fresh = encodeProvision({ ...input, caches: new ModelCaches() }, { improve: false, catalogCache: false }).block;
  expect(Buffer.from(cached).equals(Buffer.from(fresh))).toBe(true);
}

describe('the encoded catalog cache', () => {
  it('encodes byte-identical blocks with and without the cache over solves sharing templates', () => {
    // Fixed NodePools, instance types, daemonsets and well-known labels (so templates are shared and the
    // cache is hit); random pods, nodes and options (so key spaces and resource dimensions vary).
    const its = defaultFakeInstanceTypes();
    const pools: NodePool[] = [
      nodePool({ name: 'a' }),
      nodePool({ name: 'b', requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] }),
    ];
    const daemonSets: readonly DaemonSet[][] = [
      [],
      [{ namespace: 'kube-system', name: 'ds', pod: pod({ name: 'ds', cpu: '100m', memory: '64Mi' }) }],
    ];
    const before = caches.stats()['catalog chunks'] ?? { hits: 0, misses: 0 };
    fc.assert(
      fc.property(problemArb, fc.integer({ min: 0, max: 1 }), fc.integer({ min: 1, max: 2 }), (p, ds, np) => {
        const input: ProvisionInput = {
          ...p,
          nodePools: pools.slice(0, np),
          instanceTypes: new Map(pools.map((x) => [x.name, its])),
          daemonSets: daemonSets[ds]!,
          wellKnownLabels,
        };
        sameBlocks(input);
        // The second encode of the same input is a hit for every template.
        sameBlocks(input);
      }),
      { numRuns: 120 },
    );
    const after = caches.stats()['catalog chunks']!;
    expect(after.hits).toBeGreaterThan(before.hits + 120);
    expect(after.misses).toBeGreaterThan(before.misses);
  });

  it("re-encodes when a pod adds a label value that renumbers the instance types' values", () => {
    const its = defaultFakeInstanceTypes();
    const pool = nodePool();
    const base: Omit<ProvisionInput, 'pods'> = {
      nodePools: [pool],
      instanceTypes: new Map([[pool.name, its]]),
      nodes: [],
      daemonSets: [],
      options: DEFAULT_ENGINE_OPTIONS,
      wellKnownLabels,
    };
    const plain = { ...base, pods: pods(3, { cpu: '1', memory: '1Gi' }) };
    // 'test-zone-0' sorts before the catalog's zones: every offering's zone index moves by one.
    const zoned = {
      ...base,
      pods: [
        ...plain.pods,
        pod({ name: 'z', cpu: '1', memory: '1Gi', nodeSelector: { 'topology.kubernetes.io/zone': 'test-zone-0' } }),
      ],
    };
    for (const input of [plain, zoned, plain, zoned]) sameBlocks(input);
    const plan = solver.solve(zoned);
    expect(plan.unschedulable.map((e) => e.uid)).toEqual([zoned.pods[3]!.uid]);
    expect(plan.newNodeClaims.length).toBeGreaterThan(0);
  });

  it('makes a new plan when prices or availability change between two solves', () => {
    const pool = nodePool();
    const cheap = fakeInstanceType({ name: 'cheap', price: 1 });
    const dear = fakeInstanceType({ name: 'dear', price: 2 });
    const solve = (its: InstanceType[]) => {
      const plan = solver.solve({
        nodePools: [pool],
        instanceTypes: new Map([[pool.name, its]]),
        nodes: [],
        daemonSets: [],
        options: DEFAULT_ENGINE_OPTIONS,
        wellKnownLabels,
        pods: pods(1, { cpu: '1', memory: '1Gi' }),
      });
      return { first: plan.newNodeClaims[0]?.instanceTypes[0]?.name, price: plan.costPerHour };
    };
    expect(solve([cheap, dear])).toEqual({ first: 'cheap', price: 1 });
    // Same NodePool and daemonsets, the same instance types re-priced: the cheap one is now the dear one.
    expect(solve([withPrices(cheap, 3), dear])).toEqual({ first: 'dear', price: 2 });
    // The cheap one's offerings all unavailable.
    expect(solve([withAvailability(cheap, false), dear])).toEqual({ first: 'dear', price: 2 });
    // One offering cheaper than the rest: the plan's price is that offering's.
    expect(
      solve([withPrices(cheap, (o) => (o.zone === 'test-zone-2' && o.capacityType === 'spot' ? 0.25 : 1)), dear]).price,
    ).toBe(0.25);
    expect(solve([cheap, dear])).toEqual({ first: 'cheap', price: 1 });
  });
});
