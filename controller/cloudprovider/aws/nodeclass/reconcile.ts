// The EC2NodeClass status reconciler (Karpenter controller `nodeclass`): resolves AMIs, capacity reservations,
// subnets, security groups and the instance profile, validates, and returns the status and conditions for the
// controller to write back, plus the hash annotations. It never writes to Kubernetes itself.
//
// 1. AMIs  2. capacity reservations (feature gate ReservedCapacity)  3. subnets  4. security groups
// 5. instance profile  6. validation, then Ready.
// A selector that matches nothing sets its condition False and empties that status field. An AWS call that
// fails keeps the previous status field and condition (a throttled API should not stop launches) and is
// returned in `errors` with a shorter requeue.
import type { EC2NodeClass, EC2NodeClassStatus } from '../../../../engine/index.ts';
import { EC2NODECLASS_HASH_VERSION, nodeClassHash } from '../hash.ts';
import type { Ec2Port, IamPort, SsmPort } from '../sdk.ts';
import {
  NODECLASS_HASH_ANNOTATION,
  NODECLASS_HASH_VERSION_ANNOTATION,
  restrictedTagReason,
  type Clock,
} from '../settings.ts';
import type { TtlCache } from '../ttl-cache.ts';
import type { ReservationCapacity } from '../capacityreservation.ts';
import { AmiResolutionError, resolveAmis } from './amis.ts';
import {
  resolveCapacityReservations,
  UnknownCapacityReservationError,
  type ResolvedReservations,
} from './capacityreservations.ts';
import { buildConditions, type ConditionInput, type ConditionType } from './conditions.ts';
import { reconcileInstanceProfile } from './instanceprofile.ts';
import type { NodeClassCondition } from './object.ts';
import { describeTerms, resolveSecurityGroups, resolveSubnets, type ResolvedSubnet } from './network.ts';

interface NodeClassDeps {
  readonly ec2: Ec2Port;
  readonly ssm: SsmPort;
  readonly iam: IamPort;
  readonly clusterName: string;
  readonly region: string;
  readonly clusterCABundle?: string;
  /** "1.31". */
  readonly kubernetesVersion: () => Promise<string>;
  readonly clock: Clock;
  readonly ssmCache?: TtlCache<string, string>;
  readonly uuid?: () => string;
  /** Feature gate ReservedCapacity (default on): resolve capacityReservationSelectorTerms. */
  readonly reservedCapacity?: boolean;
  /** The in-memory instance counts, refreshed from each resolution. */
  readonly reservationCapacity?: ReservationCapacity;
  /** How soon a Ready class is resolved again (AMI_REFRESH_INTERVAL, SUBNET_REFRESH_INTERVAL: the shorter; default 5 min). */
  readonly refreshMs?: number;
}

export interface NodeClassReconcileResult {
  /** The whole status (conditions included); write it back as statusObject(status) (object.ts). */
  readonly status: EC2NodeClassStatus;
  readonly conditions: readonly NodeClassCondition[];
  readonly ready: boolean;
  /** To set on the node class: the static hash and its version. */
  readonly annotations: Readonly<Record<string, string>>;
  /** Subnets with their free addresses, for the launch path. */
  readonly subnets: readonly ResolvedSubnet[];
  /** A managed instance profile replaced after a role change, to delete later. */
  readonly staleInstanceProfile?: string;
  /** AWS calls that failed (their status fields were kept). */
  readonly errors: readonly Error[];
  readonly requeueAfterMs: number;
}

const DISCOVERY_HINT =
  'check that they exist in this region and carry those tags; the usual cause is resources not tagged with karpenter.sh/discovery=<cluster name>';

interface Step<T> {
  readonly type: ConditionType;
  readonly run: () => Promise<T>;
  /** undefined = ready; else the False condition's reason and message. */
  readonly check: (v: T) => { reason: string; message: string } | undefined;
  readonly readyReason: string;
}

export async function reconcileNodeClass(nc: EC2NodeClass, deps: NodeClassDeps): Promise<NodeClassReconcileResult> {
  const steps = new StepRunner(nc.status);
  const resolved = await resolveAll(nc, deps, steps);
  steps.validated(validate(nc));
  const conditions = buildConditions(steps.inputs, nc.status.conditions, nc.generation, deps.clock.now());
  const ready = conditions.find((c) => c.type === 'Ready')?.status === 'True';
  return {
    status: statusOf(nc.status, resolved, conditions),
    conditions,
    ready,
    annotations: hashAnnotations(nc, deps),
    subnets: resolved.subnets ?? [],
    ...(resolved.profile?.stale ? { staleInstanceProfile: resolved.profile.stale } : {}),
    errors: steps.errors,
    requeueAfterMs: steps.errors.length ? 30_000 : ready ? (deps.refreshMs ?? 5 * 60_000) : 60_000,
  };
}

