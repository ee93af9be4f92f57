// Interruption messages -> the seam's InterruptionEvent, through parsers keyed by (version, source,
// detail-type). An unknown key is a noop (Karpenter's no_op); a body that is not an event, or an event whose
// detail lacks what its parser needs, throws UnparseableMessageError.
import type { InterruptionEvent } from '../../types.ts';
import { parseEnvelope, type Envelope } from './envelope.ts';
import * as capacityReservation from './messages/capacityreservation.ts';
import * as health from './messages/health.ts';
import * as rebalance from './messages/rebalance.ts';
import * as spot from './messages/spot.ts';
import * as stateChange from './messages/statechange.ts';

interface MessageParser {
  readonly key: { readonly version: string; readonly source: string; readonly detailType: string };
  parse(e: Envelope): InterruptionEvent;
}

const keyOf = (version: string, source: string, detailType: string): string => `${version}/${source}/${detailType}`;

const PARSERS: ReadonlyMap<string, MessageParser> = new Map(
  [spot, rebalance, stateChange, health, capacityReservation].map((p) => [
    keyOf(p.key.version, p.key.source, p.key.detailType),
    p,
  ]),
);

export function parseMessage(body: string): InterruptionEvent {
  const e = parseEnvelope(body);
  const parser = PARSERS.get(keyOf(e.version, e.source, e.detailType));
  if (!parser)
    return {
      kind: 'noop',
      id: e.id,
      detail: `no handler for ${e.source} "${e.detailType}" (version ${e.version})`,
      time: e.time,
    };
  return parser.parse(e);
}
