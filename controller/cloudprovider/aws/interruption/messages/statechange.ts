// aws.ec2 "EC2 Instance State-change Notification": acted on only for states that take the node away.
import type { InterruptionEvent } from '../../../types.ts';
import { instanceId, UnparseableMessageError, type Envelope } from '../envelope.ts';

export const key = { version: '0', source: 'aws.ec2', detailType: 'EC2 Instance State-change Notification' } as const;

export const ACCEPTED_STATES: ReadonlySet<string> = new Set(['stopping', 'stopped', 'shutting-down', 'terminated']);

export function parse(e: Envelope): InterruptionEvent {
  const state = e.detail.state;
  if (typeof state !== 'string')
    throw new UnparseableMessageError(`event ${e.id} (${e.detailType}): detail.state is missing`);
  const id = instanceId(e);
  if (!ACCEPTED_STATES.has(state))
    return { kind: 'noop', id: e.id, detail: `instance ${id} state ${state} needs no action`, time: e.time };
  return { kind: 'stateChange', id: e.id, instanceIds: [id], state, time: e.time };
}
