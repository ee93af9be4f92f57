// CloudProvider.isDrifted for AWS (docs/karpenter/aws-provider.md §5 "Drift"), checks in Karpenter's order:
// 1. NodeClassDrift: the NodeClaim's static hash differs from the node class's, at the same hash version
// 2. AMIDrift: the NodeClaim's image is not the AMI its instance type maps to in status.amis
// 3. SecurityGroupDrift: the instance's groups differ from status.securityGroups
// 4. SubnetDrift: the instance's subnet is not in status.subnets
// 5. CapacityReservationDrift: the instance runs in a reservation (launched into it) that status.capacityReservations
//    no longer lists (gate ReservedCapacity on)
// Placement groups are not resolved by this provider, so that check never fires.
import { INSTANCE_TYPE_LABEL, reqs, type EC2NodeClass, type InstanceType } from '../../../engine/index.ts';
import { isNodeClaimNotFound, type DriftQuery, type DriftReason } from '../types.ts';
import { capacityTypeOf } from './instance.ts';
import { currentHash } from './hash.ts';
import type { Instances } from './instance.ts';
import { statusAmis } from './nodeclass/amis.ts';
import { NODECLASS_HASH_ANNOTATION, NODECLASS_HASH_VERSION_ANNOTATION } from './settings.ts';

interface DriftDeps {
  readonly nodeClass: (name: string) => EC2NodeClass | undefined;
  readonly instances: Pick<Instances, 'describe'>;
  readonly instanceType?: (nodeClassName: string, instanceType: string) => InstanceType | undefined;
  readonly caBundle?: string;
  /** Feature gate ReservedCapacity (default on). */
  readonly reservedCapacity?: boolean;
}

function staticDrift(q: DriftQuery, nc: EC2NodeClass, caBundle?: string): boolean {
  const claimHash = q.annotations[NODECLASS_HASH_ANNOTATION];
  const claimVersion = q.annotations[NODECLASS_HASH_VERSION_ANNOTATION];
  const { hash, version } = currentHash(nc, caBundle);
  // A version change means the hash is computed differently: the controller rewrites it, nothing drifts.
  return claimHash !== undefined && claimVersion === version && claimHash !== hash;
}

function amiDrift(q: DriftQuery, nc: EC2NodeClass, type?: InstanceType): boolean {
  if (!q.imageID || nc.status.amis.length === 0) return false;
  const typeReqs = type?.requirements ?? reqs.fromLabels(q.labels);
  const mapped = statusAmis(nc).find((a) => reqs.intersects(typeReqs, a.requirements) === undefined);
  return mapped?.id !== q.imageID;
}

export async function isDrifted(q: DriftQuery, deps: DriftDeps): Promise<DriftReason | undefined> {
  const nc = deps.nodeClass(q.nodeClassName);
  if (!nc) return undefined;
  if (staticDrift(q, nc, deps.caBundle)) return 'NodeClassDrift';
  const typeName = q.labels[INSTANCE_TYPE_LABEL];
  if (amiDrift(q, nc, typeName ? deps.instanceType?.(q.nodeClassName, typeName) : undefined)) return 'AMIDrift';
  let inst;
  try {
    inst = await deps.instances.describe(q.providerID);
  } catch (e) {
    if (isNodeClaimNotFound(e)) return undefined; // garbage collection's business, not drift
    throw e;
  }
  const groups = nc.status.securityGroups;
  if (groups.length) {
    const want = new Set(groups.map((g) => g.id));
    const have = new Set((inst.SecurityGroups ?? []).flatMap((g) => (g.GroupId ? [g.GroupId] : [])));
    if (want.size !== have.size || [...want].some((g) => !have.has(g))) return 'SecurityGroupDrift';
  }
  const subnets = nc.status.subnets;
  if (subnets.length && inst.SubnetId && !subnets.some((s) => s.id === inst.SubnetId)) return 'SubnetDrift';
  const rid = inst.CapacityReservationId;
  if (
    (deps.reservedCapacity ?? true) &&
    rid &&
    capacityTypeOf(inst) === 'reserved' &&
    !nc.status.capacityReservations.some((r) => r.id === rid)
  )
    return 'CapacityReservationDrift';
  return undefined;
}
