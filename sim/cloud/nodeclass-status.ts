// The simulator's node-class resolution: each EC2NodeClass against the simulated account (network.ts) the
// way the AWS provider resolves it against EC2, IAM and SSM. Status: subnets (and so zones), security
// groups, AMIs, capacity reservations (gate ReservedCapacity), instance profile, and the AMIsReady /
// CapacityReservationsReady / SubnetsReady / SecurityGroupsReady / InstanceProfileReady / ValidationSucceeded
// conditions rolled up into Ready. A selector that matches
// nothing leaves the class not Ready, which is what a user sees when subnets are not tagged (guide §13).
import type { EC2NodeClass } from '../../engine/index.ts';
import { toKubeTime } from '../../controller/operator/clock.ts';
import { withCondition, type KubeCondition } from '../../controller/operator/conditions.ts';
import { stableHash } from '../../controller/operator/hash.ts';
import type { Clock } from '../../controller/operator/clock.ts';
import type { NodeClassProvider, NodeClassStatusResult } from '../../controller/cloudprovider/types.ts';
import {
  selectCapacityReservations,
  selectSecurityGroups,
  selectSubnets,
  simImageId,
  type SimNetwork,
} from './network.ts';

/** The engine's conditions (times in ms) in the API server's shape. */
function kubeConditions(nc: EC2NodeClass): KubeCondition[] {
  return nc.status.conditions.map((c) => ({
    type: c.type,
    status: c.status,
    reason: c.reason ?? '',
    message: c.message ?? '',
    ...(c.lastTransitionTime !== undefined ? { lastTransitionTime: toKubeTime(c.lastTransitionTime) } : {}),
  }));
}

type Reservations = ReturnType<typeof selectCapacityReservations>;

/** What the selectors found, for the conditions. */
interface Selected {
  readonly subnets: number;
  readonly securityGroups: number;
  /** Reservation ids that match nothing (undefined: the ReservedCapacity gate is off). */
  readonly unknownReservations: readonly string[] | undefined;
}

/** The class's conditions: each dependency True or False with its reason, rolled up into Ready. */
function nodeClassConditions(network: SimNetwork, nc: EC2NodeClass, now: number, found: Selected): KubeCondition[] {
  const g = nc.generation !== undefined ? { generation: nc.generation } : {};
  let conds = kubeConditions(nc);
  const set = (type: string, ok: boolean, reason: string, message: string): void => {
    conds = withCondition(conds, type, ok ? 'True' : 'False', now, {
      reason: ok ? type : reason,
      message: ok ? '' : message,
      ...g,
    });
  };
  set(
    'SubnetsReady',
    found.subnets > 0,
    'SubnetsNotFound',
    `SubnetSelector did not match any subnets in ${network.region} (the simulated subnets are tagged karpenter.sh/discovery=${network.clusterName}, network-type=private)`,
  );
  set(
    'SecurityGroupsReady',
    found.securityGroups > 0,
    'SecurityGroupsNotFound',
    'SecurityGroupSelector did not match any SecurityGroups',
  );
  set('AMIsReady', true, 'AMINotFound', '');
  const unknown = found.unknownReservations;
  if (unknown)
    set(
      'CapacityReservationsReady',
      unknown.length === 0,
      'CapacityReservationNotFound',
      `EC2NodeClass ${nc.name}: ${unknown.join('; ')}`,
    );
  set(
    'InstanceProfileReady',
    Boolean(nc.spec.role || nc.spec.instanceProfile),
    'InstanceProfileNotFound',
    'neither role nor instanceProfile is set',
  );
  set('ValidationSucceeded', true, 'ValidationFailed', '');
  const failing = conds.filter((c) => c.type !== 'Ready' && c.status !== 'True').map((c) => c.type);
  return withCondition(conds, 'Ready', failing.length ? 'False' : 'True', now, {
    reason: failing.length ? 'UnhealthyDependents' : 'Ready',
    message: failing.length ? `${failing.join(', ')} not True` : '',
    ...g,
  });
}

/** One simulated image per architecture the family runs on. */
function simAmis(nc: EC2NodeClass): Array<Record<string, unknown>> {
  const arches = nc.amiFamily.startsWith('Windows') ? ['amd64'] : ['amd64', 'arm64'];
  return arches.map((arch) => ({
    id: simImageId(nc.amiFamily, arch),
    name: `${nc.amiFamily.toLowerCase()}-${arch}-sim`,
    requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: [arch] }],
  }));
}

/** The reservations the class selects, as status lists them (none while one of its ids is unknown). */
function reservationStatus(reserved: Reservations): Array<Record<string, unknown>> {
  if (reserved.unknown.length) return [];
  return reserved.reservations.map((r) => ({
    id: r.id,
    availabilityZone: r.zone,
    instanceType: r.instanceType,
    ownerID: r.ownerID,
    instanceMatchCriteria: r.instanceMatchCriteria,
    reservationType: r.reservationType,
    interruptible: false,
    state: 'active',
  }));
}

/** The instance profile: one named after the cluster and role, or the one the class names. */
function instanceProfile(network: SimNetwork, nc: EC2NodeClass): { instanceProfile?: string } {
  if (nc.spec.role)
    return { instanceProfile: `${network.clusterName}_${stableHash([network.region, nc.name, nc.spec.role])}` };
  return nc.spec.instanceProfile ? { instanceProfile: nc.spec.instanceProfile } : {};
}

function simNodeClassStatus(
  network: SimNetwork,
  nc: EC2NodeClass,
  now: number,
  reservedCapacity = true,
): Record<string, unknown> {
  const subnets = selectSubnets(network, nc);
  const groups = selectSecurityGroups(network, nc);
  const reserved: Reservations = reservedCapacity
    ? selectCapacityReservations(network, nc)
    : { reservations: [], unknown: [] };
  const conditions = nodeClassConditions(network, nc, now, {
    subnets: subnets.length,
    securityGroups: groups.length,
    unknownReservations: reservedCapacity ? reserved.unknown : undefined,
  });
  return {
    subnets: subnets.map((s) => ({ id: s.id, zone: s.zone, zoneID: s.zoneID })),
    securityGroups: groups.map((s) => ({ id: s.id, name: s.name })),
    amis: simAmis(nc),
    capacityReservations: reservationStatus(reserved),
    ...instanceProfile(network, nc),
    conditions,
  };
}

/** The simulated account as the seam's NodeClassProvider (nothing to clean up on deletion). */
export function simNodeClasses(
  network: SimNetwork,
  clock: Pick<Clock, 'now'>,
  reservedCapacity = true,
): NodeClassProvider {
  return {
    resolve: async (nc): Promise<NodeClassStatusResult> => ({
      status: simNodeClassStatus(network, nc, clock.now(), reservedCapacity),
      annotations: {},
      requeueAfterMs: 5 * 60_000,
      errors: [],
    }),
    finalize: async () => undefined,
  };
}
