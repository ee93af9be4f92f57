// The caches of per-object work are explicit state: a solve given caches fills them, the next solve over the
// same objects reuses them, stats() says so, and reset() forgets.
import { describe, expect, it } from 'vitest';
import { nodePool, pod, pods, stateNode } from '../../test/fixtures/builders.ts';
import type { Pod } from '../domain/types.ts';
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

  // A warm model's pods of one workload share their parts (engine/cluster/intern.ts); over a disruption pass nearly
  // every pod of the cluster leads its class or shape in some simulation. What is worked out of a pod's parts is kept
  // once for them, not once per pod object.
  it('keep what a pod class, shape and verdict are once for pods with the very same parts', () => {
    const caches = new ModelCaches();
    const a = pod({ cpu: '1', labels: { app: 'web' }, nodeSelector: { 'kubernetes.io/os': 'linux' } });
    const twin = (p: Pod, name: string): Pod => ({ ...p, uid: `u-${name}`, name });
    const input = (ps: readonly Pod[]): ProvisionInput => ({
      nodePools: [nodePool()],
      instanceTypes: new Map([['default', its]]),
      daemonSets: [],
      options: DEFAULT_ENGINE_OPTIONS,
      nodes: [],
      pods: ps,
      wellKnownLabels: withExtraWellKnown(FAKE_WELL_KNOWN_LABELS),
      caches,
    });
    const solver = new WasmSolver({ improve: false });
    solver.solve(input([a]));
    // Another replica of the workload leads the next solve: its parts are a's, so it finds a's entries.
    solver.solve(input([twin(a, 'b')]));
    const st = caches.stats();
    expect(st['pod class']).toEqual({ hits: 1, misses: 1 });
    expect(st['shape requirements']).toEqual({ hits: 1, misses: 1 });
    expect(st['pod verdicts']).toEqual({ hits: 1, misses: 1 });
    // Equal content in objects of its own is another entry (parts are told apart by identity).
    solver.solve(input([pod({ cpu: '1', labels: { app: 'web' }, nodeSelector: { 'kubernetes.io/os': 'linux' } })]));
    expect(caches.stats()['shape requirements']).toEqual({ hits: 1, misses: 2 });
  });

  it('keep no relaxation chain for a pod with nothing to relax, and keep one for a pod with preferences', () => {
    const caches = new ModelCaches();
    const plain = pod({ cpu: '1' });
    const prefers = pod({
      cpu: '1',
      preferred: [{ weight: 1, expressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['z'] }] }],
    });
    const input: ProvisionInput = {
      nodePools: [nodePool()],
      instanceTypes: new Map([['default', its]]),
      daemonSets: [],
      options: DEFAULT_ENGINE_OPTIONS,
      nodes: [],
      pods: [plain, prefers],
      wellKnownLabels: withExtraWellKnown(FAKE_WELL_KNOWN_LABELS),
      caches,
    };
    const solver = new WasmSolver({ improve: false });
    solver.solve(input);
    solver.solve(input);
    // Each solve asks for both chains: only the preferring pod's was kept, so only it is found again.
    expect(caches.stats()['relaxation chains']).toEqual({ hits: 1, misses: 3 });
  });
});
