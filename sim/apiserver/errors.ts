// Errors as the real API server reports them: a metav1 Status with a reason and an HTTP code. Every
// failure the simulated server can produce is built here, so messages match upstream wording (clients
// such as Karpenter match on reason and code, and people read the message).
import type { FieldError } from './types.ts';

type StatusReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'BadRequest'
  | 'MethodNotAllowed'
  | 'TooManyRequests'
  | 'Gone'
  | 'Expired'
  | 'InternalError'
  | 'UnsupportedMediaType'
  | 'Forbidden'
  | 'NotAcceptable'
  | 'Timeout'
  | 'ServiceUnavailable'
  | 'Unauthorized'
  | 'RequestEntityTooLarge';

interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
  }

  toStatus(): Status {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

/** How a resource is named in messages: `pods`, `nodeclaims.karpenter.sh`. */
interface Named {
  readonly group: string;
  readonly plural: string;
  readonly kind: string;
}

const qualified = (r: Named): string => (r.group ? `${r.plural}.${r.group}` : r.plural);
const kindName = (r: Named): string => (r.group ? `${r.kind}.${r.group}` : r.kind);
const details = (r: Named, name: string): StatusDetails => ({
  name,
  ...(r.group ? { group: r.group } : {}),
  kind: r.plural,
});

export const errors = {
  notFound: (r: Named, name: string) =>
    new ApiError(404, 'NotFound', `${qualified(r)} "${name}" not found`, details(r, name)),
  alreadyExists: (r: Named, name: string) =>
    new ApiError(409, 'AlreadyExists', `${qualified(r)} "${name}" already exists`, details(r, name)),
  conflict: (
    r: Named,
    name: string,
    why = 'the object has been modified; please apply your changes to the latest version and try again',
  ) =>
    new ApiError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualified(r)} "${name}": ${why}`,
      details(r, name),
    ),
  invalid: (r: Named, name: string, fieldErrors: readonly FieldError[]) => {
    const parts = fieldErrors.map((e) => `${e.field}: ${e.message}`);
    const text = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
    return new ApiError(422, 'Invalid', `${kindName(r)} "${name}" is invalid: ${text}`, {
      name,
      ...(r.group ? { group: r.group } : {}),
      kind: r.kind,
      causes: fieldErrors.map((e) => ({ reason: e.type ?? 'FieldValueInvalid', message: e.message, field: e.field })),
    });
  },
  badRequest: (message: string) => new ApiError(400, 'BadRequest', message),
  methodNotAllowed: (method: string, what: string) =>
    new ApiError(
      405,
      'MethodNotAllowed',
      `the server does not allow this method on the requested resource (${method} ${what})`,
    ),
  unsupportedMediaType: (
    type: string,
    accepted: readonly string[] = [
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/apply-patch+yaml',
    ],
  ) =>
    new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')} (got ${type})`,
    ),
  unauthorized: () => new ApiError(401, 'Unauthorized', 'Unauthorized'),
  entityTooLarge: (limit: number) =>
    new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`),
  /** A request refused before it reaches any resource (a foreign Host header). */
  refused: (why: string) => new ApiError(403, 'Forbidden', why),
  tooManyRequests: (message: string, causes?: StatusCause[]) =>
    new ApiError(429, 'TooManyRequests', message, causes ? { causes } : undefined),
  gone: (message: string) => new ApiError(410, 'Gone', message),
  expired: (message: string) => new ApiError(410, 'Expired', message),
  internal: (message: string) =>
    new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] }),
  forbidden: (r: Named, name: string, why: string) =>
    new ApiError(403, 'Forbidden', `${qualified(r)} "${name}" is forbidden: ${why}`, details(r, name)),
  pathNotFound: (path: string) =>
    new ApiError(404, 'NotFound', `the server could not find the requested resource (${path})`),
  /** A status with any code, for fault injection. */
  injected: (code: number, message: string) => new ApiError(code, reasonFor(code), message),
};

function reasonFor(code: number): StatusReason {
  const map: Record<number, StatusReason> = {
    400: 'BadRequest',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'NotFound',
    405: 'MethodNotAllowed',
    409: 'Conflict',
    410: 'Gone',
    413: 'RequestEntityTooLarge',
    415: 'UnsupportedMediaType',
    422: 'Invalid',
    429: 'TooManyRequests',
    503: 'ServiceUnavailable',
    504: 'Timeout',
  };
  return map[code] ?? 'InternalError';
}
