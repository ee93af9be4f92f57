// Karpenter scheduling acceptance: Reserved Instance Types (docs/karpenter/test-cases.md §11.14, docs/karpenter/scheduling.md §2.15).
// Fixture from the catalog heading: types large (6 CPU), medium (3 CPU) and small (2 CPU) with the fake provider's
// default offerings; medium and small each add one reserved offering in test-zone-1, id r-<name>, at 1/100000 of
// their price, one instance each. The NodePool allows capacity types spot, on-demand and reserved (§0.2).
// The harness launches each NodeClaim the way Karpenter's fake cloud provider does: cheapest option, a reserved
// offering first, which takes one instance of the reservation (an exhausted reservation's offering becomes
// unavailable). Pods of earlier passes are passed again, as Karpenter's tests call ExpectProvisioned with all of
// them. Where the catalog's one-line summary leaves the fixture open (which types carry a reservation in a case),
// the case states the fixture it uses.
import { describe, expect, it } from 'vitest';
import type { InstanceType, Offering, Pod } from '../../../engine/domain/types.ts';
import { pod, pods } from '../../fixtures/builders.ts';
import { fakeDefaultOfferings, fakeInstanceType, fakeOffering, fakePrice } from '../../fixtures/instancetypes.ts';
import {
  CAPACITY_TYPE,
  Cluster,
  eachSolver,
  HOSTNAME,
  INSTANCE_TYPE,
  RESERVATION_ID,
  req,
  suitePool,
  type Pass,
} from './harness.ts';

const Gi = 1024 ** 3;
const NODEPOOL = 'karpenter.sh/nodepool';
const sizes = { large: 6000, medium: 3000, small: 2000 } as const;
type Size = keyof typeof sizes;

/** A type of the fixture; `reservations` adds reserved offerings in test-zone-1 at 1/100000 of the type's price. */
function fixtureType(size: Size, reservations: ReadonlyArray<{ id: string; capacity: number }> = []): InstanceType {
  const resources = { cpu: sizes[size], memory: 8 * Gi, pods: 10 };
  const price = fakePrice(resources);
  const reserved: Offering[] = reservations.map((r) =>
    fakeOffering({
      zone: 'test-zone-1',
      capacityType: 'reserved',
      price: price / 100000,
      reservationId: r.id,
      reservationCapacity: r.capacity,
    }),
  );
  return fakeInstanceType({ name: size, resources, offerings: [...fakeDefaultOfferings(price), ...reserved] });
}

/** The catalog's fixture: medium and small with one reserved instance each. */
const catalogTypes = (): InstanceType[] => [
  fixtureType('large'),
  fixtureType('medium', [{ id: 'r-medium', capacity: 1 }]),
  fixtureType('small', [{ id: 'r-small', capacity: 1 }]),
];
/** Only small carries a reservation (r-small, one instance). */
const smallReservedTypes = (id = 'r-small', capacity = 1): InstanceType[] => [
  fixtureType('large'),
  fixtureType('medium'),
  fixtureType('small', [{ id, capacity }]),
];

const allCapacityTypes = [req(CAPACITY_TYPE, 'In', 'spot', 'on-demand', 'reserved')];
const pool = (name = 'default', weight = 0) => suitePool({ name, weight, requirements: allCapacityTypes });

/** The nodes a pass created, as "type/capacity-type/reservation" (reservation '-' when none), with their pods. */
function launched(c: Cluster, pass: Pass): Array<{ node: string; pods: string[] }> {
  return pass.created.map((n) => ({
    node: `${n.labels[INSTANCE_TYPE]}/${n.labels[CAPACITY_TYPE]}/${n.labels[RESERVATION_ID] ?? '-'}`,
    pods: c
      .node(n.name)!
      .pods.map((p) => p.name)
      .sort(),
  }));
}

const names = (ps: readonly Pod[]) => ps.map((p) => p.name).sort();
/** A pass over the pods not yet bound (Karpenter's tests pass them all; bound ones are no longer pending there). */
const again = (c: Cluster, ps: readonly Pod[]) => c.provision(ps.filter((p) => !c.scheduled(p)));

