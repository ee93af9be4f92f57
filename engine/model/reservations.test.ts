import { describe, expect, it } from 'vitest';
import { fakeDefaultOfferings, fakeInstanceType, fakeOffering } from '../../test/fixtures/instancetypes.ts';
import { nodePool, pods } from '../../test/fixtures/builders.ts';
import type { InstanceType, Offering } from '../domain/types.ts';
import { DEFAULT_ENGINE_OPTIONS } from '../domain/types.ts';
import { WasmSolver } from '../solver/wasm.ts';
import { ReservationManager } from './reservations.ts';
import { solveReference } from '../solver/reference/scheduler.ts';

const typeWith = (name: string, ...extra: Offering[]): InstanceType =>
  fakeInstanceType({ name, resources: { cpu: 2000 }, offerings: [...fakeDefaultOfferings(0.2), ...extra] });
const reserved = (id: string, capacity: number, available = true) =>
  fakeOffering({
    zone: 'test-zone-1',
    capacityType: 'reserved',
    price: 0.00002,
    reservationId: id,
    reservationCapacity: capacity,
    available,
  });

describe('ReservationManager', () => {
  it('believes the smallest count when NodePools see one reservation differently', () => {
    const rm = new ReservationManager([
      [typeWith('a', reserved('r-1', 3))],
      [typeWith('a', reserved('r-1', 1)), typeWith('b', reserved('r-2', 2))],
    ]);
    expect(rm.remainingOf('r-1')).toBe(1);
    expect(rm.remainingOf('r-2')).toBe(2);
    expect(rm.remainingOf('r-unknown')).toBe(0);
  });

  it('takes one instance per newly held reservation, gives back dropped ones, and is idempotent per NodeClaim', () => {
    const rm = new ReservationManager([[typeWith('a', reserved('r-1', 1)), typeWith('b', reserved('r-2', 2))]]);
    rm.commit('h1', new Set(['r-1', 'r-2']));
    expect([rm.remainingOf('r-1'), rm.remainingOf('r-2')]).toEqual([0, 1]);
    expect(rm.canHold('h1', 'r-1')).toBe(true);
    expect(rm.canHold('h2', 'r-1')).toBe(false);
    rm.commit('h1', new Set(['r-1', 'r-2']));
    expect([rm.remainingOf('r-1'), rm.remainingOf('r-2')]).toEqual([0, 1]);
    rm.commit('h1', new Set(['r-2']));
    expect([rm.remainingOf('r-1'), rm.remainingOf('r-2')]).toEqual([1, 1]);
    expect(() => rm.commit('h2', new Set(['r-1', 'r-2']))).not.toThrow();
    expect(() => rm.commit('h3', new Set(['r-1']))).toThrow(/reservation r-1: over-reserved by NodeClaim h3/);
  });
});

describe('reserved offerings that cannot be counted', () => {
  const input = (it: InstanceType) => {
    const pool = nodePool();
    return {
      nodePools: [pool],
      instanceTypes: new Map([[pool.name, [it]]]),
      nodes: [],
      pods: pods(1, { cpu: '1' }),
      daemonSets: [],
      options: DEFAULT_ENGINE_OPTIONS,
    };
  };

  it('name the instance type and the field, in both solvers', () => {
    const noId: Offering = {
      zone: 'test-zone-1',
      capacityType: 'reserved',
      price: 0.1,
      available: true,
      reservationCapacity: 1,
    };
    const negative: Offering = {
      zone: 'test-zone-1',
      capacityType: 'reserved',
      price: 0.1,
      available: true,
      reservationId: 'r-9',
      reservationCapacity: -1,
    };
    for (const solve of [solveReference, (i: ReturnType<typeof input>) => new WasmSolver().solve(i)]) {
      expect(() => solve(input(typeWith('m5.large', noId)))).toThrow(
        'instance type m5.large: reserved offering in zone test-zone-1 has no reservationId',
      );
      expect(() => solve(input(typeWith('m5.large', negative)))).toThrow(
        'instance type m5.large: reserved offering r-9 has reservationCapacity -1 (want an integer >= 0)',
      );
    }
  });
});
