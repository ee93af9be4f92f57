// What a warm cluster model is told between decisions: the objects that changed since its last version.
// The caller's side (ModelMirror) remembers what it shipped and diffs the next snapshot against it; the
// worker's side (ClusterModel, model.ts) applies the delta. Everything here is plain data (msgpackr carries
// it to the worker); pods and nodes travel once and are then referred to by uid and name.
import type { DraState } from '../domain/dra.ts';
import type {
  DaemonSet,
  EngineOptions,
  InstanceType,
  NodeClass,
  NodePool,
  Pod,
  PodDisruptionBudget,
  SelectorSources,
  Snapshot,
  StateNode,
} from '../domain/types.ts';
import { sameData } from './equal.ts';

/** A state node without its pods, which travel on their own; `pods` lists their uids in order. */
export interface NodeRecord {
  readonly node: Omit<StateNode, 'pods'>;
  readonly pods: readonly string[];
}

export interface SnapshotDelta {
  /** The model version this delta applies to; 0: the model starts from nothing. */
  readonly base: number;
  /** The model's version once applied. */
  readonly version: number;
  readonly now: number;
  readonly options?: EngineOptions;
  readonly nodePools?: readonly NodePool[];
  readonly nodeClasses?: readonly NodeClass[];
  readonly daemonSets?: readonly DaemonSet[];
  readonly pdbs?: readonly PodDisruptionBudget[];
  /** Present when the DRA objects changed; `state` absent: none. */
  readonly dra?: { readonly state?: DraState };
  /** Present when the default-spread selector sources changed; `sources` absent: none. */
  readonly selectors?: { readonly sources?: SelectorSources };
  /** Instance types the model has not seen, by id. */
  readonly types?: ReadonlyArray<readonly [number, InstanceType]>;
  /** When any NodePool's instance types changed: every NodePool's, as type ids. */
  readonly catalog?: ReadonlyArray<readonly [string, readonly number[]]>;
  /** Pods added or changed (bound ones and pending ones alike, by uid). */
  readonly pods?: readonly Pod[];
  /**
   * Pods that changed only in fields holding a string, number or boolean (a pod bound or moved: nodeName,
   * phase, unschedulable): the uid and those fields, which replace the model's.
   */
  readonly podPatches?: ReadonlyArray<
    readonly [uid: string, fields: Readonly<Record<string, string | number | boolean>>]
  >;
  readonly podsRemoved?: readonly string[];
  /** State nodes added or changed (their fields, or which pods they hold). */
  readonly nodes?: readonly NodeRecord[];
  readonly nodesRemoved?: readonly string[];
  /** The nodes' order, when it changed (added and removed nodes change it). */
  readonly nodeOrder?: readonly string[];
  /** The pending pods' uids in order, when they changed. */
  readonly pending?: readonly string[];
}

/**
 * Pods an operation names: by their places in the snapshot's pending list when they are all pending pods the
 * model holds as the caller does (the common case: a provisioning decision), else by uid when the model has
 * them, else in full.
 */
export type PodRefs =
  | { readonly pendingAt: Uint32Array }
  | { readonly uids: readonly string[] }
  | { readonly pods: readonly Pod[] };

/** What was shipped and how much (tests and the controller's metrics read it). */
export interface DeltaStats {
  readonly full: boolean;
  readonly pods: number;
  readonly nodes: number;
  readonly types: number;
  readonly bytes: number;
}

interface Shipped {
  now: number;
  readonly pods: Map<string, Pod>;
  readonly nodes: Map<string, { readonly node: StateNode; readonly pods: readonly string[] }>;
  nodeOrder: readonly string[];
  pending: readonly string[];
  readonly types: Map<InstanceType, number>;
  readonly typesByName: Map<string, Array<readonly [InstanceType, number]>>;
  readonly catalog: Map<string, readonly InstanceType[]>;
  options?: EngineOptions;
  nodePools?: readonly NodePool[];
  nodeClasses?: readonly NodeClass[];
  daemonSets?: readonly DaemonSet[];
  pdbs?: readonly PodDisruptionBudget[];
  dra?: { readonly state?: DraState };
  selectors?: { readonly sources?: SelectorSources };
}

