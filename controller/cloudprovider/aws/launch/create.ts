// CloudProvider.create for AWS (docs/karpenter/aws-provider.md §4): check the node class, compute tags, select types
// and a capacity type, map types to AMIs and launch templates, CreateFleet (batched), and turn the result
// into the seam's Instance or a typed error.
//
// 1. node class exists, is not deleting, is Ready for its generation  2. tags (restricted keys refused)
// 3. candidates (filter.ts)  4. one subnet per zone (most free addresses)  5. AMI groups -> launch templates
// 6. CreateFleet, retried once after a launch-template cache miss  7. errors -> ICE cache (for a reserved
// launch: the reservation's count); instance -> Instance (a reserved one takes one from its reservation's count)
import type { CreateFleetCommandInput } from '@aws-sdk/client-ec2';
import {
  CAPACITY_RESERVATION_ID_LABEL,
  CAPACITY_RESERVATION_INTERRUPTIBLE_LABEL,
  CAPACITY_RESERVATION_TYPE_LABEL,
  CAPACITY_TYPE_LABEL,
  EFA,
  INSTANCE_TENANCY_LABEL,
  INSTANCE_TYPE_LABEL,
  NODEPOOL_LABEL,
  nonZero,
  PRICE_OVERLAY_APPLIED_ANNOTATION,
  reqs,
  ZONE_ID_LABEL,
  ZONE_LABEL,
  type EC2NodeClass,
  type InstanceType,
  type Requirements,
} from '../../../../engine/index.ts';
import {
  CreateError,
  InsufficientCapacityError,
  NodeClassNotReadyError,
  type Instance,
  type LaunchRequest,
} from '../../types.ts';
import type { Batcher } from '../batcher.ts';
import { statusReservations, type ReservationCapacity, type ResolvedReservation } from '../capacityreservation.ts';
import { isLaunchTemplateNotFound, launchFailureReason, errorCodes } from '../errors.ts';
import { currentHash } from '../hash.ts';
import type { UnavailableOfferings } from '../ice-cache.ts';
import type { InstanceTypeProvider } from '../instancetype/provider.ts';
import { statusAmis } from '../nodeclass/amis.ts';
import { isReady } from '../nodeclass/conditions.ts';
import * as k from '../settings.ts';
import { createFleetInput, noInstanceError, recordFleetErrors, type FleetGroup, type FleetOutcome } from './fleet.ts';
import { selectCandidates, type Candidate } from './filter.ts';
import type { LaunchTemplates } from './launchtemplate.ts';
import { userData } from './userdata.ts';

interface LaunchDeps {
  readonly settings: k.AwsSettings;
  readonly clock: k.Clock;
  readonly nodeClass: (name: string) => EC2NodeClass | undefined;
  readonly instanceTypes: InstanceTypeProvider;
  readonly ice: UnavailableOfferings;
  readonly templates: LaunchTemplates;
  readonly fleet: Batcher<CreateFleetCommandInput, FleetOutcome>;
  /** Free addresses per subnet from the last resolution, when known. */
  readonly subnetIps?: (subnetId: string) => number | undefined;
  readonly minValuesPolicy?: 'Strict' | 'BestEffort';
  /** Feature gate ReservedCapacity (default on). */
  readonly reservedCapacity?: boolean;
  /** Instances left per reservation: a reserved launch takes one, a refused one marks it empty. */
  readonly reservations?: ReservationCapacity;
  /** Told about every offering CreateFleet refused (karpenter_cloudprovider_instance_launch_failures_total). */
  readonly launchFailed?: (f: { zone: string; zoneId: string; capacityType: string; reason: string }) => void;
}

function launchTags(nc: EC2NodeClass, req: LaunchRequest, cluster: string): Record<string, string> {
  for (const [where, tags] of [
    ['spec.tags', nc.spec.tags],
    ['the NodeClaim tags', req.tags],
  ] as const) {
    for (const key of Object.keys(tags ?? {})) {
      const why = k.restrictedTagReason(key);
      if (why)
        throw new CreateError(
          `launching nodeclaim ${req.nodeClaimName}: ${where} of EC2NodeClass ${nc.name} use the restricted tag "${key}" (${why})`,
          'InvalidTags',
        );
    }
  }
  return {
    ...nc.spec.tags,
    ...req.tags,
    [k.clusterTag(cluster)]: 'owned',
    [k.NODEPOOL_TAG]: req.nodePoolName,
    [k.EKS_CLUSTER_NAME_TAG]: cluster,
    [k.NODECLASS_TAG]: nc.name,
  };
}