/**
 * Runs each resolution step and records its condition input. A step that throws keeps the previous condition
 * (and, through an undefined result, the previous status field); a selector that resolves to nothing is False.
 */
class StepRunner {
  readonly inputs: ConditionInput[] = [];
  readonly errors: Error[] = [];
  constructor(private readonly prev: EC2NodeClassStatus) {}

  async run<T>(s: Step<T>): Promise<T | undefined> {
    try {
      const v = await s.run();
      const bad = s.check(v);
      this.inputs.push(
        bad
          ? { type: s.type, status: 'False', ...bad }
          : { type: s.type, status: 'True', reason: s.readyReason, message: '' },
      );
      return v;
    } catch (e) {
      if (e instanceof AmiResolutionError) {
        this.inputs.push({ type: s.type, status: 'False', reason: 'AMINotFound', message: e.message });
        return [] as T;
      }
      if (e instanceof UnknownCapacityReservationError) {
        this.inputs.push({ type: s.type, status: 'False', reason: 'CapacityReservationNotFound', message: e.message });
        return { reservations: [], counts: new Map() } as T;
      }
      this.keep(s.type, e);
      return undefined;
    }
  }

  validated(invalid: { reason: string; message: string } | undefined): void {
    this.inputs.push(
      invalid
        ? { type: 'ValidationSucceeded', status: 'False', ...invalid }
        : { type: 'ValidationSucceeded', status: 'True', reason: 'ValidationSucceeded', message: '' },
    );
  }

  /** A failed AWS call: the previous condition stays (Unknown when there was none) and the error is returned. */
  private keep(type: ConditionType, e: unknown): void {
    this.errors.push(e instanceof Error ? e : new Error(String(e)));
    const p = this.prev.conditions.find((c) => c.type === type);
    this.inputs.push(
      p
        ? { type, status: p.status, reason: p.reason ?? '', message: p.message ?? '' }
        : { type, status: 'Unknown', reason: 'ResolutionFailed', message: (e as Error).message },
    );
  }
}

interface Resolved {
  readonly amis: Awaited<ReturnType<typeof resolveAmis>> | undefined;
  readonly reservations: ResolvedReservations | undefined;
  readonly subnets: ResolvedSubnet[] | undefined;
  readonly groups: Awaited<ReturnType<typeof resolveSecurityGroups>> | undefined;
  readonly profile: Awaited<ReturnType<typeof reconcileInstanceProfile>> | undefined;
}

/** Steps 1-5 in order; undefined = that AWS call failed and the previous status field stays. */
async function resolveAll(nc: EC2NodeClass, deps: NodeClassDeps, steps: StepRunner): Promise<Resolved> {
  const amis = await steps.run(amiStep(nc, deps));
  // With the ReservedCapacity gate off none are resolved and no condition is set.
  const reservations: ResolvedReservations | undefined =
    (deps.reservedCapacity ?? true)
      ? await steps.run({
          type: 'CapacityReservationsReady',
          readyReason: 'CapacityReservationsReady',
          run: () => resolveCapacityReservations(deps.ec2, nc, deps.clock.now()),
          check: () => undefined,
        })
      : { reservations: [], counts: new Map() };
  for (const [id, c] of reservations?.counts ?? []) deps.reservationCapacity?.refresh(id, c.available, c.total);
  const subnets = await steps.run(subnetStep(nc, deps));
  const groups = await steps.run(securityGroupStep(nc, deps));
  const profile = await steps.run({
    type: 'InstanceProfileReady',
    readyReason: 'InstanceProfileReady',
    run: () =>
      reconcileInstanceProfile(nc, {
        iam: deps.iam,
        clusterName: deps.clusterName,
        region: deps.region,
        ...(deps.uuid ? { uuid: deps.uuid } : {}),
      }),
    check: () => undefined,
  });
  return { amis, reservations, subnets, groups, profile };
}

