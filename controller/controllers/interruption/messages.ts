// What each interruption message means to the controller (docs/karpenter/aws-provider.md §6), as data: Karpenter's
// message kind (the `message_type` metric label and the `reason` of nodeclaims_disrupted_total), the action
// (CordonAndDrain deletes the NodeClaim; NoAction only records events) and the events it publishes on the
// NodeClaim and its Node. Reasons and messages are Karpenter's (pkg/controllers/interruption/events).
import type { InterruptionEvent } from '../../cloudprovider/types.ts';

export type MessageKind =
  | 'spot_interrupted'
  | 'rebalance_recommendation'
  | 'scheduled_change'
  | 'instance_stopped'
  | 'instance_terminated'
  | 'capacity_reservation_interrupted'
  | 'no_op';

type Action = 'CordonAndDrain' | 'NoAction';

interface Notice {
  readonly reason: string;
  readonly type: 'Normal' | 'Warning';
  readonly message: string;
}

/** States of an EC2 state-change notification that mean the instance is going away. */
const STOPPED = new Set(['stopping', 'stopped']);
const TERMINATED = new Set(['shutting-down', 'terminated']);

/**
 * Karpenter's kind for a parsed event. A state change to any other state (running, pending) is a no-op,
 * and so is an event of a kind this build does not know (a newer provider's), rather than a crash.
 */
export function kindOf(e: InterruptionEvent): MessageKind {
  switch (e.kind) {
    case 'spotInterruption':
      return 'spot_interrupted';
    case 'rebalanceRecommendation':
      return 'rebalance_recommendation';
    case 'scheduledChange':
      return 'scheduled_change';
    case 'capacityReservationInterruption':
      return 'capacity_reservation_interrupted';
    case 'stateChange':
      return STOPPED.has(e.state) ? 'instance_stopped' : TERMINATED.has(e.state) ? 'instance_terminated' : 'no_op';
    case 'noop':
    default:
      return 'no_op';
  }
}

/** Every kind but a rebalance recommendation (and a no-op) cordons and drains: the NodeClaim is deleted. */
export function actionFor(kind: MessageKind): Action {
  return kind === 'rebalance_recommendation' || kind === 'no_op' ? 'NoAction' : 'CordonAndDrain';
}

const NOTICES: Readonly<Record<MessageKind, Notice | undefined>> = {
  spot_interrupted: { reason: 'SpotInterrupted', type: 'Warning', message: 'Spot interruption warning was triggered' },
  rebalance_recommendation: {
    reason: 'SpotRebalanceRecommendation',
    type: 'Normal',
    message: 'Spot rebalance recommendation was triggered',
  },
  scheduled_change: {
    reason: 'InstanceUnhealthy',
    type: 'Warning',
    message: 'An unhealthy warning was triggered for the instance',
  },
  instance_stopped: { reason: 'InstanceStopping', type: 'Warning', message: 'Instance is stopping' },
  instance_terminated: { reason: 'InstanceTerminating', type: 'Warning', message: 'Instance is terminating' },
  // Karpenter's events.go has no helper for it yet; the reason is the one docs/karpenter/aws-provider.md §6 names.
  capacity_reservation_interrupted: {
    reason: 'CapacityReservationInstanceInterrupted',
    type: 'Warning',
    message: 'Capacity Reservation interruption warning was triggered',
  },
  no_op: undefined,
};

/** The event published on the NodeClaim and its Node (and, for a spot interruption, on its pods). */
export function noticeFor(kind: MessageKind): Notice | undefined {
  return NOTICES[kind];
}

/** Published on the NodeClaim and the Node after the NodeClaim was deleted. */
export const TERMINATING: { readonly reason: string; readonly nodeClaim: string; readonly node: string } = {
  reason: 'TerminatingOnInterruption',
  nodeClaim: 'Interruption triggered termination for the NodeClaim',
  node: 'Interruption triggered termination for the Node',
};

/** The instance id at the end of a providerID (`aws:///us-west-2a/i-0abc` -> `i-0abc`). */
export function instanceIdOf(providerID: string): string {
  return providerID.slice(providerID.lastIndexOf('/') + 1);
}
