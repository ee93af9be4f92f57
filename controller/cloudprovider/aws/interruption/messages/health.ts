// aws.health "AWS Health Event": acted on only for EC2 scheduled changes (retirement, maintenance); the
// instances are the affected entities.
import type { InterruptionEvent } from '../../../types.ts';
import { UnparseableMessageError, type Envelope } from '../envelope.ts';

export const key = { version: '0', source: 'aws.health', detailType: 'AWS Health Event' } as const;

export function parse(e: Envelope): InterruptionEvent {
  const { service, eventTypeCategory, affectedEntities } = e.detail as {
    service?: unknown;
    eventTypeCategory?: unknown;
    affectedEntities?: unknown;
  };
  if (service !== 'EC2' || eventTypeCategory !== 'scheduledChange') {
    return {
      kind: 'noop',
      id: e.id,
      detail: `health event for service ${String(service)}, category ${String(eventTypeCategory)} needs no action`,
      time: e.time,
    };
  }
  if (!Array.isArray(affectedEntities))
    throw new UnparseableMessageError(`event ${e.id} (${e.detailType}): detail.affectedEntities is not a list`);
  const ids = affectedEntities.flatMap((a: unknown) => {
    const v = (a as { entityValue?: unknown } | null)?.entityValue;
    return typeof v === 'string' && v ? [v] : [];
  });
  if (!ids.length)
    throw new UnparseableMessageError(`event ${e.id} (${e.detailType}): no affectedEntities[].entityValue`);
  return { kind: 'scheduledChange', id: e.id, instanceIds: ids, time: e.time };
}