const empty = (): Shipped => ({
  now: 0,
  pods: new Map(),
  nodes: new Map(),
  nodeOrder: [],
  pending: [],
  types: new Map(),
  typesByName: new Map(),
  catalog: new Map(),
});

/** The same list by element identity, else by content. */
function sameList<T>(a: readonly T[] | undefined, b: readonly T[]): boolean {
  if (a === b) return true;
  if (!a || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !sameData(a[i], b[i])) return false;
  return true;
}

const sameNames = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/** A state node's fields but its pods, compared by content. */
function sameNode(a: StateNode, b: StateNode): boolean {
  if (a === b) return true;
  let n = 0;
  for (const k in a) {
    if (k === 'pods') continue;
    if (
      !(k in b) ||
      !sameData((a as unknown as Record<string, unknown>)[k], (b as unknown as Record<string, unknown>)[k])
    )
      return false;
    n++;
  }
  for (const k in b) if (k !== 'pods') n--;
  return n === 0;
}

/**
 * The caller's record of one warm model: what it holds, at which version. `diff` returns the delta from that
 * to a snapshot and a `commit` to call once the model applied it; after any failure, `reset` (the next
 * delta starts the model from nothing).
 */
export class ModelMirror {
  version = 0;
  private shipped: Shipped = empty();
  private nextTypeId = 1;

  reset(): void {
    this.version = 0;
    this.shipped = empty();
  }

  /**
   * The delta from what the model holds to `s` (plus `extra` pods an operation names); `refs` names pods as the
   * model will hold them once the delta is applied.
   */
  diff(
    s: Snapshot,
    extra: readonly Pod[] = [],
  ): {
    delta: SnapshotDelta;
    commit: () => void;
    refs: (pods: readonly Pod[]) => PodRefs;
    stats: Omit<DeltaStats, 'bytes'>;
  } {
    const full = this.version === 0;
    const prev = full ? empty() : this.shipped;
    const next: Shipped = { ...prev, now: s.now, pods: new Map(), nodes: new Map() };
    const d: { -readonly [K in keyof SnapshotDelta]: SnapshotDelta[K] } = {
      base: this.version,
      version: this.version + 1,
      now: s.now,
    };
    this.diffSmall(s, prev, next, d);
    this.diffCatalog(s, prev, next, d);
    const pods = diffPods(s, extra, prev, next, d);
    const nodes = diffNodes(s, prev, next, d);
    const pendingUids = s.pendingPods.map((p) => p.uid);
    if (!sameNames(prev.pending, pendingUids)) d.pending = pendingUids;
    next.pending = pendingUids;
    const commit = (): void => {
      this.shipped = next;
      this.version = d.version;
    };
    const refs = (list: readonly Pod[]): PodRefs => podRefs(list, s.pendingPods, next.pods);
    return { delta: d, commit, refs, stats: { full, pods, nodes, types: d.types?.length ?? 0 } };
  }

  /**
   * Pods shipped ahead of a decision (a provisioning batch window fills while its pods arrive): the delta that
   * adds the pods the model does not hold as they are here, nothing else, or undefined when it holds them all.
   * The next `diff` finds them shipped and sends only what changed since.
   */
  preload(
    pods: readonly Pod[],
  ): { delta: SnapshotDelta; commit: () => void; stats: Omit<DeltaStats, 'bytes'> } | undefined {
    if (this.version === 0) return undefined;
    const shipped = this.shipped.pods;
    const fresh: Pod[] = [];
    for (const p of pods) {
      const old = shipped.get(p.uid);
      if (old === p) continue;
      // A new object with the data the model holds (the watch re-sent the pod, or changed only what the engine
      // does not read) is recorded as shipped without a delta: the model's version stays where a plan solved
      // ahead of the decision expects it.
      if (old !== undefined && podChange(old, p) === undefined) shipped.set(p.uid, p);
      else fresh.push(p);
    }
    if (!fresh.length) return undefined;
    const delta: SnapshotDelta = { base: this.version, version: this.version + 1, now: this.shipped.now, pods: fresh };
    const commit = (): void => {
      for (const p of fresh) shipped.set(p.uid, p);
      this.version = delta.version;
    };
    return { delta, commit, stats: { full: false, pods: fresh.length, nodes: 0, types: 0 } };
  }

