// aws.ec2 "EC2 Instance Rebalance Recommendation": elevated interruption risk; Karpenter only records an event.
import type { InterruptionEvent } from '../../../types.ts';
import { instanceId, type Envelope } from '../envelope.ts';

export const key = { version: '0', source: 'aws.ec2', detailType: 'EC2 Instance Rebalance Recommendation' } as const;

export function parse(e: Envelope): InterruptionEvent {
  return { kind: 'rebalanceRecommendation', id: e.id, instanceIds: [instanceId(e)], time: e.time };
}
