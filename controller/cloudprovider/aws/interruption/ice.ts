// A spot interruption warning marks its offering (spot, instance type, zone) unavailable for 3 minutes, so
// the replacement the controller provisions goes elsewhere (docs/karpenter/aws-provider.md §6: Karpenter's
// interruption controller does this before deleting the NodeClaim). The seam's events carry instance ids
// only; `instanceAt` finds the type and zone (the controller looks them up on its NodeClaims). A capacity
// reservation interruption warning marks the NodeClaim's reservation unavailable instead (through the seam's
// markUnavailable, which the interruption controller calls with the NodeClaim's reservation-id label).
import type { InterruptionSource } from '../../types.ts';
import type { UnavailableOfferings } from '../ice-cache.ts';

export interface InstancePlacement {
  readonly instanceType: string;
  readonly zone: string;
}

export function markingSpotInterruptions(
  source: InterruptionSource,
  ice: UnavailableOfferings,
  instanceAt: (instanceId: string) => InstancePlacement | undefined,
  reservations?: { markUnavailable(id: string): void },
): InterruptionSource {
  return {
    async receive(signal) {
      const batch = await source.receive(signal);
      for (const { event } of batch) {
        if (event.kind !== 'spotInterruption') continue;
        for (const id of event.instanceIds) {
          const at = instanceAt(id);
          if (at) ice.markUnavailable('spot', at.instanceType, at.zone, 'SpotInterruption');
        }
      }
      return batch;
    },
    acknowledge: (handle) => source.acknowledge(handle),
    markUnavailable: (event, capacity) => {
      if (event.kind === 'capacityReservationInterruption' && capacity.reservationId)
        reservations?.markUnavailable(capacity.reservationId);
    },
  };
}
