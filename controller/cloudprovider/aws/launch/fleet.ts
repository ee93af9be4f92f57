// The CreateFleet call (docs/karpenter/aws-provider.md §4.6-4.7): request shape, the batcher that merges identical
// requests (TotalTargetCapacity = N, instances handed out one per caller), and what the per-override errors
// mean: capacity codes mark the ICE cache (and the subnet, or all of spot, for their special codes); a launch
// that got nothing is InsufficientCapacity when every error was about capacity, else a CreateError.
import type { CreateFleetCommandInput, CreateFleetError } from '@aws-sdk/client-ec2';
import { CreateError, InsufficientCapacityError, type UnavailableOffering } from '../../types.ts';
import { Batcher } from '../batcher.ts';
import {
  INSUFFICIENT_FREE_ADDRESSES_CODE,
  isCapacityOrSlrCode,
  isUnfulfillableCapacity,
  launchFailureReason,
  SERVICE_LINKED_ROLE_CODE,
} from '../errors.ts';
import { canonical } from '../hash.ts';
import type { UnavailableOfferings } from '../ice-cache.ts';
import type { Timers } from '../periodic.ts';
import type { Ec2Port } from '../sdk.ts';

interface FleetOverride {
  readonly instanceType: string;
  readonly subnetId: string;
  readonly zone: string;
  readonly imageId: string;
  readonly price: number;
}

export interface FleetGroup {
  readonly templateName: string;
  readonly overrides: readonly FleetOverride[];
}

const RESOURCE_TYPES = ['instance', 'volume', 'fleet'] as const;

/** The kind of reservation a reserved launch targets. */
interface FleetReservationKind {
  readonly reservationType: 'default' | 'capacity-block';
  readonly interruptible: boolean;
}

/**
 * The target capacity type: on-demand or spot; a reserved launch is on-demand into its reservations, except
 * capacity blocks (`capacity-block`) and interruptible ODCRs (`reserved-capacity`, with ReservedCapacityOptions).
 */
function targetCapacity(
  capacityType: 'on-demand' | 'spot' | 'reserved',
  kind?: FleetReservationKind,
): 'on-demand' | 'spot' | 'capacity-block' | 'reserved-capacity' {
  if (capacityType !== 'reserved') return capacityType;
  if (kind?.reservationType === 'capacity-block') return 'capacity-block';
  return kind?.interruptible ? 'reserved-capacity' : 'on-demand';
}

/**
 * The allocation strategy. A NodeClaim whose types carry NodeOverlay prices (the annotation
 * karpenter.sh/price-overlay-applied) launches by the overrides' priorities (their overlaid prices) instead of
 * EC2's own prices: `prioritized` on demand, `capacity-optimized-prioritized` for spot (aws pkg/providers/
 * instance/types.go, v1.14.1).
 */
function allocation(
  capacityType: 'on-demand' | 'spot' | 'reserved',
  overlaidPrices: boolean,
): Pick<CreateFleetCommandInput, 'SpotOptions' | 'OnDemandOptions'> {
  if (capacityType === 'spot')
    return {
      SpotOptions: {
        AllocationStrategy: overlaidPrices ? 'capacity-optimized-prioritized' : 'price-capacity-optimized',
      },
    };
  return { OnDemandOptions: { AllocationStrategy: overlaidPrices ? 'prioritized' : 'lowest-price' } };
}

export function createFleetInput(
  groups: readonly FleetGroup[],
  capacityType: 'on-demand' | 'spot' | 'reserved',
  tags: Readonly<Record<string, string>>,
  context?: string,
  reservation?: FleetReservationKind,
  overlaidPrices = false,
): CreateFleetCommandInput {
  const tagList = Object.keys(tags)
    .sort()
    .map((Key) => ({ Key, Value: tags[Key]! }));
  const target = targetCapacity(capacityType, reservation);
  return {
    Type: 'instant',
    TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: target },
    ...allocation(capacityType, overlaidPrices),
    ...(target === 'reserved-capacity'
      ? { ReservedCapacityOptions: { ReservationTypes: ['interruptible-capacity-reservation'] } }
      : {}),
    LaunchTemplateConfigs: groups.map((g) => ({
      LaunchTemplateSpecification: { LaunchTemplateName: g.templateName, Version: '$Latest' },
      Overrides: g.overrides.map((o) => ({
        InstanceType: o.instanceType as 'm5.large',
        SubnetId: o.subnetId,
        ImageId: o.imageId,
        AvailabilityZone: o.zone,
        Priority: o.price,
      })),
    })),
    TagSpecifications: RESOURCE_TYPES.map((ResourceType) => ({ ResourceType, Tags: tagList })),
    ...(context ? { Context: context } : {}),
  };
}

