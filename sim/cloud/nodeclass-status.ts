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

function simNodeClassStatus(
  network: SimNetwork,
  nc: EC2NodeClass,
  now: number,
  reservedCapacity = true,
): Record<string, unknown> {
  const g = nc.generation !== undefined ? { generation: nc.generation } : {};
  let conds = kubeConditions(nc);
  const set = (type: string, ok: boolean, reason: string, message: string): void => {
    conds = withCondition(conds, type, ok ? 'True' : 'False', now, {
      reason: ok ? type : reason,
      message: ok ? '' : message,
      ...g,
    });
  };
  const subnets = selectSubnets(network, nc);
  const groups = selectSecurityGroups(network, nc);
  const arches = nc.amiFamily.startsWith('Windows') ? ['amd64'] : ['amd64', 'arm64'];
  const amis = arches.map((arch) => ({
    id: simImageId(nc.amiFamily, arch),
    name: `${nc.amiFamily.toLowerCase()}-${arch}-sim`,
    requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: [arch] }],
  }));
  set(
    'SubnetsReady',
    subnets.length > 0,
    'SubnetsNotFound',
    `SubnetSelector did not match any subnets in ${network.region} (the simulated subnets are tagged karpenter.sh/discovery=${network.clusterName}, network-type=private)`,
  );
  set(
    'SecurityGroupsReady',
    groups.length > 0,
    'SecurityGroupsNotFound',
    'SecurityGroupSelector did not match any SecurityGroups',
  );
  set('AMIsReady', true, 'AMINotFound', '');
  const reserved = reservedCapacity ? selectCapacityReservations(network, nc) : { reservations: [], unknown: [] };
  if (reservedCapacity)
    set(
      'CapacityReservationsReady',
      reserved.unknown.length === 0,
      'CapacityReservationNotFound',
      `EC2NodeClass ${nc.name}: ${reserved.unknown.join('; ')}`,
    );
  set(
    'InstanceProfileReady',
    Boolean(nc.spec.role || nc.spec.instanceProfile),
    'InstanceProfileNotFound',
    'neither role nor instanceProfile is set',
  );
  set('ValidationSucceeded', true, 'ValidationFailed', '');
  const failing = conds.filter((c) => c.type !== 'Ready' && c.status !== 'True').map((c) => c.type);
  conds = withCondition(conds, 'Ready', failing.length ? 'False' : 'True', now, {
    reason: failing.length ? 'UnhealthyDependents' : 'Ready',
    message: failing.length ? `${failing.join(', ')} not True` : '',
    ...g,
  });
  return {
    subnets: subnets.map((s) => ({ id: s.id, zone: s.zone, zoneID: s.zoneID })),
    securityGroups: groups.map((s) => ({ id: s.id, name: s.name })),
    amis,
    capacityReservations: reserved.unknown.length
      ? []
      : reserved.reservations.map((r) => ({
          id: r.id,
          availabilityZone: r.zone,
          instanceType: r.instanceType,
          ownerID: r.ownerID,
          instanceMatchCriteria: r.instanceMatchCriteria,
          reservationType: r.reservationType,
          interruptible: false,
          state: 'active',
        })),
    ...(nc.spec.role
      ? { instanceProfile: `${network.clusterName}_${stableHash([network.region, nc.name, nc.spec.role])}` }
      : nc.spec.instanceProfile
        ? { instanceProfile: nc.spec.instanceProfile }
        : {}),
    conditions: conds,
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
