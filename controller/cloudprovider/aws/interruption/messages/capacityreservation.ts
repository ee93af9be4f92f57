// aws.ec2 "EC2 Capacity Reservation Instance Interruption Warning": an interruptible reservation is taking
// its capacity back.
import type { InterruptionEvent } from '../../../types.ts';
import { instanceId, type Envelope } from '../envelope.ts';

export const key = {
  version: '0',
  source: 'aws.ec2',
  detailType: 'EC2 Capacity Reservation Instance Interruption Warning',
} as const;

export function parse(e: Envelope): InterruptionEvent {
  return { kind: 'capacityReservationInterruption', id: e.id, instanceIds: [instanceId(e)], time: e.time };
}