eachSolver((s) => {
  describe('Reserved Instance Types', () => {
    it('no fallback while reserved is available', () => {
      const c = new Cluster(s, { nodePools: [pool()], instanceTypes: catalogTypes() });
      const ps = pods(3, { cpu: '1800m' });
      const p1 = c.provision(ps);
      expect(launched(c, p1)).toEqual([{ node: 'small/reserved/r-small', pods: names(ps.slice(0, 1)) }]);
      // The NodeClaim held both reservations the first pod could use; the other two pods waited for them.
      const claim = p1.plan.newNodeClaims[0]!;
      expect(claim.requirements).toContainEqual({ key: CAPACITY_TYPE, operator: 'In', values: ['reserved'] });
      expect(new Set(claim.requirements.find((r) => r.key === RESERVATION_ID)!.values)).toEqual(
        new Set(['r-medium', 'r-small']),
      );
      expect(p1.plan.unschedulable.map((e) => e.uid).sort()).toEqual([ps[1]!.uid, ps[2]!.uid]);
      expect(p1.plan.unschedulable.every((e) => e.reservedOffering === true)).toBe(true);
      const p2 = again(c, ps);
      expect(launched(c, p2)).toEqual([{ node: 'medium/reserved/r-medium', pods: names(ps.slice(1, 2)) }]);
      const p3 = again(c, ps);
      expect(launched(c, p3)).toHaveLength(1);
      expect(launched(c, p3)[0]!.node).toMatch(/^small\/(spot|on-demand)\/-$/);
      expect(p3.plan.unschedulable).toEqual([]);
    });

    it('reservation shared across nodepools', () => {
      // Both pools see the same reservation (only small carries it); the pods are pinned one per pool and keep
      // apart by hostname anti-affinity.
      const types = smallReservedTypes();
      const c = new Cluster(s, { nodePools: [pool('np-1'), pool('np-2')], instanceTypes: types });
      const anti = {
        podAntiAffinity: { required: [{ labelSelector: { matchLabels: { app: 'r' } }, topologyKey: HOSTNAME }] },
      };
      const a = pod({
        name: 'a',
        cpu: '1800m',
        labels: { app: 'r' },
        nodeSelector: { [NODEPOOL]: 'np-1' },
        affinity: anti,
      });
      const b = pod({
        name: 'b',
        cpu: '1800m',
        labels: { app: 'r' },
        nodeSelector: { [NODEPOOL]: 'np-2' },
        affinity: anti,
      });
      const p1 = c.provision([a, b]);
      expect(launched(c, p1)).toEqual([{ node: 'small/reserved/r-small', pods: ['a'] }]);
      expect(p1.plan.unschedulable.map((e) => e.uid)).toEqual([b.uid]);
      const p2 = again(c, [a, b]);
      expect(launched(c, p2)).toHaveLength(1);
      expect(launched(c, p2)[0]!.pods).toEqual(['b']);
      expect(launched(c, p2)[0]!.node).toMatch(/^small\/(spot|on-demand)\/-$/);
    });

    it('distinct reservations per nodepool for the same instance pool', () => {
      const c = new Cluster(s, {
        nodePools: [pool('np-1'), pool('np-2')],
        instanceTypesByPool: { 'np-1': smallReservedTypes('r-np-1'), 'np-2': smallReservedTypes('r-np-2') },
      });
      const a = pod({ name: 'a', cpu: '1800m', nodeSelector: { [NODEPOOL]: 'np-1' } });
      const b = pod({ name: 'b', cpu: '1800m', nodeSelector: { [NODEPOOL]: 'np-2' } });
      const p1 = c.provision([a, b]);
      expect(launched(c, p1).sort((x, y) => (x.pods[0]! < y.pods[0]! ? -1 : 1))).toEqual([
        { node: 'small/reserved/r-np-1', pods: ['a'] },
        { node: 'small/reserved/r-np-2', pods: ['b'] },
      ]);
    });

    it('multiple reservations for the same pool', () => {
      // small carries r-small (one instance) and r-small-extra (two); the pods ask for small.
      const types = [
        fixtureType('large'),
        fixtureType('medium'),
        fixtureType('small', [
          { id: 'r-small', capacity: 1 },
          { id: 'r-small-extra', capacity: 2 },
        ]),
      ];
      const c = new Cluster(s, { nodePools: [pool()], instanceTypes: types });
      const ps = pods(4, { cpu: '1800m', nodeSelector: { [INSTANCE_TYPE]: 'small' } });
      const p1 = c.provision(ps);
      expect(
        launched(c, p1)
          .map((n) => n.node)
          .sort(),
      ).toEqual(['small/reserved/r-small', 'small/reserved/r-small-extra']);
      const p2 = again(c, ps);
      expect(launched(c, p2).map((n) => n.node)).toEqual(['small/reserved/r-small-extra']);
      const p3 = again(c, ps);
      expect(launched(c, p3)).toHaveLength(1);
      expect(launched(c, p3)[0]!.node).toMatch(/^small\/(spot|on-demand)\/-$/);
      // No plan ever asked for more instances of a reservation than it had.
      for (const p of [p1, p2, p3]) {
        const held = p.plan.newNodeClaims.flatMap((n) =>
          n.requirements.filter((r) => r.key === RESERVATION_ID).flatMap((r) => r.values),
        );
        expect(held.filter((id) => id === 'r-small').length).toBeLessThanOrEqual(1);
      }
    });

    it('no fallback to a lower-weight NodePool while a reserved offering exists', () => {
      // np-primary (weight 100) has small with r-small; np-fallback (weight 10) has no reservations.
      const c = new Cluster(s, {
        nodePools: [pool('np-primary', 100), pool('np-fallback', 10)],
        instanceTypesByPool: {
          'np-primary': smallReservedTypes(),
          'np-fallback': [fixtureType('large'), fixtureType('medium'), fixtureType('small')],
        },
      });
      const ps = pods(2, { cpu: '1800m' });
      const p1 = c.provision(ps);
      expect(launched(c, p1)).toEqual([{ node: 'small/reserved/r-small', pods: names(ps.slice(0, 1)) }]);
      expect(p1.plan.newNodeClaims.map((n) => n.nodePool)).toEqual(['np-primary']);
      expect(p1.plan.unschedulable.map((e) => e.uid)).toEqual([ps[1]!.uid]);
      const p2 = again(c, ps);
      expect(p2.plan.newNodeClaims.map((n) => n.nodePool)).toEqual(['np-primary']);
      expect(launched(c, p2)[0]!.node).toMatch(/^small\/(spot|on-demand)\/-$/);
    });

    it('no preference relaxation on a reserved-offering error', () => {
      // np-2 (higher weight, no reservations) would take the pods once their preference for np-1 is relaxed;
      // np-1 has small with r-small.
      const c = new Cluster(s, {
        nodePools: [pool('np-2', 100), pool('np-1', 10)],
        instanceTypesByPool: {
          'np-1': smallReservedTypes(),
          'np-2': [fixtureType('large'), fixtureType('medium'), fixtureType('small')],
        },
      });
      const ps = pods(2, { cpu: '1800m', preferred: [{ weight: 1, expressions: [req(NODEPOOL, 'In', 'np-1')] }] });
      const p1 = c.provision(ps);
      expect(p1.plan.newNodeClaims.map((n) => n.nodePool)).toEqual(['np-1']);
      expect(launched(c, p1)).toEqual([{ node: 'small/reserved/r-small', pods: names(ps.slice(0, 1)) }]);
      expect(p1.plan.unschedulable.map((e) => e.uid)).toEqual([ps[1]!.uid]);
      const p2 = again(c, ps);
      expect(p2.plan.newNodeClaims.map((n) => n.nodePool)).toEqual(['np-1']);
      expect(launched(c, p2)[0]!.node).toMatch(/^small\/(spot|on-demand)\/-$/);
    });

    it('multiple pods on reserved nodes', () => {
      const c = new Cluster(s, { nodePools: [pool()], instanceTypes: catalogTypes() });
      const labels = { app: 'together' };
      const affinity = {
        podAffinity: { required: [{ labelSelector: { matchLabels: labels }, topologyKey: HOSTNAME }] },
      };
      const ps = pods(2, { cpu: '500m', labels, affinity, nodeSelector: { [CAPACITY_TYPE]: 'reserved' } });
      const p1 = c.provision(ps);
      expect(launched(c, p1)).toEqual([{ node: 'small/reserved/r-small', pods: names(ps) }]);
    });
  });
});