function readyNodeClass(req: LaunchRequest, deps: LaunchDeps): EC2NodeClass {
  const nc = deps.nodeClass(req.nodeClassName);
  const where = `EC2NodeClass ${req.nodeClassName} of nodeclaim ${req.nodeClaimName}`;
  if (!nc) throw new NodeClassNotReadyError(`${where} does not exist`);
  if (nc.deleting) throw new NodeClassNotReadyError(`${where} is being deleted`);
  if (!isReady(nc.status.conditions, nc.generation))
    throw new NodeClassNotReadyError(`${where} is not Ready for generation ${nc.generation ?? '?'}`);
  return nc;
}

/** The nodeclass subnet with the most free addresses in each zone, skipping subnets out of addresses. */
function subnetPerZone(nc: EC2NodeClass, deps: LaunchDeps): Map<string, string> {
  const best = new Map<string, { id: string; ips: number }>();
  nc.status.subnets.forEach((s, i) => {
    if (!s.zone || deps.ice.isSubnetUnavailable(s.id)) return;
    const ips = deps.subnetIps?.(s.id) ?? -i; // status order is already most-free-first
    const cur = best.get(s.zone);
    if (!cur || ips > cur.ips) best.set(s.zone, { id: s.id, ips });
  });
  return new Map([...best].map(([z, v]) => [z, v.id]));
}

interface AmiGroup {
  readonly imageId: string;
  readonly maxPods: number;
  readonly candidates: Candidate[];
}

/** Types map to the first AMI whose requirements intersect theirs; groups split by pods (user data differs). */
function amiGroups(nc: EC2NodeClass, candidates: readonly Candidate[]): AmiGroup[] {
  const amis = statusAmis(nc);
  const groups = new Map<string, AmiGroup>();
  for (const c of candidates) {
    const ami = amis.find((a) => reqs.intersects(c.type.requirements, a.requirements) === undefined);
    if (!ami) continue;
    const maxPods = c.type.capacity.pods ?? 110;
    const key = `${ami.id}/${maxPods}`;
    if (!groups.has(key)) groups.set(key, { imageId: ami.id, maxPods, candidates: [] });
    groups.get(key)!.candidates.push(c);
  }
  return [...groups.values()];
}

async function fleetGroups(
  nc: EC2NodeClass,
  req: LaunchRequest,
  deps: LaunchDeps,
  groups: readonly AmiGroup[],
  capacityType: 'on-demand' | 'spot' | 'reserved',
  tags: Record<string, string>,
  reservations: ReadonlyMap<string, ResolvedReservation>,
): Promise<FleetGroup[]> {
  const family = nc.amiFamily;
  const subnets = subnetPerZone(nc, deps);
  const out: FleetGroup[] = [];
  for (const g of groups) {
    // Reserved launches get one template per reservation (the template names it); others one per group.
    const byReservation = new Map<string, FleetGroup['overrides'][number][]>();
    for (const c of g.candidates) {
      for (const o of c.offerings) {
        const subnetId = subnets.get(o.zone);
        if (!subnetId) continue;
        const key = capacityType === 'reserved' ? (o.reservationId ?? '') : '';
        const list = byReservation.get(key) ?? [];
        list.push({ instanceType: c.type.name, subnetId, zone: o.zone, imageId: g.imageId, price: o.price });
        byReservation.set(key, list);
      }
    }
    for (const [reservationId, overrides] of byReservation) {
      const r = reservations.get(reservationId);
      if (capacityType === 'reserved' && !r) continue; // never a reserved launch without its reservation target
      const template = await deps.templates.ensure({
        family,
        spec: nc.spec,
        imageId: g.imageId,
        userData: userData(family, {
          clusterName: deps.settings.clusterName,
          clusterEndpoint: deps.settings.clusterEndpoint,
          ...(deps.settings.clusterCABundle ? { caBundle: deps.settings.clusterCABundle } : {}),
          ...(deps.settings.clusterCIDR ? { clusterCIDR: deps.settings.clusterCIDR } : {}),
          ...(nc.spec.kubelet ? { kubelet: nc.spec.kubelet } : {}),
          maxPods: g.maxPods,
          labels: req.labels,
          taints: [...req.taints, ...req.startupTaints],
          ...(nc.spec.userData ? { customUserData: nc.spec.userData } : {}),
        }),
        instanceProfile: nc.status.instanceProfile ?? nc.spec.instanceProfile ?? '',
        securityGroupIds: nc.status.securityGroups.map((s) => s.id),
        tags,
        capacityType,
        reservedCapacity: deps.reservedCapacity ?? true,
        ...(r ? { reservation: { id: r.id, reservationType: r.reservationType, interruptible: r.interruptible } } : {}),
      });
      out.push({ templateName: template.name, overrides });
    }
  }
  return out;
}

