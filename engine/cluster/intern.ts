// Pods of one workload are alike: the same labels, requests, tolerations, node selector, affinity and spread
// constraints, each decoded into an object of its own. A warm model holds every pod of the cluster (100,000 at
// the scale the controller benchmark runs), so it keeps one shared copy of each such part (the same content,
// the same object) and each pod refers to it. Snapshot data is immutable, so sharing is safe; the engine's
// identity caches key on pods, pod lists and nodes, never on these parts. Strings that repeat from pod to pod
// (namespace, phase, node name, priority class) are shared the same way: decoded, each pod had a copy.

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

/** String fields that many pods hold the same value in. */
const STRINGS = ['namespace', 'phase', 'nodeName', 'priorityClassName', 'nominatedNodeName', 'ignoredReason'] as const;

type Fields = Record<string, unknown>;

export class PodInterner {
  private readonly parts = new Map<string, object>();
  /** The shared copies in `parts`: a part that is one already needs no JSON key to be found. */
  private held = new WeakSet<object>();
  private readonly strings = new Map<string, string>();

  /**
   * `pod` with its parts and repeated strings replaced by the shared copies (a new object when any was). `owned`:
   * the pod is the caller's, just parsed and held by nothing else, so its fields are replaced in place (no copy:
   * parsePod's pod is laid out compactly, and a copy would be a second object made per pod).
   */
  intern(pod: Pod, owned = false): Pod {
    const src = pod as unknown as Fields;
    let out: Fields | undefined = owned ? src : undefined;
    for (const k of SHARED) {
      const v = src[k];
      if (v === undefined || v === null || typeof v !== 'object') continue;
      const shared = this.shared(k, v);
      if (shared === v) continue;
      out ??= { ...pod };
      out[k] = shared;
    }
    return (this.internStrings(src, out) as unknown as Pod | undefined) ?? pod;
  }

  /**
   * A pod patch's fields (strings, numbers, booleans only) with the repeated strings among them the shared
   * copies. The patched pod's parts are the model's shared ones already: interning the whole pod again keyed
   * each part by its JSON, 12-60 us a pod, for the thousands of pods a repack loop moves.
   */
  patch<T extends Readonly<Record<string, string | number | boolean>>>(fields: T): T {
    return (this.internStrings(fields, undefined) as T | undefined) ?? fields;
  }

  /**
   * `out` (or, when `src` has any of the repeated strings, a copy of `src`) with the repeated strings of `src` the
   * shared copies; undefined when `src` has none and `out` was undefined. A string's identity cannot be seen (`===`
   * compares content), so the shared copy is always written: comparing first kept every decoded copy.
   */
  private internStrings(src: Fields, out: Fields | undefined): Fields | undefined {
    for (const k of STRINGS) {
      const v = src[k];
      if (typeof v !== 'string') continue;
      out ??= { ...src };
      out[k] = this.string(v);
    }
    return out;
  }

  /** The shared copy of a string (the first one met with that content). */
  string(s: string): string {
    const known = this.strings.get(s);
    if (known !== undefined) return known;
    this.strings.set(s, s);
    return s;
  }

  /** How many distinct parts and strings are held. */
  get size(): number {
    return this.parts.size + this.strings.size;
  }

  /** Forgets the shared copies (pods keep theirs; later pods share new ones). */
  clear(): void {
    this.parts.clear();
    this.held = new WeakSet();
    this.strings.clear();
  }

  /** The shared copy of a part of anything (keyed by `field` and the part's JSON), or `v` when it is not plain data. */
  shared(field: string, v: object): object {
    // A part decoded once for many pods (engine/api/decode.ts PartMemo) is the shared copy from its second pod on.
    if (this.held.has(v)) return v;
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
    this.held.add(v);
    return v;
  }
}
