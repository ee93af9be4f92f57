// What the topology needs from the pods already running on a node, remembered per pods array.
import type { Pod } from '../domain/types.ts';
import { cacheSlot, type ModelCaches } from './caches.ts';

interface RunningPods {
  readonly namespaces: readonly string[];
  /** The pods with required anti-affinity (usually none). */
  readonly antiAffinity: readonly Pod[];
}

/**
 * Remembered per pods array: disruption simulates the same immutable nodes again and again, and at 30,000
 * running pods scanning them all on every solve was most of the topology's set-up time.
 */
const RUNNING = cacheSlot<readonly Pod[], RunningPods>('running pods');

export function podsOf(pods: readonly Pod[], caches?: ModelCaches): RunningPods {
  return caches ? caches.memo(RUNNING, pods, () => scan(pods)) : scan(pods);
}

function scan(pods: readonly Pod[]): RunningPods {
  const namespaces = new Set<string>();
  const antiAffinity: Pod[] = [];
  for (const p of pods) {
    namespaces.add(p.namespace);
    if ((p.affinity?.podAntiAffinity?.required?.length ?? 0) > 0) antiAffinity.push(p);
  }
  return { namespaces: [...namespaces], antiAffinity };
}
