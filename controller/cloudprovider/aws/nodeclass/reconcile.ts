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

export interface NodeClassDeps {
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
  const spec = nc.spec;
  const prev = nc.status;
  const inputs: ConditionInput[] = [];
  const errors: Error[] = [];
  const keep = (type: ConditionType, e: unknown): void => {
    errors.push(e instanceof Error ? e : new Error(String(e)));
    const p = prev.conditions.find((c) => c.type === type);
    inputs.push(
      p
        ? { type, status: p.status, reason: p.reason ?? '', message: p.message ?? '' }
        : { type, status: 'Unknown', reason: 'ResolutionFailed', message: (e as Error).message },
    );
  };
  async function step<T>(s: Step<T>): Promise<T | undefined> {
    try {
      const v = await s.run();
      const bad = s.check(v);
      inputs.push(
        bad
          ? { type: s.type, status: 'False', ...bad }
          : { type: s.type, status: 'True', reason: s.readyReason, message: '' },
      );
      return v;
    } catch (e) {
      if (e instanceof AmiResolutionError) {
        inputs.push({ type: s.type, status: 'False', reason: 'AMINotFound', message: e.message });
        return [] as T;
      }
      if (e instanceof UnknownCapacityReservationError) {
        inputs.push({ type: s.type, status: 'False', reason: 'CapacityReservationNotFound', message: e.message });
        return { reservations: [], counts: new Map() } as T;
      }
      keep(s.type, e);
      return undefined;
    }
  }

  // 1. AMIs
  const amis = await step({
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
  });
  // 2. Capacity reservations (none are resolved, and no condition is set, with the gate off)
  const gate = deps.reservedCapacity ?? true;
  const reservations: ResolvedReservations | undefined = !gate
    ? { reservations: [], counts: new Map() }
    : await step({
        type: 'CapacityReservationsReady',
        readyReason: 'CapacityReservationsReady',
        run: () => resolveCapacityReservations(deps.ec2, nc, deps.clock.now()),
        check: () => undefined,
      });
  for (const [id, c] of reservations?.counts ?? []) deps.reservationCapacity?.refresh(id, c.available, c.total);
  // 3. Subnets
  const subnets = await step({
    type: 'SubnetsReady',
    readyReason: 'SubnetsReady',
    run: () => resolveSubnets(deps.ec2, spec.subnetSelectorTerms),
    check: (v) =>
      v.length
        ? undefined
        : {
            reason: 'SubnetsNotFound',
            message: `subnetSelectorTerms [${describeTerms(spec.subnetSelectorTerms)}] matched no subnets: ${DISCOVERY_HINT}`,
          },
  });
  // 4. Security groups
  const groups = await step({
    type: 'SecurityGroupsReady',
    readyReason: 'SecurityGroupsReady',
    run: () => resolveSecurityGroups(deps.ec2, spec.securityGroupSelectorTerms),
    check: (v) =>
      v.length
        ? undefined
        : {
            reason: 'SecurityGroupsNotFound',
            message: `securityGroupSelectorTerms [${describeTerms(spec.securityGroupSelectorTerms)}] matched no security groups: ${DISCOVERY_HINT}`,
          },
  });
  // 5. Instance profile
  const profile = await step({
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
  // 6. Validation
  const invalid = validate(nc);
  inputs.push(
    invalid
      ? { type: 'ValidationSucceeded', status: 'False', ...invalid }
      : { type: 'ValidationSucceeded', status: 'True', reason: 'ValidationSucceeded', message: '' },
  );

  const conditions = buildConditions(inputs, prev.conditions, nc.generation, deps.clock.now());
  const status: EC2NodeClassStatus = {
    subnets: subnets
      ? subnets.map((s) => ({ id: s.id, zone: s.zone, ...(s.zoneId ? { zoneID: s.zoneId } : {}) }))
      : prev.subnets,
    securityGroups: groups ? groups.map((g) => ({ ...g })) : prev.securityGroups,
    amis: amis
      ? amis.map((a) => ({
          id: a.id,
          ...(a.name ? { name: a.name } : {}),
          ...(a.deprecated ? { deprecated: true } : {}),
          requirements: a.requirements,
        }))
      : prev.amis,
    capacityReservations: reservations ? reservations.reservations.map((r) => ({ ...r })) : prev.capacityReservations,
    ...(profile
      ? { instanceProfile: profile.name }
      : prev.instanceProfile
        ? { instanceProfile: prev.instanceProfile }
        : {}),
    conditions,
  };
  const ready = conditions.find((c) => c.type === 'Ready')?.status === 'True';
  const hash = nodeClassHash({
    spec,
    amiFamily: nc.amiFamily,
    ...(deps.clusterCABundle ? { caBundle: deps.clusterCABundle } : {}),
  });
  return {
    status,
    conditions,
    ready,
    annotations: { [NODECLASS_HASH_ANNOTATION]: hash, [NODECLASS_HASH_VERSION_ANNOTATION]: EC2NODECLASS_HASH_VERSION },
    subnets: subnets ?? [],
    ...(profile?.stale ? { staleInstanceProfile: profile.stale } : {}),
    errors,
    requeueAfterMs: errors.length ? 30_000 : ready ? (deps.refreshMs ?? 5 * 60_000) : 60_000,
  };
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
