// The EventBridge envelope every interruption message arrives in (the SQS message Body): parsed first, so a
// parser can be chosen by (version, source, detail-type). Anything that is not such an envelope is
// unparseable: it is logged, counted and deleted rather than retried forever.

export interface Envelope {
  readonly version: string;
  readonly id: string;
  readonly detailType: string;
  readonly source: string;
  readonly account: string;
  /** ms since the epoch. */
  readonly time: number;
  readonly region: string;
  readonly resources: readonly string[];
  readonly detail: Readonly<Record<string, unknown>>;
}

export class UnparseableMessageError extends Error {
  override name = 'UnparseableMessageError';
}

const str = (o: Record<string, unknown>, k: string): string | undefined =>
  typeof o[k] === 'string' ? (o[k] as string) : undefined;

export function parseEnvelope(body: string): Envelope {
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch (e) {
    throw new UnparseableMessageError(`message body is not JSON: ${(e as Error).message}`, { cause: e });
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw new UnparseableMessageError('message body is not a JSON object');
  const o = raw as Record<string, unknown>;
  const missing = ['version', 'id', 'detail-type', 'source', 'time'].filter((k) => str(o, k) === undefined);
  if (missing.length)
    throw new UnparseableMessageError(`message is not an EventBridge event: missing ${missing.join(', ')}`);
  const time = Date.parse(str(o, 'time')!);
  if (Number.isNaN(time))
    throw new UnparseableMessageError(`event ${str(o, 'id')}: time "${str(o, 'time')}" is not a timestamp`);
  const detail = o.detail;
  if (detail !== undefined && (detail === null || typeof detail !== 'object' || Array.isArray(detail))) {
    throw new UnparseableMessageError(`event ${str(o, 'id')}: detail is not an object`);
  }
  return {
    version: str(o, 'version')!,
    id: str(o, 'id')!,
    detailType: str(o, 'detail-type')!,
    source: str(o, 'source')!,
    account: str(o, 'account') ?? '',
    time,
    region: str(o, 'region') ?? '',
    resources: Array.isArray(o.resources) ? o.resources.filter((r): r is string => typeof r === 'string') : [],
    detail: (detail ?? {}) as Record<string, unknown>,
  };
}

/** detail["instance-id"], required by the EC2 event kinds. */
export function instanceId(e: Envelope): string {
  const id = e.detail['instance-id'];
  if (typeof id !== 'string' || !id)
    throw new UnparseableMessageError(`event ${e.id} (${e.detailType}): detail.instance-id is missing`);
  return id;
}
