// The metrics decorator (Karpenter's metrics.Decorate): every call to the wrapped provider is timed in
// karpenter_cloudprovider_duration_seconds and failures counted in karpenter_cloudprovider_errors_total,
// labelled with the method, the provider, and the controller that made the call. Method names and error
// label values are Karpenter's (`Create`, ...; the three typed errors by name, anything else empty).
import type { Metrics } from '../operator/metrics.ts';
import {
  InsufficientCapacityError,
  NodeClaimNotFoundError,
  NodeClassNotReadyError,
  type CloudProvider,
} from './types.ts';

type Method = 'Create' | 'Delete' | 'Get' | 'List' | 'GetInstanceTypes' | 'IsDrifted';

/** The `error` label of a failed call. */
function errorLabel(err: unknown): string {
  if (err instanceof InsufficientCapacityError) return 'InsufficientCapacityError';
  if (err instanceof NodeClaimNotFoundError) return 'NodeClaimNotFoundError';
  if (err instanceof NodeClassNotReadyError) return 'NodeClassNotReadyError';
  return '';
}

/**
 * Wraps `cp`. `controller` names the caller in the labels: pass a function to read it per call (main.ts
 * gives each controller its own wrapped provider, so a constant is usual).
 */
export function withMetrics(
  cp: CloudProvider,
  metrics: Metrics,
  controller: string | (() => string) = '',
): CloudProvider {
  const who = typeof controller === 'function' ? controller : () => controller;
  const timed =
    <A extends unknown[], R>(method: Method, fn: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      const labels = { controller: who(), method, provider: cp.name };
      const end = metrics.cloudProviderDuration.startTimer(labels);
      try {
        return await fn(...a);
      } catch (err) {
        metrics.cloudProviderErrors.inc({ ...labels, error: errorLabel(err) });
        throw err;
      } finally {
        end();
      }
    };
  const wrapped: CloudProvider = {
    name: cp.name,
    create: timed('Create', (req) => cp.create(req)),
    delete: timed('Delete', (id) => cp.delete(id)),
    get: timed('Get', (id) => cp.get(id)),
    list: timed('List', () => cp.list()),
    getInstanceTypes: timed('GetInstanceTypes', (np) => cp.getInstanceTypes(np)),
    isDrifted: timed('IsDrifted', (q) => cp.isDrifted(q)),
    repairPolicies: () => cp.repairPolicies(),
    ...(cp.interruptions ? { interruptions: cp.interruptions } : {}),
    ...(cp.nodeClasses ? { nodeClasses: cp.nodeClasses } : {}),
    ...(cp.instanceTagging ? { instanceTagging: cp.instanceTagging } : {}),
  };
  return wrapped;
}
