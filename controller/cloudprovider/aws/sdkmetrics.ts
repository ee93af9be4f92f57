// The AWS SDK's request metrics under the names Karpenter exports for its Go SDK (aws_sdk_go_*, labelled
// service, action and HTTP code), from two middlewares on each client: one around the whole call (retries
// included: request total, duration, retry count), one around each attempt (attempt total and duration).
import type { Metrics } from '../../operator/metrics.ts';

interface Stackable {
  readonly middlewareStack: {
    add(
      mw: (
        next: (args: unknown) => Promise<unknown>,
        context: { clientName?: string; commandName?: string },
      ) => (args: unknown) => Promise<unknown>,
      opts: { step: 'initialize' | 'deserialize'; name: string },
    ): void;
  };
}

interface Meta {
  readonly $metadata?: { readonly httpStatusCode?: number; readonly attempts?: number };
  readonly $response?: { readonly statusCode?: number };
}

const codeOf = (r: unknown): string => {
  const m = r as Meta | undefined;
  return String(m?.$metadata?.httpStatusCode ?? m?.$response?.statusCode ?? 0);
};

function labelsOf(
  context: { clientName?: string; commandName?: string },
  code: string,
): { service: string; action: string; code: string } {
  return {
    service: (context.clientName ?? '').replace(/Client$/, ''),
    action: (context.commandName ?? '').replace(/Command$/, ''),
    code,
  };
}

async function timed(
  next: (args: unknown) => Promise<unknown>,
  args: unknown,
): Promise<{ out?: unknown; err?: unknown; ms: number }> {
  const start = performance.now();
  try {
    const out = await next(args);
    return { out, ms: performance.now() - start };
  } catch (err) {
    return { err, ms: performance.now() - start };
  }
}

/** Adds the metric middlewares to an SDK v3 client. */
function instrumentSdkClient(client: Stackable, metrics: Metrics): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const r = await timed(next, args);
      const meta = (r.err ?? (r.out as { output?: unknown } | undefined)?.output) as Meta | undefined;
      const labels = labelsOf(context, codeOf(meta));
      metrics.awsRequests.inc(labels);
      metrics.awsRequestDuration.observe(labels, r.ms / 1000);
      metrics.awsRetryCount.observe(labels, Math.max(0, (meta?.$metadata?.attempts ?? 1) - 1));
      if (r.err !== undefined) throw r.err;
      return r.out;
    },
    { step: 'initialize', name: 'karpenterTsRequestMetrics' },
  );
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const r = await timed(next, args);
      const response = (r.out as { response?: { statusCode?: number } } | undefined)?.response;
      const labels = labelsOf(
        context,
        response?.statusCode !== undefined ? String(response.statusCode) : codeOf(r.err),
      );
      metrics.awsRequestAttempts.inc(labels);
      metrics.awsAttemptDuration.observe(labels, r.ms / 1000);
      if (r.err !== undefined) throw r.err;
      return r.out;
    },
    { step: 'deserialize', name: 'karpenterTsAttemptMetrics' },
  );
}

/** Instruments every SDK client of a set (fields that are not clients, like the timeout, are passed over). */
export function instrumentSdkClients(clients: object, metrics: Metrics): void {
  for (const c of Object.values(clients)) {
    if (c && typeof c === 'object' && 'middlewareStack' in c) instrumentSdkClient(c as Stackable, metrics);
  }
}
