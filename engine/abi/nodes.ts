// Existing nodes' parts of the encoding that depend only on the node: its label set without the hostname
// (nodes of one type, zone and pool share it, so the solver sees one dense set for them) and the key of its
// taints. Remembered per requirements object and per node in the caller's caches: a disruption call (and a
// warm cluster model) encodes the same immutable nodes in every simulation (model/places.ts keeps one
// requirements object per node).
import type { Requirements, StateNode, Taint } from '../domain/types.ts';
import { cacheSlot, type ModelCaches } from '../model/caches.ts';
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

/** A key equal for equal taint lists (order-independent). */
export function taintsKey(ts: readonly Taint[]): string {
  return JSON.stringify(ts.map((t) => [t.key, t.value ?? '', t.effect]).sort());
}

/** taintsKey of an existing node's effective taints, which are a function of the node object. */
export function nodeTaintsKey(node: StateNode, taints: readonly Taint[], caches?: ModelCaches): string {
  return caches ? caches.memo(TAINT_KEYS, node, () => ({ key: taintsKey(taints) })).key : taintsKey(taints);
}
