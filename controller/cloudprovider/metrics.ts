// The metrics decorator (Karpenter's metrics.Decorate): every call to the wrapped provider is timed in
// karpenter_cloudprovider_duration_seconds and failures counted in karpenter_cloudprovider_errors_total,
// labelled with the method, the provider, and the controller that made the call.
import type { Metrics } from '../operator/metrics.ts';
import type { CloudProvider } from './types.ts';

type Method = 'create' | 'delete' | 'get' | 'list' | 'getInstanceTypes' | 'isDrifted';

/**
 * Wraps `cp`. `controller` names the caller in the labels: pass a function to read it per call (main.ts
 * gives each controller its own wrapped provider, so a constant is usual).
 */
export function withMetrics(cp: CloudProvider, metrics: Metrics, controller: string | (() => string) = ''): CloudProvider {
  const who = typeof controller === 'function' ? controller : () => controller;
  const timed = <A extends unknown[], R>(method: Method, fn: (...a: A) => Promise<R>) => async (...a: A): Promise<R> => {
    const labels = { controller: who(), method, provider: cp.name };
    const end = metrics.cloudProviderDuration.startTimer(labels);
    try {
      return await fn(...a);
    } catch (err) {
      metrics.cloudProviderErrors.inc({ ...labels, error: err instanceof Error ? err.name : 'unknown' });
      throw err;
    } finally {
      end();
    }
  };
  const wrapped: CloudProvider = {
    name: cp.name,
    create: timed('create', (req) => cp.create(req)),
    delete: timed('delete', (id) => cp.delete(id)),
    get: timed('get', (id) => cp.get(id)),
    list: timed('list', () => cp.list()),
    getInstanceTypes: timed('getInstanceTypes', (np) => cp.getInstanceTypes(np)),
    isDrifted: timed('isDrifted', (q) => cp.isDrifted(q)),
    repairPolicies: () => cp.repairPolicies(),
    ...(cp.interruptions ? { interruptions: cp.interruptions } : {}),
    ...(cp.nodeClasses ? { nodeClasses: cp.nodeClasses } : {}),
    ...(cp.instanceTagging ? { instanceTagging: cp.instanceTagging } : {}),
  };
  return wrapped;
}