async function callFleet(
  input: CreateFleetCommandInput,
  req: LaunchRequest,
  deps: LaunchDeps,
  retry: () => Promise<CreateFleetCommandInput>,
): Promise<FleetOutcome> {
  try {
    return await deps.fleet.add(input);
  } catch (e) {
    if (isLaunchTemplateNotFound(e)) return deps.fleet.add(await retry());
    const code = errorCodes(e)[0];
    throw new CreateError(
      `launching nodeclaim ${req.nodeClaimName}: CreateFleet failed: ${(e as Error).message}`,
      launchFailureReason(code, (e as Error).message),
      { cause: e },
    );
  }
}

/** nodeadm refuses a NodeConfig without the service CIDR; without it an AL2023 node would never join. */
function requireClusterCIDR(nc: EC2NodeClass, req: LaunchRequest, deps: LaunchDeps): void {
  if (nc.amiFamily !== 'AL2023' || deps.settings.clusterCIDR || /\bcidr\s*:/.test(nc.spec.userData ?? '')) return;
  throw new CreateError(
    `launching nodeclaim ${req.nodeClaimName}: AL2023 nodes need the cluster's service CIDR in their NodeConfig; set --cluster-cidr (CLUSTER_CIDR, chart settings.clusterCIDR), e.g. from aws eks describe-cluster --query cluster.kubernetesNetworkConfig.serviceIpv4Cidr`,
    'ClusterCIDRUnknown',
  );
}

export async function launch(req: LaunchRequest, deps: LaunchDeps): Promise<Instance> {
  const nc = readyNodeClass(req, deps);
  requireClusterCIDR(nc, req, deps);
  const tags = launchTags(nc, req, deps.settings.clusterName);
  const claim: Requirements = reqs.fromSelectorRequirements(req.requirements);
  const reservations = new Map(statusReservations(nc).map((r) => [r.id, r]));
  const listed = deps.instanceTypes.list(nc);
  const sel = selectCandidates(
    req.overlay ? req.overlay(listed) : listed,
    claim,
    req.requests,
    deps.minValuesPolicy,
    (id) => reservations.get(id),
  );
  if (!sel.ok) throw new InsufficientCapacityError(`launching nodeclaim ${req.nodeClaimName}: ${sel.reason}`);
  const groups = amiGroups(nc, sel.candidates);
  if (!groups.length)
    throw new InsufficientCapacityError(
      `launching nodeclaim ${req.nodeClaimName}: no AMI of EC2NodeClass ${nc.name} serves the candidate instance types`,
    );
  const build = async () =>
    createFleetInput(
      await fleetGroups(nc, req, deps, groups, sel.capacityType, tags, reservations),
      sel.capacityType,
      tags,
      nc.spec.context,
      sel.reservation,
      req.annotations[PRICE_OVERLAY_APPLIED_ANNOTATION] !== undefined,
    );
  const input = await build();
  if (!input.LaunchTemplateConfigs?.length)
    throw new InsufficientCapacityError(
      `launching nodeclaim ${req.nodeClaimName}: no zone of the offerings has a usable subnet`,
    );
  const outcome = await callFleet(input, req, deps, async () => {
    for (const c of input.LaunchTemplateConfigs ?? [])
      if (c.LaunchTemplateSpecification?.LaunchTemplateName)
        deps.templates.invalidate(c.LaunchTemplateSpecification.LaunchTemplateName);
    return build();
  });
  const zoneOf = (id: string) => nc.status.subnets.find((s) => s.id === id)?.zone;
  // After the reserved filter each (type, zone) has one reserved offering, so it names the reservation.
  const reservationOf = (type: string, zone: string) =>
    sel.candidates.find((c) => c.type.name === type)?.offerings.find((o) => o.zone === zone)?.reservationId;
  for (const e of outcome.errors) {
    const ov = e.LaunchTemplateAndOverrides?.Overrides;
    const subnet = nc.status.subnets.find((x) => x.id === ov?.SubnetId);
    deps.launchFailed?.({
      zone: ov?.AvailabilityZone ?? subnet?.zone ?? '',
      zoneId: subnet?.zoneID ?? '',
      capacityType: sel.capacityType,
      reason: e.ErrorCode ?? '',
    });
  }
  const marked = recordFleetErrors(
    outcome.errors,
    sel.capacityType,
    deps.ice,
    zoneOf,
    deps.reservations && { reservationOf, markUnavailable: (id) => deps.reservations!.markUnavailable(id) },
  );
  if (!outcome.instance) throw noInstanceError(req.nodeClaimName, outcome.errors, marked);
  const zone =
    outcome.instance.zone ?? (outcome.instance.subnetId ? zoneOf(outcome.instance.subnetId) : undefined) ?? '';
  const reservation =
    sel.capacityType === 'reserved'
      ? reservations.get(reservationOf(outcome.instance.instanceType, zone) ?? '')
      : undefined;
  if (reservation) deps.reservations?.launched(reservation.id);
  return toInstance(req, nc, deps, sel.candidates, groups, outcome.instance, sel.capacityType, reservation);
}

