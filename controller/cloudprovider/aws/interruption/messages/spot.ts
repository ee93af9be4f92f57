// aws.ec2 "EC2 Spot Instance Interruption Warning": the instance is reclaimed in two minutes.
import type { InterruptionEvent } from '../../../types.ts';
import { instanceId, type Envelope } from '../envelope.ts';

export const key = { version: '0', source: 'aws.ec2', detailType: 'EC2 Spot Instance Interruption Warning' } as const;

export function parse(e: Envelope): InterruptionEvent {
  return { kind: 'spotInterruption', id: e.id, instanceIds: [instanceId(e)], time: e.time };
}
