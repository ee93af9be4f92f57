// Pods of one workload are alike: the same labels, requests, tolerations, node selector, affinity and spread
// constraints, each decoded into an object of its own. A warm model holds every pod of the cluster (100,000 at
// the scale the controller benchmark runs), so it keeps one shared copy of each such part (the same content,
// the same object) and each pod refers to it. Snapshot data is immutable, so sharing is safe; the engine's
// identity caches key on pods, pod lists and nodes, never on these parts.

import type { Pod } from '../domain/types.ts';

/** The parts of a pod shared between pods with the same content. */
const SHARED = [
  'labels',
  'annotations',
  'requests',
  'nodeSelector',
  'affinity',
  'tolerations',
  'topologySpreadConstraints',
  'hostPorts',
  'owner',
  'volumeRequirements',
  'pvcNames',
  'resourceClaims',
  'containerClaims',
] as const;

export class PodInterner {
  private readonly parts = new Map<string, object>();

  /** `pod` with its parts replaced by the shared copies (a new object when any part was replaced). */
  intern(pod: Pod): Pod {
    let out: Record<string, unknown> | undefined;
    for (const k of SHARED) {
      const v = (pod as unknown as Record<string, unknown>)[k];
      if (v === undefined || v === null || typeof v !== 'object') continue;
      const shared = this.shared(k, v);
      if (shared === v) continue;
      out ??= { ...pod };
      out[k] = shared;
    }
    return (out as unknown as Pod | undefined) ?? pod;
  }

  /** How many distinct parts are held. */
  get size(): number {
    return this.parts.size;
  }

  /** Forgets the shared copies (pods keep theirs; later pods share new ones). */
  clear(): void {
    this.parts.clear();
  }

  private shared(field: string, v: object): object {
    // Only plain data has a faithful JSON key: a part holding a Map, a Set or an undefined field keeps its own.
    let plain = true;
    const json = JSON.stringify(v, (_k, x: unknown) => {
      if (x === undefined || x instanceof Map || x instanceof Set || typeof x === 'function') plain = false;
      return x;
    });
    if (!plain) return v;
    const key = `${field}\u0000${json}`;
    const known = this.parts.get(key);
    if (known !== undefined) return known;
    this.parts.set(key, v);
    return v;
  }
}