function amiStep(nc: EC2NodeClass, deps: NodeClassDeps): Step<Awaited<ReturnType<typeof resolveAmis>>> {
  return {
    type: 'AMIsReady',
    readyReason: 'AMIsReady',
    run: async () =>
      resolveAmis(nc, {
        ec2: deps.ec2,
        ssm: deps.ssm,
        kubernetesVersion: await deps.kubernetesVersion(),
        now: deps.clock.now(),
        ...(deps.ssmCache ? { ssmCache: deps.ssmCache } : {}),
      }),
    check: () => undefined,
  };
}

function subnetStep(nc: EC2NodeClass, deps: NodeClassDeps): Step<ResolvedSubnet[]> {
  const terms = nc.spec.subnetSelectorTerms;
  return {
    type: 'SubnetsReady',
    readyReason: 'SubnetsReady',
    run: () => resolveSubnets(deps.ec2, terms),
    check: (v) =>
      v.length
        ? undefined
        : {
            reason: 'SubnetsNotFound',
            message: `subnetSelectorTerms [${describeTerms(terms)}] matched no subnets: ${DISCOVERY_HINT}`,
          },
  };
}

function securityGroupStep(
  nc: EC2NodeClass,
  deps: NodeClassDeps,
): Step<Awaited<ReturnType<typeof resolveSecurityGroups>>> {
  const terms = nc.spec.securityGroupSelectorTerms;
  return {
    type: 'SecurityGroupsReady',
    readyReason: 'SecurityGroupsReady',
    run: () => resolveSecurityGroups(deps.ec2, terms),
    check: (v) =>
      v.length
        ? undefined
        : {
            reason: 'SecurityGroupsNotFound',
            message: `securityGroupSelectorTerms [${describeTerms(terms)}] matched no security groups: ${DISCOVERY_HINT}`,
          },
  };
}

/** The new status: each resolved field, or the previous one where its AWS call failed. */
function statusOf(
  prev: EC2NodeClassStatus,
  r: Resolved,
  conditions: EC2NodeClassStatus['conditions'],
): EC2NodeClassStatus {
  return {
    subnets: r.subnets
      ? r.subnets.map((s) => ({ id: s.id, zone: s.zone, ...(s.zoneId ? { zoneID: s.zoneId } : {}) }))
      : prev.subnets,
    securityGroups: r.groups ? r.groups.map((g) => ({ ...g })) : prev.securityGroups,
    amis: r.amis
      ? r.amis.map((a) => ({
          id: a.id,
          ...(a.name ? { name: a.name } : {}),
          ...(a.deprecated ? { deprecated: true } : {}),
          requirements: a.requirements,
        }))
      : prev.amis,
    capacityReservations: r.reservations
      ? r.reservations.reservations.map((c) => ({ ...c }))
      : prev.capacityReservations,
    ...(r.profile
      ? { instanceProfile: r.profile.name }
      : prev.instanceProfile
        ? { instanceProfile: prev.instanceProfile }
        : {}),
    conditions,
  };
}

/** The static hash of the spec and its version, for drift. */
function hashAnnotations(nc: EC2NodeClass, deps: NodeClassDeps): Record<string, string> {
  const hash = nodeClassHash({
    spec: nc.spec,
    amiFamily: nc.amiFamily,
    ...(deps.clusterCABundle ? { caBundle: deps.clusterCABundle } : {}),
  });
  return { [NODECLASS_HASH_ANNOTATION]: hash, [NODECLASS_HASH_VERSION_ANNOTATION]: EC2NODECLASS_HASH_VERSION };
}

/** Static checks (Karpenter: restricted tags, kubelet config); the message names the field. */
function validate(nc: EC2NodeClass): { reason: string; message: string } | undefined {
  for (const k of Object.keys(nc.spec.tags)) {
    const why = restrictedTagReason(k);
    if (why) return { reason: 'TagValidationFailed', message: `spec.tags: "${k}" is restricted (${why})` };
  }
  const k = nc.spec.kubelet;
  if (
    k?.imageGCHighThresholdPercent !== undefined &&
    k.imageGCLowThresholdPercent !== undefined &&
    k.imageGCLowThresholdPercent >= k.imageGCHighThresholdPercent
  ) {
    return {
      reason: 'KubeletValidationFailed',
      message: 'spec.kubelet.imageGCLowThresholdPercent must be below imageGCHighThresholdPercent',
    };
  }
  return undefined;
}
