// Capacity reservations in the simulated cloud, end to end through the controller: an EC2NodeClass selects a
// reservation of the simulated account, its status lists it, and the provisioner's Strict rule plays out —
// the first pod launches into the reservation while it has an instance free, the second waits for the next
// round (it may not relax while the reservation is held) and then goes on-demand; terminating the reserved
// node gives the reservation its instance back, and the next pod takes it.
import { afterEach, describe, expect, it } from 'vitest';
import {
  deployment,
  guide,
  label,
  nodeClaims,
  nodes,
  running,
  scale,
  simulation,
  type Simulation,
} from '../support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const RID = 'cr-0123456789abcdef0';
const TYPE = 'm7i.large';
const withReservation = (yaml: string, terms = `    - id: ${RID}`) =>
  yaml
    .replace(
      '  tags:\n    Environment: production',
      `  capacityReservationSelectorTerms:\n${terms}\n  tags:\n    Environment: production`,
    )
    .replace("values: ['on-demand']", "values: ['reserved', 'on-demand']");
const condition = (o: object, type: string) =>
  (
    (
      (o as { status?: unknown }).status as {
        conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
      }
    ).conditions ?? []
  ).find((c) => c.type === type);

describe('capacity reservations in the simulated cloud', () => {
  it('launches into the reservation while it has room, falls back to on-demand after a round, and gets the instance back on termination', async () => {
    sim = await simulation({
      capacityReservations: [{ id: RID, instanceType: TYPE, zone: 'ap-northeast-2a', count: 1 }],
    });
    await sim.apply(withReservation(guide('guide-07.yaml')));
    const nc = sim.cluster.store.get('ec2nodeclasses.karpenter.k8s.aws', '', 'production')!;
    expect(condition(nc, 'CapacityReservationsReady')?.status).toBe('True');
    expect(condition(nc, 'Ready')?.status).toBe('True');
    expect(
      (nc.status as { capacityReservations: Array<{ id: string; instanceType: string }> }).capacityReservations.map(
        (r) => `${r.id}/${r.instanceType}`,
      ),
    ).toEqual([`${RID}/${TYPE}`]);

    await sim.apply(deployment('web', 2, { onePerNode: true }));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 2, 300_000, 'web running on two nodes');
    const launched = sim.provider.all().map((i) => i.instance);
    expect(launched.map((i) => i.capacityType)).toEqual(['reserved', 'on-demand']);
    expect(launched[0]).toMatchObject({ instanceType: TYPE, zone: 'ap-northeast-2a' });
    // Not planned together: the on-demand NodeClaim comes from a later provisioning round.
    expect(launched[1]!.launchTime).toBeGreaterThan(launched[0]!.launchTime);
    const reservedNode = nodes(sim).find((n) => label(n, 'karpenter.sh/capacity-type') === 'reserved')!;
    expect(label(reservedNode, 'karpenter.k8s.aws/capacity-reservation-id')).toBe(RID);
    expect(label(reservedNode, 'karpenter.k8s.aws/capacity-reservation-type')).toBe('default');
    const onDemand = nodeClaims(sim).find((c) => label(c, 'karpenter.sh/capacity-type') === 'on-demand')!;
    expect(label(onDemand, 'karpenter.k8s.aws/capacity-reservation-id')).toBeUndefined();
    expect(sim.network.capacityReservations[0]!.available).toBe(0);

    // The reserved node goes away (its evicted pod is replaced while the instance still holds the
    // reservation, so on-demand); once it is terminated the reservation has its instance back, and the next
    // pod takes it.
    const reservedClaim = nodeClaims(sim).find((c) => label(c, 'karpenter.sh/capacity-type') === 'reserved')!;
    sim.cluster.api.delete('nodeclaims.karpenter.sh', undefined, reservedClaim.metadata.name!);
    await sim.clock.advanceUntil(
      () => sim!.network.capacityReservations[0]!.available === 1 && running(sim!, 'web') === 2,
      300_000,
      'the reserved instance terminated',
    );
    await scale(sim, 'web', 3);
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 3, 300_000, 'a third pod running');
    const latest = sim.provider.all().at(-1)!.instance;
    expect(latest.capacityType).toBe('reserved');
    expect(latest.labels['karpenter.k8s.aws/capacity-reservation-id']).toBe(RID);
    expect(sim.network.capacityReservations[0]!.available).toBe(0);
    await scale(sim, 'web', 0);
    await sim.clock.advanceUntil(
      () => sim!.network.capacityReservations[0]!.available === 1,
      600_000,
      'the reservation free again',
    );
  });

  it('reports a reservation id the account does not have on the EC2NodeClass, naming the field', async () => {
    sim = await simulation();
    await sim.apply(withReservation(guide('guide-07.yaml')));
    const nc = sim.cluster.store.get('ec2nodeclasses.karpenter.k8s.aws', '', 'production')!;
    expect(condition(nc, 'CapacityReservationsReady')).toMatchObject({
      status: 'False',
      reason: 'CapacityReservationNotFound',
    });
    expect(condition(nc, 'CapacityReservationsReady')?.message).toBe(
      `EC2NodeClass production: spec.capacityReservationSelectorTerms[0].id: capacity reservation ${RID} does not exist (or is not shared with this account)`,
    );
    expect(condition(nc, 'Ready')?.status).toBe('False');
  });

  it('offers no reserved capacity with the ReservedCapacity gate off', async () => {
    sim = await simulation({
      capacityReservations: [{ id: RID, instanceType: TYPE, zone: 'ap-northeast-2a', count: 1 }],
      options: { 'feature-gates': 'ReservedCapacity=false' },
    });
    await sim.apply(withReservation(guide('guide-07.yaml')));
    const nc = sim.cluster.store.get('ec2nodeclasses.karpenter.k8s.aws', '', 'production')!;
    expect(condition(nc, 'CapacityReservationsReady')).toBeUndefined();
    await sim.apply(deployment('web', 1));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 1, 300_000, 'web running');
    expect(sim.provider.all().map((i) => i.instance.capacityType)).toEqual(['on-demand']);
    expect(sim.network.capacityReservations[0]!.available).toBe(1);
  });
});
