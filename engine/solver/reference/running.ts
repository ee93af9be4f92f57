// What the topology needs from the pods already running on a node, remembered per pods array.
import type { Pod } from '../../domain/types.ts';

/**
 * What the constructor needs from a node's pods: their namespaces and the pods with required anti-affinity
 * (usually none). Remembered per pods array: disruption simulates the same immutable nodes again and again,
 * and at 30,000 running pods scanning them all on every solve was most of the constructor's time.
 */
const podsInfo = new WeakMap<readonly Pod[], { readonly namespaces: readonly string[]; readonly antiAffinity: readonly Pod[] }>();

export function podsOf(pods: readonly Pod[]): { readonly namespaces: readonly string[]; readonly antiAffinity: readonly Pod[] } {
  let info = podsInfo.get(pods);
  if (!info) {
    const namespaces = new Set<string>();
    const antiAffinity: Pod[] = [];
    for (const p of pods) {
      namespaces.add(p.namespace);
      if ((p.affinity?.podAntiAffinity?.required?.length ?? 0) > 0) antiAffinity.push(p);
    }
    podsInfo.set(pods, (info = { namespaces: [...namespaces], antiAffinity }));
  }
  return info;
}
