// Existing nodes' parts of the encoding that depend only on the node: its label set without the hostname
// (nodes of one type, zone and pool share it, so the solver sees one dense set for them) and the key of its
// taints. Remembered per requirements object and per node in the caller's caches: a disruption call (and a
// warm cluster model) encodes the same immutable nodes in every simulation (model/places.ts keeps one
// requirements object per node).
import type { Requirement, Requirements, StateNode, Taint } from '../domain/types.ts';
import { cacheSlot, type ModelCaches } from '../model/caches.ts';
import { HOSTNAME_LABEL } from '../scheduling/labels.ts';
import { withoutHostname } from './catalog.ts';

interface LabelSet {
  readonly set: Requirements;
  /** Equal for equal label sets. */
  readonly key: string;
}

const LABEL_SETS = cacheSlot<Requirements, LabelSet>('node label sets');
const TAINT_KEYS = cacheSlot<StateNode, { readonly key: string }>('node taint keys');

/** The node's requirements without the hostname, and a key equal for equal label sets. */
export function nodeLabelSet(requirements: Requirements, caches?: ModelCaches): LabelSet {
  return caches ? caches.memo(LABEL_SETS, requirements, () => labelSetOf(requirements)) : labelSetOf(requirements);
}

function labelSetOf(requirements: Requirements): LabelSet {
  const set = withoutHostname(requirements);
  return { set, key: JSON.stringify([...set.values()].map((x) => [x.key, [...x.values]])) };
}

/** A step of SharedLabelSets' trie: the requirement objects read so far lead here. */
interface LabelPath {
  readonly next: Map<Requirement, LabelPath>;
  /** The shared label set of the requirements that end here. */
  found?: Requirements;
}

/**
 * One label set object per distinct label set (without the hostname) of many nodes' requirements: the first set
 * seen with a key (nodeLabelSet) stands for every set with that key. Nodes' requirements are mostly made of shared
 * requirement objects (model/places.ts: one per label and value), so the requirements are first walked as a path
 * of those objects, hostname skipped: nodes whose requirements are the same objects in the same order (nodes of
 * one type, zone and pool) reach the set without building it or its key. Requirement objects are never written
 * to, so the same path always has the same key; a path seen for the first time looks its set up by key.
 */
export class SharedLabelSets {
  private readonly byKey = new Map<string, Requirements>();
  private readonly root: LabelPath = { next: new Map() };

  constructor(private readonly caches?: ModelCaches) {}

  of(requirements: Requirements): Requirements {
    let at = this.root;
    for (const [k, r] of requirements) {
      if (k === HOSTNAME_LABEL) continue;
      let next = at.next.get(r);
      if (next === undefined) at.next.set(r, (next = { next: new Map() }));
      at = next;
    }
    if (at.found !== undefined) return at.found;
    const { set, key } = nodeLabelSet(requirements, this.caches);
    let seen = this.byKey.get(key);
    if (seen === undefined) this.byKey.set(key, (seen = set));
    at.found = seen;
    return seen;
  }
}

/** A key equal for equal taint lists (order-independent). */
export function taintsKey(ts: readonly Taint[]): string {
  return JSON.stringify(ts.map((t) => [t.key, t.value ?? '', t.effect]).sort());
}

/** taintsKey of an existing node's effective taints, which are a function of the node object. */
export function nodeTaintsKey(node: StateNode, taints: readonly Taint[], caches?: ModelCaches): string {
  return caches ? caches.memo(TAINT_KEYS, node, () => ({ key: taintsKey(taints) })).key : taintsKey(taints);
}
