// Resource lists as Karpenter's metrics report them: cpu in cores, everything else in its base unit, and
// pod limits summed the way requests are (containers and sidecars add up, a plain init container counts
// only when it needs more than they do).
import { add, max, parseResources, type Resources } from '../../../engine/index.ts';
import type { KubeObject } from '../../operator/kube.ts';

/** A value as the metric shows it: millicores become cores. */
export const metricValue = (resource: string, v: number): number => (resource === 'cpu' ? v / 1000 : v);

type Container = { resources?: { limits?: Record<string, string> }; restartPolicy?: string };

function limitsOf(c: Container): Resources {
  try {
    return parseResources(c.resources?.limits);
  } catch {
    return {};
  }
}

/** The pod's limits in the engine's integer units (missing limits count as none). */
export function podLimits(obj: KubeObject): Resources {
  const spec = (obj.spec ?? {}) as {
    containers?: Container[];
    initContainers?: Container[];
    overhead?: Record<string, string>;
  };
  let total: Resources = {};
  let sidecars: Resources = {};
  let initMax: Resources = {};
  for (const c of spec.containers ?? []) total = add(total, limitsOf(c));
  for (const c of spec.initContainers ?? []) {
    const l = limitsOf(c);
    if (c.restartPolicy === 'Always') {
      total = add(total, l);
      sidecars = add(sidecars, l);
      initMax = max(initMax, sidecars);
    } else initMax = max(initMax, add(l, sidecars));
  }
  return max(total, initMax);
}