  private diffSmall(
    s: Snapshot,
    prev: Shipped,
    next: Shipped,
    d: { -readonly [K in keyof SnapshotDelta]: SnapshotDelta[K] },
  ): void {
    if (!prev.options || !sameData(prev.options, s.options)) d.options = s.options;
    next.options = s.options;
    if (!sameList(prev.nodePools, s.nodePools)) d.nodePools = s.nodePools;
    next.nodePools = s.nodePools;
    if (!sameList(prev.nodeClasses, s.nodeClasses)) d.nodeClasses = s.nodeClasses;
    next.nodeClasses = s.nodeClasses;
    if (!sameList(prev.daemonSets, s.daemonSets)) d.daemonSets = s.daemonSets;
    next.daemonSets = s.daemonSets;
    if (!sameList(prev.pdbs, s.pdbs)) d.pdbs = s.pdbs;
    next.pdbs = s.pdbs;
    const dra = s.dra ? { state: s.dra } : {};
    if (!prev.dra || !sameData(prev.dra, dra)) d.dra = dra;
    next.dra = dra;
    const selectors = s.selectorSources ? { sources: s.selectorSources } : {};
    if (!prev.selectors || !sameData(prev.selectors, selectors)) d.selectors = selectors;
    next.selectors = selectors;
  }

  /** New instance types get ids (a rebuilt type with the same content keeps its id); pools send id lists. */
  private diffCatalog(
    s: Snapshot,
    prev: Shipped,
    next: Shipped,
    d: { -readonly [K in keyof SnapshotDelta]: SnapshotDelta[K] },
  ): void {
    let changed = prev.catalog.size !== s.instanceTypes.size;
    for (const [pool, its] of s.instanceTypes) if (!sameIdentity(prev.catalog.get(pool), its)) changed = true;
    if (!changed) return;
    const types = new Map(prev.types);
    const byName = new Map(prev.typesByName);
    const fresh: Array<readonly [number, InstanceType]> = [];
    const idOf = (it: InstanceType): number => {
      const known = types.get(it);
      if (known !== undefined) return known;
      const same = (byName.get(it.name) ?? []).find(([t]) => sameData(t, it));
      const id = same ? same[1] : this.nextTypeId++;
      if (!same) fresh.push([id, it]);
      types.set(it, id);
      byName.set(it.name, [...(byName.get(it.name) ?? []), [it, id]]);
      return id;
    };
    d.catalog = [...s.instanceTypes].map(([pool, its]) => [pool, its.map(idOf)] as const);
    if (fresh.length) d.types = fresh;
    Object.assign(next, { types, typesByName: byName, catalog: new Map(s.instanceTypes) });
  }
}

/** By places in the pending list when every pod is pending there, by uid when the model will hold these very pods, else in full. */
function podRefs(list: readonly Pod[], pending: readonly Pod[], shipped: ReadonlyMap<string, Pod>): PodRefs {
  if (!list.every((p) => shipped.get(p.uid) === p)) return { pods: list };
  const at = new Map<Pod, number>();
  for (let i = 0; i < pending.length; i++) at.set(pending[i]!, i);
  const places = new Uint32Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const j = at.get(list[i]!);
    if (j === undefined) return { uids: list.map((p) => p.uid) };
    places[i] = j;
  }
  return { pendingAt: places };
}