/** One caller's share of a (possibly merged) CreateFleet call. */
export interface FleetOutcome {
  readonly instance?: {
    readonly id: string;
    readonly instanceType: string;
    readonly zone?: string;
    readonly subnetId?: string;
    readonly lifecycle?: string;
  };
  readonly errors: readonly CreateFleetError[];
}

const FLEET_BATCH = { idleMs: 35, maxMs: 1000, maxItems: 1000 } as const;

export function fleetBatcher(
  ec2: Ec2Port,
  timers?: Timers,
  onBatch?: (size: number, ms: number) => void,
): Batcher<CreateFleetCommandInput, FleetOutcome> {
  return new Batcher<CreateFleetCommandInput, FleetOutcome>({
    ...FLEET_BATCH,
    key: (input) => canonical(input),
    ...(timers ? { timers } : {}),
    ...(onBatch ? { onBatch } : {}),
    exec: async (inputs) => {
      const first = inputs[0]!;
      const out = await ec2.createFleet({
        ...first,
        TargetCapacitySpecification: { ...first.TargetCapacitySpecification, TotalTargetCapacity: inputs.length },
      });
      const launched = out.instances.flatMap((fi) =>
        (fi.InstanceIds ?? []).map((id) => {
          const ov = fi.LaunchTemplateAndOverrides?.Overrides;
          return {
            id,
            instanceType: fi.InstanceType ?? ov?.InstanceType ?? '',
            ...(ov?.AvailabilityZone ? { zone: ov.AvailabilityZone } : {}),
            ...(ov?.SubnetId ? { subnetId: ov.SubnetId } : {}),
            ...(fi.Lifecycle ? { lifecycle: fi.Lifecycle } : {}),
          };
        }),
      );
      return inputs.map((_, i) => ({ ...(launched[i] ? { instance: launched[i] } : {}), errors: out.errors }));
    },
  });
}

/**
 * Records every per-override error in the caches; returns the offerings it marked. For a reserved launch a
 * capacity error (ReservationCapacityExceeded and the like) marks the override's reservation unavailable
 * (`reservationOf`) instead of the (type, zone) offering: on-demand capacity there is not implied to be short.
 */
export function recordFleetErrors(
  errors: readonly CreateFleetError[],
  capacityType: string,
  ice: UnavailableOfferings,
  zoneOfSubnet: (id: string) => string | undefined,
  reservations?: {
    readonly reservationOf: (instanceType: string, zone: string) => string | undefined;
    readonly markUnavailable: (id: string) => void;
  },
): UnavailableOffering[] {
  const marked: UnavailableOffering[] = [];
  for (const e of errors) {
    const code = e.ErrorCode;
    const ov = e.LaunchTemplateAndOverrides?.Overrides;
    if (code === SERVICE_LINKED_ROLE_CODE) ice.markCapacityTypeUnavailable('spot', code);
    if (!isUnfulfillableCapacity(code) || !ov?.InstanceType) continue;
    const zone = ov.AvailabilityZone ?? (ov.SubnetId ? zoneOfSubnet(ov.SubnetId) : undefined);
    if (!zone) continue;
    if (capacityType === 'reserved' && reservations) {
      const id = reservations.reservationOf(ov.InstanceType, zone);
      if (id) reservations.markUnavailable(id);
      marked.push({ instanceType: ov.InstanceType, zone, capacityType, code: code! });
      continue;
    }
    ice.markUnavailable(capacityType, ov.InstanceType, zone, code!);
    if (code === INSUFFICIENT_FREE_ADDRESSES_CODE && ov.SubnetId) ice.markSubnetUnavailable(ov.SubnetId, code);
    marked.push({ instanceType: ov.InstanceType, zone, capacityType, code: code! });
  }
  return marked;
}

/** The error for a launch that got no instance. */
export function noInstanceError(
  nodeClaim: string,
  errors: readonly CreateFleetError[],
  marked: readonly UnavailableOffering[],
): Error {
  const summary = errors.map((e) => `${e.ErrorCode ?? 'Unknown'}: ${e.ErrorMessage ?? ''}`.trim());
  const unique = [...new Set(summary)].slice(0, 5).join('; ');
  if (errors.length === 0)
    return new CreateError(
      `launching nodeclaim ${nodeClaim}: CreateFleet returned no instance and no error`,
      'LaunchFailed',
    );
  if (errors.every((e) => isCapacityOrSlrCode(e.ErrorCode))) {
    return new InsufficientCapacityError(
      `launching nodeclaim ${nodeClaim}: no offering had capacity (${unique})`,
      marked,
    );
  }
  const first = errors.find((e) => !isCapacityOrSlrCode(e.ErrorCode));
  return new CreateError(
    `launching nodeclaim ${nodeClaim}: ${unique}`,
    launchFailureReason(first?.ErrorCode, first?.ErrorMessage),
  );
}
