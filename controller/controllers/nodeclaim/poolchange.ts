// Which NodePool and EC2NodeClass changes concern their NodeClaims' conditions (nodeclaim.drift,
// nodeclaim.consolidatable).
import { canonicalJson } from '../../operator/hash.ts';
import type { KubeObject } from '../../operator/kube.ts';
import type { Change } from '../../state/changes.ts';

/**
 * A NodePool that is new, or whose spec or annotations (the template hash nodepool.hash writes) changed: what
 * drift and consolidateAfter read. A status write (nodepool.counter's usage, every few seconds per pool while
 * its nodes change; nodepool.readiness's conditions) is not, and used to re-check every NodeClaim of the pool.
 */
export function nodePoolTemplateChanged(c: Change): boolean {
  if (c.kind !== 'NodePool' || c.type !== 'upsert') return false;
  if (!c.old) return true;
  return (
    canonicalJson(c.obj.spec ?? {}) !== canonicalJson(c.old.spec ?? {}) ||
    canonicalJson(c.obj.metadata.annotations ?? {}) !== canonicalJson(c.old.metadata.annotations ?? {})
  );
}

/**
 * The resolved status fields the cloud provider's drift check compares a NodeClaim's instance with
 * (cloudprovider/aws/drift.ts: AMIDrift maps the instance type to status.amis, SecurityGroupDrift, SubnetDrift,
 * CapacityReservationDrift; the instance types it maps come from the subnets' zones and the reservations too).
 * Not read: the conditions (readiness, lastTransitionTime), status.instanceProfile.
 */
const DRIFT_STATUS_FIELDS = ['amis', 'subnets', 'securityGroups', 'capacityReservations'] as const;

const driftStatus = (o: KubeObject): string =>
  canonicalJson(DRIFT_STATUS_FIELDS.map((k) => (o.status as Record<string, unknown> | undefined)?.[k] ?? null));

/**
 * An EC2NodeClass that is new, or that changed in what node class drift reads: its spec and annotations (the
 * static hash NodeClassDrift compares, `karpenter.k8s.aws/ec2nodeclass-hash`) and DRIFT_STATUS_FIELDS. Karpenter
 * re-checks every NodeClaim of a class on each of its events (kubernetes-sigs/karpenter
 * pkg/controllers/nodeclaim/disruption/controller.go watches the node classes with no predicate); a status write
 * that changes only a condition (nodeclass.status every few minutes per class) cannot change a verdict here, and
 * used to re-check every NodeClaim of the class. The 5-minute re-check of each NodeClaim still runs.
 */
export function nodeClassDriftInputsChanged(c: Change): boolean {
  if (c.kind !== 'EC2NodeClass' || c.type !== 'upsert') return false;
  if (!c.old) return true;
  return (
    canonicalJson(c.obj.spec ?? {}) !== canonicalJson(c.old.spec ?? {}) ||
    canonicalJson(c.obj.metadata.annotations ?? {}) !== canonicalJson(c.old.metadata.annotations ?? {}) ||
    driftStatus(c.obj) !== driftStatus(c.old)
  );
}
