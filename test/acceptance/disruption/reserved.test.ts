// docs/karpenter/test-cases.md §5.11 Reserved Capacity (consolidation_test.go), at the engine level: reserved candidates may
// be replaced into a cheaper reservation, and on-demand or spot candidates into reserved capacity of the same
// instance type (docs/karpenter/disruption.md §2.5.3, end). Reserved offerings are priced far below the type's other offering;
// the replacement holds every reservation it could use (the simulation runs with reserved fallback allowed) and
// the price rule keeps only options whose worst reserved launch price is below the candidate's.
import { beforeEach, describe, expect, it } from 'vitest';
import type { InstanceType, Offering } from '../../../engine/domain/types.ts';
import type { Command, Decision } from '../../../engine/disruption/types.ts';
import { pod, resetIds } from '../../fixtures/builders.ts';
import {
  fakeOffering,
  firstOffering,
  leastExpensiveInstance,
  mostExpensiveInstance,
  mostExpensiveSpotInstance,
  withOfferings,
} from '../../fixtures/instancetypes.ts';
import { WasmSolver } from '../../../engine/solver/wasm.ts';
import { bigNode, env, execute, managedNodes, reconcile as reconcileWith, reference, types } from './harness.ts';

const RID = 'karpenter.k8s.aws/capacity-reservation-id';
const CT = 'karpenter.sh/capacity-type';

beforeEach(() => resetIds());

const cmd = (d: Decision): Command => {
  if (d.kind === 'noop')
    throw new Error(`expected a command: ${d.explanations.map((e) => `${e.node}: ${e.message}`).join('; ')}`);
  return d;
};

/** A reserved offering in the type's own zone at 1/10000 of its price. */
const reservedOf = (it: InstanceType, id: string, capacity = 1): Offering =>
  fakeOffering({
    zone: firstOffering(it).zone,
    capacityType: 'reserved',
    price: firstOffering(it).price / 10000,
    reservationId: id,
    reservationCapacity: capacity,
  });

/** The suite's types with reserved offerings added to some of them. */
function withReserved(add: ReadonlyMap<string, Offering>): InstanceType[] {
  return types().map((it) => (add.has(it.name) ? withOfferings(it, [...it.offerings, add.get(it.name)!]) : it));
}

// The cases run with the reference solver (the suite's) and with the wasm solver, exact and with its improvement
// phase (what the controller runs).
describe.each([
  ['reference', reference],
  ['wasm exact', new WasmSolver({ improve: false })],
  ['wasm', new WasmSolver()],
] as const)('§5.11 Reserved Capacity (%s solver)', (_, solver) => {
  const reconcile = (s: Parameters<typeof reconcileWith>[0]) => reconcileWith(s, { solver });

  it('can consolidate from one reserved offering to another', async () => {
    const most = mostExpensiveInstance(types());
    const least = leastExpensiveInstance(types());
    const its = withReserved(
      new Map([
        [most.name, reservedOf(most, 'r-most')],
        [least.name, reservedOf(least, 'r-least')],
      ]),
    );
    const node = bigNode({
      name: 'reserved-node',
      it: its.find((t) => t.name === most.name)!,
      capacityType: 'reserved',
      labels: { [RID]: 'r-most' },
      pods: [pod({ cpu: '100m' })],
    });
    const s = env({ instanceTypes: its, nodes: [node] });
    const r = await reconcile(s);
    const c = cmd(r.decision);
    expect(c.kind).toBe('replace');
    expect(c.candidates[0]!.price).toBeCloseTo(firstOffering(most).price / 10000, 12);
    const repl = c.replacements[0]!;
    expect(repl.instanceTypes.map((o) => o.name)).toEqual([least.name]);
    expect(repl.requirements).toContainEqual({ key: CT, operator: 'In', values: ['reserved'] });
    const after = managedNodes(execute(s, r.decision));
    expect(after).toHaveLength(1);
    expect(after[0]!.labels['node.kubernetes.io/instance-type']).toBe(least.name);
    expect(after[0]!.labels[CT]).toBe('reserved');
    expect(after[0]!.labels[RID]).toBe('r-least');
  });

  describe('can consolidate into reserved capacity for the same instance pool', () => {
    it.each([
      ['on-demand', () => mostExpensiveInstance(types())],
      ['spot', () => mostExpensiveSpotInstance(types())],
    ] as const)('from %s', async (capacityType, pick) => {
      const base = pick();
      expect(firstOffering(base).capacityType).toBe(capacityType);
      const its = withReserved(new Map([[base.name, reservedOf(base, 'r-pool')]]));
      const node = bigNode({
        name: 'node',
        it: its.find((t) => t.name === base.name)!,
        capacityType,
        pods: [pod({ cpu: '100m' })],
      });
      const s = env({ instanceTypes: its, nodes: [node] });
      const r = await reconcile(s);
      const c = cmd(r.decision);
      expect(c.kind).toBe('replace');
      expect(c.replacements[0]!.instanceTypes.map((o) => o.name)).toEqual([base.name]);
      expect(c.replacements[0]!.requirements).toContainEqual({ key: RID, operator: 'In', values: ['r-pool'] });
      const after = managedNodes(execute(s, r.decision));
      expect(after).toHaveLength(1);
      expect(after[0]!.labels['node.kubernetes.io/instance-type']).toBe(base.name);
      expect(after[0]!.labels[CT]).toBe('reserved');
      expect(after[0]!.labels[RID]).toBe('r-pool');
    });
  });

  it('(not in the catalog) does not replace a reserved node by one in a reservation that is no cheaper', async () => {
    // The converse of the first case: the node already runs in the cheapest reservation its pods can use.
    const least = leastExpensiveInstance(types());
    const most = mostExpensiveInstance(types());
    const its = withReserved(
      new Map([
        [least.name, reservedOf(least, 'r-least')],
        [most.name, reservedOf(most, 'r-most')],
      ]),
    );
    const node = bigNode({
      name: 'cheap-reserved',
      it: its.find((t) => t.name === least.name)!,
      capacityType: 'reserved',
      labels: { [RID]: 'r-least' },
      pods: [pod({ cpu: '100m' })],
    });
    const r = await reconcile(env({ instanceTypes: its, nodes: [node] }));
    expect(r.decision.kind).toBe('noop');
  });
});