const sameIdentity = <T>(a: readonly T[] | undefined, b: readonly T[]): boolean =>
  a === b || (a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]));

type Patch = NonNullable<SnapshotDelta['podPatches']>[number];
type Fields = Record<string, string | number | boolean>;

const isScalar = (x: unknown): x is string | number | boolean =>
  typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean';

/**
 * How `p` differs from `old`: undefined when alike, a patch when only fields holding a string, number or
 * boolean (on both sides, or new in `p`) differ and `p` has every field `old` has, else 'whole'.
 */
function podChange(old: Pod, p: Pod): Fields | undefined | 'whole' {
  const o = old as unknown as Record<string, unknown>;
  const n = p as unknown as Record<string, unknown>;
  let fields: Fields | undefined;
  let keys = 0;
  for (const k in n) {
    const v = n[k];
    if (k in o) keys++;
    const was = o[k];
    if (v === was || sameData(was, v)) {
      if (v !== undefined || k in o) continue;
      return 'whole';
    }
    if (!isScalar(v) || (was !== undefined && !isScalar(was)) || (was === undefined && k in o)) return 'whole';
    (fields ??= {})[k] = v;
  }
  for (const _ in o) keys--;
  return keys === 0 ? fields : 'whole';
}

/** Every pod of the snapshot (bound and pending) and `extra`: the changed ones shipped, the gone ones named. */
function diffPods(
  s: Snapshot,
  extra: readonly Pod[],
  prev: Shipped,
  next: Shipped,
  d: { -readonly [K in keyof SnapshotDelta]: SnapshotDelta[K] },
): number {
  const changed: Pod[] = [];
  const patches: Patch[] = [];
  const see = (p: Pod): void => {
    if (next.pods.has(p.uid)) return;
    const old = prev.pods.get(p.uid);
    next.pods.set(p.uid, p);
    if (old === p) return;
    const change = old === undefined ? 'whole' : podChange(old, p);
    if (change === 'whole') changed.push(p);
    else if (change) patches.push([p.uid, change]);
  };
  for (const n of s.nodes) for (const p of n.pods) see(p);
  for (const p of s.pendingPods) see(p);
  for (const p of extra) see(p);
  const removed: string[] = [];
  for (const uid of prev.pods.keys()) if (!next.pods.has(uid)) removed.push(uid);
  if (changed.length) d.pods = changed;
  if (patches.length) d.podPatches = patches;
  if (removed.length) d.podsRemoved = removed;
  return changed.length + patches.length;
}

/** State nodes whose fields or pod lists changed, the ones gone, and the order when it changed. */
function diffNodes(
  s: Snapshot,
  prev: Shipped,
  next: Shipped,
  d: { -readonly [K in keyof SnapshotDelta]: SnapshotDelta[K] },
): number {
  const changed: NodeRecord[] = [];
  for (const n of s.nodes) {
    const old = prev.nodes.get(n.name);
    // The very node object shipped last time (snapshot data is immutable): its fields and pods are the same.
    if (old?.node === n) {
      next.nodes.set(n.name, old);
      continue;
    }
    const uids = n.pods.map((p) => p.uid);
    next.nodes.set(n.name, { node: n, pods: uids });
    if (old && sameNames(old.pods, uids) && sameNode(old.node, n)) continue;
    const { pods: _pods, ...rest } = n;
    changed.push({ node: rest, pods: uids });
  }
  const removed: string[] = [];
  for (const name of prev.nodes.keys()) if (!next.nodes.has(name)) removed.push(name);
  const order = s.nodes.map((n) => n.name);
  if (!sameNames(prev.nodeOrder, order)) d.nodeOrder = order;
  next.nodeOrder = order;
  if (changed.length) d.nodes = changed;
  if (removed.length) d.nodesRemoved = removed;
  return changed.length;
}
