// Every outbound call is bounded. A Kubernetes request that gets no answer within its timeout, or an AWS
// SDK call whose attempts all timed out, fails that one operation with a RequestTimeoutError: the
// controller that made it logs it and retries it with its backoff, and every other loop goes on. Watches
// are the exception: they stay open by design and have their own liveness (client-node drops a watch
// that is silent for its request timeout and the informer reconnects). The timeouts are wall-clock, as
// network timeouts are, also under the simulator's clock.
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';

/** Kubernetes requests other than lists and watches (--kube-request-timeout). */
export const KUBE_REQUEST_TIMEOUT_MS = 30_000;
/** Kubernetes lists: an informer's list of a large cluster is megabytes (--kube-list-timeout). */
export const KUBE_LIST_TIMEOUT_MS = 120_000;
/** One AWS SDK attempt, request sent to response read (--aws-request-timeout). */
export const AWS_REQUEST_TIMEOUT_MS = 30_000;
/** Establishing the TCP (and TLS) connection to an AWS endpoint. */
export const AWS_CONNECT_TIMEOUT_MS = 5_000;

type OutboundClient = 'kubernetes' | 'aws';

/** A call that got no answer in time. `operation` is low-cardinality (`patch NodeClaim/status`, `ec2:CreateFleet`). */
export class RequestTimeoutError extends Error {
  override name = 'RequestTimeoutError';
  constructor(
    readonly client: OutboundClient,
    readonly operation: string,
    readonly timeoutMs: number,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export const isRequestTimeout = (e: unknown): e is RequestTimeoutError =>
  e instanceof Error && e.name === 'RequestTimeoutError';

/** What a timed-out call reports: one log line at error and the counter, by client and operation. */
export interface TimeoutReport {
  readonly client: OutboundClient;
  readonly operation: string;
  readonly timeoutMs: number;
  /** The request (a path without query for Kubernetes), for the log line only. */
  readonly target?: string;
  readonly err?: unknown;
}

export type TimeoutReporter = (r: TimeoutReport) => void;

export function timeoutReporter(log: Logger, metrics: Pick<Metrics, 'requestTimeouts'>): TimeoutReporter {
  return (r) => {
    metrics.requestTimeouts.inc({ client: r.client, operation: r.operation });
    const err = r.err instanceof Error ? r.err.message : r.err === undefined ? undefined : String(r.err);
    log.error(
      {
        client: r.client,
        operation: r.operation,
        timeoutMs: r.timeoutMs,
        ...(r.target ? { target: r.target } : {}),
        ...(err ? { err } : {}),
      },
      `${r.client} call timed out; the operation failed and is retried by its controller`,
    );
  };
}
