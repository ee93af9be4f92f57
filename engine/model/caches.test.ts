// The caches of per-object work are explicit state: a solve given caches fills them, the next solve over the
// same objects reuses them, stats() says so, and reset() forgets.
import { describe, expect, it } from 'vitest';
import { nodePool, pods, stateNode } from '../../test/fixtures/builders.ts';
import { defaultFakeInstanceTypes, FAKE_WELL_KNOWN_LABELS } from '../../test/fixtures/instancetypes.ts';
import { DEFAULT_ENGINE_OPTIONS } from '../domain/types.ts';
import { withExtraWellKnown } from '../scheduling/labels.ts';
import { WasmSolver } from '../solver/wasm.ts';
import { ModelCaches } from './caches.ts';
import type { ProvisionInput } from './types.ts';

const its = defaultFakeInstanceTypes();

describe('ModelCaches', () => {
  it('are filled by a solve, reused by the next one over the same objects, and forgotten on reset', () => {
    const caches = new ModelCaches();
    const input: ProvisionInput = {
      nodePools: [nodePool()],
      instanceTypes: new Map([['default', its]]),
      daemonSets: [],
      options: DEFAULT_ENGINE_OPTIONS,
      nodes: [stateNode({ name: 'a', instanceType: its[0]!, zone: 'test-zone-1', capacityType: 'on-demand' })],
      pods: pods(5, { cpu: '1' }),
      wellKnownLabels: withExtraWellKnown(FAKE_WELL_KNOWN_LABELS),
      caches,
    };
    const solver = new WasmSolver({ improve: false });
    solver.solve(input);
    const first = caches.stats();
    expect(first['templates']).toEqual({ hits: 0, misses: 1 });
    expect(first['node start']).toEqual({ hits: 0, misses: 1 });
    solver.solve(input);
    const second = caches.stats();
    expect(second['templates']).toEqual({ hits: 1, misses: 1 });
    // The node's start is worked out once: the second solve over the same node list finds the node table holding it.
    expect(second['node tables']).toEqual({ hits: 1, misses: 1 });
    expect(second['node start']).toEqual({ hits: 0, misses: 1 });
    expect(second['catalog chunks']!.hits).toBe(1);
    // Five replicas are one shape: its requirements and verdict are worked out once, then found again.
    expect(first['shape requirements']).toEqual({ hits: 0, misses: 1 });
    expect(second['shape requirements']).toEqual({ hits: 1, misses: 1 });
    expect(second['pod verdicts']).toEqual({ hits: 1, misses: 1 });
    caches.reset();
    expect(caches.stats()).toEqual({});
    solver.solve(input);
    expect(caches.stats()['templates']).toEqual({ hits: 0, misses: 1 });
  });
});
