// The AWS provider's side of the node-class controller (the seam's NodeClassProvider): reconcileNodeClass()
// rendered for the API server, plus instance-profile clean-up.
//
// * resolve: the status in wire shape (statusObject), the static hash annotations, and the same hash for
//   NodeClaims launched under another hash version (Karpenter's nodeclass.hash controller rewrites those so a
//   version bump never reads as drift).
// * A role change makes reconcileNodeClass create a new instance profile and report the old one as stale;
//   it is deleted (role removed first) once no NodeClaim carries it in karpenter.k8s.aws/instance-profile-name.
//   Stale names are kept in memory; after a restart, deleting the class still cleans up every profile under
//   its IAM path.
// * finalize: launch templates and the managed instance profile (finalizeNodeClass), then every other
//   profile under the class's path /karpenter/<region>/<cluster>/<uid>/ (stale ones included, whether or not
//   spec.role is still set) and the legacy profile named after the class alone; in an isolated VPC no profile
//   is touched (docs/karpenter/aws-provider.md §5 "Instance profile").
import type { EC2NodeClass } from '../../../engine/index.ts';
import type { NodeClassProvider, NodeClassStatusResult } from '../types.ts';
import {
  deleteInstanceProfile,
  legacyProfileName,
  profilePath,
  validProfileName,
} from './nodeclass/instanceprofile.ts';
import { statusObject } from './nodeclass/object.ts';
import type { AwsCloudProvider } from './provider.ts';
import type { IamPort } from './sdk.ts';
import { NODECLASS_HASH_VERSION_ANNOTATION } from './settings.ts';

interface AwsNodeClassDeps {
  readonly provider: Pick<AwsCloudProvider, 'reconcileNodeClass' | 'finalizeNodeClass'>;
  readonly iam: IamPort;
  /** Whether some NodeClaim was launched with this instance profile. */
  readonly profileInUse: (profile: string) => boolean;
  readonly clusterName: string;
  readonly region: string;
  /** ISOLATED_VPC: no IAM calls when a class is deleted. */
  readonly isolatedVPC?: boolean;
}

export interface AwsNodeClasses extends NodeClassProvider {
  /** Stale profiles waiting for their instances to go, by node class (tests, diagnostics). */
  stale(nodeClass: string): readonly string[];
}

const failure = (name: string, nc: EC2NodeClass, cause: unknown): Error =>
  new Error(`deleting instance profile ${name} of EC2NodeClass ${nc.name}`, { cause });

/**
 * Every profile under the class's IAM path but the one in status (the provider's finalizeNodeClass deletes that
 * one): stale ones kept from before a restart, and those a class that switched to spec.instanceProfile left.
 */
async function deleteOwnProfiles(deps: AwsNodeClassDeps, nc: EC2NodeClass): Promise<Error[]> {
  const path = profilePath(deps.region, deps.clusterName, nc.uid ?? nc.name);
  const errors: Error[] = [];
  for (const p of await deps.iam.listInstanceProfiles(path)) {
    const name = p.InstanceProfileName;
    if (!name || name === nc.status.instanceProfile) continue;
    await deleteInstanceProfile(deps.iam, name).catch((e: unknown) => errors.push(failure(name, nc, e)));
  }
  return errors;
}

/** The profile an earlier Karpenter named after the class alone (legacyProfileName), when IAM allows the name. */
async function deleteLegacyProfile(deps: AwsNodeClassDeps, nc: EC2NodeClass): Promise<Error[]> {
  const name = legacyProfileName(deps.clusterName, deps.region, nc.name);
  if (!validProfileName(name) || name === nc.spec.instanceProfile) return [];
  try {
    await deleteInstanceProfile(deps.iam, name);
    return [];
  } catch (e) {
    return [failure(name, nc, e)];
  }
}

export function awsNodeClasses(deps: AwsNodeClassDeps): AwsNodeClasses {
  const stale = new Map<string, Set<string>>();

  const deleteProfile = (name: string): Promise<void> => deleteInstanceProfile(deps.iam, name);

  /** Deletes the class's stale profiles nobody uses any more; failures are returned, and retried next time. */
  async function collect(nc: EC2NodeClass, force: boolean): Promise<Error[]> {
    const set = stale.get(nc.name);
    const errors: Error[] = [];
    for (const name of [...(set ?? [])]) {
      if (name === nc.status.instanceProfile || (!force && deps.profileInUse(name))) continue;
      try {
        await deleteProfile(name);
        set!.delete(name);
      } catch (e) {
        errors.push(new Error(`deleting stale instance profile ${name} of EC2NodeClass ${nc.name}`, { cause: e }));
      }
    }
    if (set && set.size === 0) stale.delete(nc.name);
    return errors;
  }

  return {
    async resolve(nc): Promise<NodeClassStatusResult> {
      const r = await deps.provider.reconcileNodeClass(nc);
      if (r.staleInstanceProfile) {
        const set = stale.get(nc.name) ?? new Set<string>();
        set.add(r.staleInstanceProfile);
        stale.set(nc.name, set);
      }
      const cleanup = await collect({ ...nc, status: r.status }, false);
      return {
        status: statusObject(r.status),
        annotations: r.annotations,
        nodeClaimAnnotations: { key: NODECLASS_HASH_VERSION_ANNOTATION, values: r.annotations },
        requeueAfterMs: cleanup.length ? Math.min(r.requeueAfterMs, 60_000) : r.requeueAfterMs,
        errors: [...r.errors, ...cleanup],
      };
    },
    async finalize(nc) {
      await deps.provider.finalizeNodeClass(nc);
      // In an isolated VPC IAM is out of reach: Karpenter leaves the profiles (nodeclass controller, finalize).
      if (deps.isolatedVPC) {
        stale.delete(nc.name);
        return;
      }
      const errors = [
        ...(await collect(nc, true)),
        ...(await deleteOwnProfiles(deps, nc)),
        ...(await deleteLegacyProfile(deps, nc)),
      ];
      if (errors.length) throw new AggregateError(errors, errors.map((e) => e.message).join('; '));
    },
    stale: (name) => [...(stale.get(name) ?? [])],
  };
}
