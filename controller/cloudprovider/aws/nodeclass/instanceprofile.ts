// spec.role -> a managed instance profile (docs/karpenter/aws-provider.md §5 "Instance profile"): named
// `<cluster>_<hash(region + nodeclass name + uuid)>` under `/karpenter/<region>/<cluster>/<nodeclass-uid>/`,
// tagged with the cluster, region and node class, holding the role (any IAM path stripped). A role change
// creates a new profile instead of swapping the role (instances launched with the old profile keep working);
// the old one is reported as stale for garbage collection. spec.instanceProfile is used as given.
import { createHash, randomUUID } from 'node:crypto';
import type { InstanceProfile } from '@aws-sdk/client-iam';
import { REGION_LABEL, type EC2NodeClass } from '../../../../engine/index.ts';
import { isAlreadyExists } from '../errors.ts';
import type { IamPort } from '../sdk.ts';
import { clusterTag, EKS_CLUSTER_NAME_TAG, NODECLASS_TAG } from '../settings.ts';

interface InstanceProfileDeps {
  readonly iam: IamPort;
  readonly clusterName: string;
  readonly region: string;
  readonly uuid?: () => string;
}

interface InstanceProfileResult {
  readonly name: string;
  /** A profile this node class used before a role change, to delete once no instance uses it. */
  readonly stale?: string;
}

/** Role names may arrive as "name", "path/name" or a role ARN; the profile takes the bare name. */
export const roleName = (role: string): string => role.slice(role.lastIndexOf('/') + 1);

export const profilePath = (region: string, cluster: string, uid: string): string =>
  `/karpenter/${region}/${cluster}/${uid}/`;

/** A uint64 from sha256, printed in decimal (the shape of Karpenter's hashstructure names). */
export function profileName(cluster: string, region: string, nodeClassName: string, uuid: string): string {
  const digest = createHash('sha256').update(`${region}${nodeClassName}${uuid}`).digest();
  return `${cluster}_${digest.readBigUInt64BE(0).toString(10)}`;
}

/** FNV-1 (not 1a), 64 bits: Go's hash/fnv New64, which hashstructure v2 uses by default for a string. */
function fnv1_64(text: string): bigint {
  const mask = (1n << 64n) - 1n;
  let h = 14695981039346656037n;
  for (const byte of Buffer.from(text, 'utf8')) h = ((h * 1099511628211n) & mask) ^ BigInt(byte);
  return h;
}

/**
 * The name Karpenter gave a node class's managed profile before profiles had a random part and an IAM path:
 * `<cluster>_<hashstructure(region + name)>` (pkg/apis/v1/ec2nodeclass.go, LegacyInstanceProfileName). A
 * cluster moved over from such a version may still hold one; deleting the class removes it.
 */
export const legacyProfileName = (cluster: string, region: string, nodeClassName: string): string =>
  `${cluster}_${fnv1_64(`${region}${nodeClassName}`).toString(10)}`;

/** IAM's pattern and length for an instance profile name (1-128 of letters, digits and +=,.@_-). */
export const validProfileName = (name: string): boolean => /^[\w+=,.@-]{1,128}$/.test(name);

/**
 * Deletes an instance profile as Karpenter's instance-profile provider does (pkg/providers/instanceprofile,
 * DefaultProvider.Delete): the role it holds now is removed first (whichever role that is: IAM refuses to delete a
 * profile that holds one, DeleteConflict), then the profile; a profile already gone is not an error.
 */
export async function deleteInstanceProfile(iam: IamPort, name: string): Promise<void> {
  const profile = await iam.getInstanceProfile(name);
  if (!profile) return;
  for (const role of profile.Roles ?? [])
    if (role.RoleName) await iam.removeRoleFromInstanceProfile(name, role.RoleName);
  await iam.deleteInstanceProfile(name);
}

const holds = (p: InstanceProfile | undefined, role: string): boolean =>
  (p?.Roles ?? []).some((r) => r.RoleName === role);
const empty = (p: InstanceProfile | undefined): boolean => p !== undefined && (p.Roles ?? []).length === 0;

export async function reconcileInstanceProfile(
  nc: EC2NodeClass,
  deps: InstanceProfileDeps,
): Promise<InstanceProfileResult> {
  const spec = nc.spec;
  if (spec.instanceProfile) return { name: spec.instanceProfile };
  if (!spec.role) throw new Error(`EC2NodeClass ${nc.name}: set spec.role or spec.instanceProfile`);
  const role = roleName(spec.role);
  const uid = nc.uid ?? nc.name;
  const path = profilePath(deps.region, deps.clusterName, uid);

  // 1. The profile in status still holds the role (or holds none yet): keep it.
  const current = nc.status.instanceProfile;
  const existing = current ? await deps.iam.getInstanceProfile(current) : undefined;
  if (current && holds(existing, role)) return { name: current };
  if (current && empty(existing)) {
    await deps.iam.addRoleToInstanceProfile(current, role);
    return { name: current };
  }
  const stale = existing ? current : undefined;

  // 2. Another profile under the node class's path holds the role (status lost, or a role changed back).
  const siblings = await deps.iam.listInstanceProfiles(path);
  const reuse = siblings.find((p) => holds(p, role) && p.InstanceProfileName);
  if (reuse?.InstanceProfileName)
    return { name: reuse.InstanceProfileName, ...(stale && stale !== reuse.InstanceProfileName ? { stale } : {}) };

  // 3. Create a new one.
  const name = profileName(deps.clusterName, deps.region, nc.name, (deps.uuid ?? randomUUID)());
  const tags = {
    [clusterTag(deps.clusterName)]: 'owned',
    [EKS_CLUSTER_NAME_TAG]: deps.clusterName,
    [REGION_LABEL]: deps.region,
    [NODECLASS_TAG]: nc.name,
  };
  try {
    await deps.iam.createInstanceProfile({ name, path, tags });
  } catch (e) {
    if (!isAlreadyExists(e)) throw new Error(`creating instance profile ${name} for role ${role}`, { cause: e });
  }
  if (!holds(await deps.iam.getInstanceProfile(name), role)) await deps.iam.addRoleToInstanceProfile(name, role);
  return { name, ...(stale ? { stale } : {}) };
}