const RESERVATION_LABELS = [
  CAPACITY_RESERVATION_ID_LABEL,
  CAPACITY_RESERVATION_TYPE_LABEL,
  CAPACITY_RESERVATION_INTERRUPTIBLE_LABEL,
];

/** The instance type's single-valued labels, with the reservation labels only for an instance in a reservation. */
function typeLabels(
  type: InstanceType | undefined,
  instanceType: string,
  reservation: ResolvedReservation | undefined,
): Record<string, string> {
  const labels = type ? reqs.singleValueLabels(type.requirements) : { [INSTANCE_TYPE_LABEL]: instanceType };
  for (const k of RESERVATION_LABELS) delete labels[k];
  if (reservation) {
    labels[CAPACITY_RESERVATION_ID_LABEL] = reservation.id;
    labels[CAPACITY_RESERVATION_TYPE_LABEL] = reservation.reservationType;
    labels[CAPACITY_RESERVATION_INTERRUPTIBLE_LABEL] = String(reservation.interruptible);
  }
  return labels;
}

function toInstance(
  req: LaunchRequest,
  nc: EC2NodeClass,
  deps: LaunchDeps,
  candidates: readonly Candidate[],
  groups: readonly AmiGroup[],
  inst: NonNullable<FleetOutcome['instance']>,
  capacityType: 'on-demand' | 'spot' | 'reserved',
  reservation: ResolvedReservation | undefined,
): Instance {
  const type = candidates.find((c) => c.type.name === inst.instanceType)?.type;
  const zone =
    inst.zone ?? (inst.subnetId ? nc.status.subnets.find((s) => s.id === inst.subnetId)?.zone : undefined) ?? '';
  const zoneId = nc.status.subnets.find((s) => s.zone === zone)?.zoneID;
  const imageID = groups.find((g) => g.candidates.some((c) => c.type.name === inst.instanceType))?.imageId;
  const efa = nc.spec.networkInterfaces.some((n) => n.interfaceType === 'efa-only');
  const strip = (r: Record<string, number>) => {
    if (!efa) delete r[EFA];
    return r;
  };
  const { hash, version } = currentHash(nc, deps.settings.clusterCABundle);
  return {
    providerID: `aws:///${zone}/${inst.id}`,
    instanceType: inst.instanceType,
    zone,
    capacityType:
      inst.lifecycle === 'spot'
        ? 'spot'
        : capacityType === 'reserved'
          ? 'reserved'
          : inst.lifecycle === 'on-demand'
            ? 'on-demand'
            : capacityType,
    ...(imageID ? { imageID } : {}),
    capacity: strip(nonZero(type?.capacity ?? {})),
    allocatable: strip(nonZero(type?.allocatable ?? {})),
    labels: {
      ...typeLabels(type, inst.instanceType, reservation),
      [ZONE_LABEL]: zone,
      ...(zoneId ? { [ZONE_ID_LABEL]: zoneId } : {}),
      [CAPACITY_TYPE_LABEL]: inst.lifecycle === 'spot' ? 'spot' : capacityType,
      [NODEPOOL_LABEL]: req.nodePoolName,
      [INSTANCE_TENANCY_LABEL]: 'default',
    },
    annotations: {
      [k.NODECLASS_HASH_ANNOTATION]: hash,
      [k.NODECLASS_HASH_VERSION_ANNOTATION]: version,
      ...(nc.status.instanceProfile ? { [k.INSTANCE_PROFILE_ANNOTATION]: nc.status.instanceProfile } : {}),
    },
    launchTime: deps.clock.now(),
    nodeClaimName: req.nodeClaimName,
    nodePoolName: req.nodePoolName,
    state: 'pending',
  };
}
