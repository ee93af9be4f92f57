// Existing nodes' parts of the encoding that depend only on the node: its label set without the hostname
// (nodes of one type, zone and pool share it, so the solver sees one dense set for them) and the key of its
// taints. Remembered per requirements object and per node: a disruption call encodes the same immutable
// nodes in every simulation (reference/nodes.ts keeps one requirements object per node).
import type { Requirements, StateNode, Taint } from '../domain/types.ts';
import { withoutHostname } from './catalog.ts';

const labelSets = new WeakMap<Requirements, { readonly set: Requirements; readonly key: string }>();

/** The node's requirements without the hostname, and a key equal for equal label sets. */
export function nodeLabelSet(requirements: Requirements): { readonly set: Requirements; readonly key: string } {
  let v = labelSets.get(requirements);
  if (!v) {
    const set = withoutHostname(requirements);
    labelSets.set(requirements, (v = { set, key: JSON.stringify([...set.values()].map((x) => [x.key, [...x.values]])) }));
  }
  return v;
}

/** A key equal for equal taint lists (order-independent). */
export function taintsKey(ts: readonly Taint[]): string {
  return JSON.stringify(ts.map((t) => [t.key, t.value ?? '', t.effect]).sort());
}

const nodeTaintKeys = new WeakMap<StateNode, string>();

/** taintsKey of an existing node's effective taints, which are a function of the node object. */
export function nodeTaintsKey(node: StateNode, taints: readonly Taint[]): string {
  let k = nodeTaintKeys.get(node);
  if (k === undefined) nodeTaintKeys.set(node, (k = taintsKey(taints)));
  return k;
}
