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

/** What the model holds that is not a node or a pod. */
interface ShippedRest {
  now: number;
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

/** What the model holds. Kept up to date in place by a diff's commit, in time proportional to what changed. */
interface Shipped extends ShippedRest {
  readonly pods: Map<string, Pod>;
  /**
   * Pod uid -> the node whose pod list names it (one at most: listedTwice), when that is not the held pod's
   * nodeName: a held pod not in `loose` is named by its own node unless this says otherwise (linkOf).
   */
  readonly away: Map<string, string>;
  /** Pods held but named by no node (pending pods, pods an operation named, preloaded pods). */
  loose: Set<string>;
  /**
   * The nodes as shipped: the very StateNode objects (an unchanged node is the same object next time). Their pod
   * lists are the lists shipped (snapshot data is never changed in place), so the uids a node named are read off
   * its own list rather than kept in a copy of their own.
   */
  readonly nodes: Map<string, StateNode>;
  nodeOrder: readonly string[];
  pending: readonly string[];
  /**
   * The pod objects the last diff read as pending pods and as its operation's pods, in order (undefined after a
   * preload): a next diff given these very objects, with no node changed, has nothing of theirs to read.
   */
  read?: { readonly pending: readonly Pod[]; readonly extra: readonly Pod[] };
}

const empty = (): Shipped => ({
  now: 0,
  pods: new Map(),
  away: new Map(),
  loose: new Set(),
  nodes: new Map(),
  nodeOrder: [],
  pending: [],
  types: new Map(),
  typesByName: new Map(),
  catalog: new Map(),
});

type MutableDelta = { -readonly [K in keyof SnapshotDelta]: SnapshotDelta[K] };

/** The same list by element identity, else by content. */
function sameList<T>(a: readonly T[] | undefined, b: readonly T[]): boolean {
  if (a === b) return true;
  if (!a || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !sameData(a[i], b[i])) return false;
  return true;
}

const sameNames = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/** Two pod lists name the same uids in the same order. */
const sameUids = (a: readonly Pod[], b: readonly Pod[]): boolean =>
  a.length === b.length && a.every((p, i) => p.uid === b[i]!.uid);

const uidsOf = (pods: readonly Pod[]): string[] => pods.map((p) => p.uid);

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
 *
 * A diff costs what changed, not the cluster's size: a node that is the very object shipped last time (cluster
 * state hands out the same StateNode until its Node, NodeClaim, pods or marks change; snapshot data is never
 * changed in place) is passed over with its pods unread, so only the pods of new or rejoined nodes, the pending
 * pods and the operation's own pods are compared. A new node object whose pod list is the very array shipped with
 * the node before (cluster state keeps it while no pod on the node changed) has its fields compared and its pods
 * passed over too. What remains per node is one identity check and its name.
 * When no node changed and the pending pods and the operation's pods are the very objects the last committed diff
 * read, in the same order (a provisioning decision at its batch window's close after the speculative solve over the
 * same cluster), no pod is read at all: one identity check per pod, and the pods' refs are the last diff's.
 */
export class ModelMirror {
  version = 0;
  private shipped: Shipped = empty();
  private nextTypeId = 1;
  /**
   * The token of the last diff committed (undefined after a preload or a reset): its pass itself is not kept, as a
   * full diff's holds every pod it read.
   */
  private committed: PassToken | undefined;
  /**
   * The last refs worked out and the diff they were worked out for (`from`), or the last diff that had them
   * again (`via`): while the model holds what one of these diffs saw (it is the last committed), a diff that read
   * no pod has the same refs for the same pods and pending list.
   */
  private lastRefs:
    | {
        readonly from: PassToken;
        readonly via: PassToken;
        readonly list: readonly Pod[];
        readonly pending: readonly Pod[];
        readonly refs: PodRefs;
      }
    | undefined;

  reset(): void {
    this.version = 0;
    this.shipped = empty();
    this.committed = undefined;
    this.lastRefs = undefined;
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
    const rest = restOf(prev, s.now);
    const d: MutableDelta = { base: this.version, version: this.version + 1, now: s.now };
    diffSmall(s, prev, rest, d);
    this.diffCatalog(s, prev, rest, d);
    const pass = diffObjects(s, extra, prev, d);
    const token: PassToken = {};
    const commit = (): void => {
      const target = full ? empty() : this.shipped;
      Object.assign(target, rest);
      applyPass(target, pass);
      this.shipped = target;
      this.version = d.version;
      this.committed = token;
    };
    const shippedPod = (uid: string): Pod | undefined =>
      pass.seen.get(uid) ?? (pass.removed.has(uid) ? undefined : prev.pods.get(uid));
    const refs = (list: readonly Pod[]): PodRefs => {
      // The pods held as at the last diff: its refs for the same pods and pending list are these refs.
      const last = this.lastRefs;
      const held = this.committed;
      const same =
        last !== undefined &&
        pass.readNoPod &&
        held !== undefined &&
        (last.from === held || last.via === held) &&
        sameIdentity(last.list, list) &&
        sameIdentity(last.pending, s.pendingPods);
      if (same) {
        this.lastRefs = { ...last, from: held, via: token };
        return last.refs;
      }
      const out = podRefs(list, s.pendingPods, shippedPod);
      this.lastRefs = { from: token, via: token, list: list.slice(), pending: pass.read.pending, refs: out };
      return out;
    };
    return {
      delta: d,
      commit,
      refs,
      stats: { full, pods: pass.podsShipped, nodes: pass.nodesShipped, types: d.types?.length ?? 0 },
    };
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
    const shipped = this.shipped;
    const fresh: Pod[] = [];
    for (const p of pods) {
      const old = shipped.pods.get(p.uid);
      if (old === p) continue;
      // A new object with the data the model holds (the watch re-sent the pod, or changed only what the engine
      // does not read) is recorded as shipped without a delta: the model's version stays where a plan solved
      // ahead of the decision expects it.
      if (old !== undefined && podChange(old, p) === undefined) {
        holdPod(shipped, p);
        // Not the object the last diff read: the next one reads the pods again.
        shipped.read = undefined;
        this.committed = undefined;
      } else fresh.push(p);
    }
    if (!fresh.length) return undefined;
    const delta: SnapshotDelta = { base: this.version, version: this.version + 1, now: shipped.now, pods: fresh };
    const commit = (): void => {
      for (const p of fresh) if (holdPod(shipped, p) === undefined) shipped.loose.add(p.uid);
      shipped.read = undefined;
      this.committed = undefined;
      this.version = delta.version;
    };
    return { delta, commit, stats: { full: false, pods: fresh.length, nodes: 0, types: 0 } };
  }

  /**
   * The model carried commands out on what it holds (ops.ts, carryOut) and `after` is what the caller made of the
   * snapshot of the last committed diff by the same commands (applyCommands, deterministic): the model holds
   * `after`, at the next version, with nothing shipped. Only the nodes that are not the objects shipped are read.
   */
  assume(after: Snapshot): void {
    const sh = this.shipped;
    if (this.version === 0 || after.now !== sh.now)
      throw new Error('model mirror: assume takes the snapshot after commands carried out on the one last shipped');
    const touched: StateNode[] = [];
    const order = new Array<string>(after.nodes.length);
    const seen = new Map<string, Pod>();
    for (let i = 0; i < after.nodes.length; i++) {
      const n = after.nodes[i]!;
      order[i] = n.name;
      if (sh.nodes.get(n.name) === n) continue;
      for (const p of n.pods)
        if (!seen.has(p.uid)) seen.set(p.uid, p);
        else refuseListedBefore(touched, n, p);
      touched.push(n);
    }
    const nodesRemoved = sameNames(sh.nodeOrder, order) ? [] : goneNodes(sh, order);
    const linked = linkedElsewhere(sh, touched, nodesRemoved);
    refuseListedElsewhere(sh, listings(touched), linked);
    // As the model drops them (ClusterModel.adopt): pods of a node carried away that no node names now, nor pending.
    const removed = new Set<string>();
    const check = (uid: string): void => {
      if (!seen.has(uid) && !linked(uid) && !sh.loose.has(uid)) removed.add(uid);
    };
    for (const t of touched) for (const p of sh.nodes.get(t.name)?.pods ?? []) check(p.uid);
    for (const name of nodesRemoved) for (const p of sh.nodes.get(name)?.pods ?? []) check(p.uid);
    applyPass(sh, {
      seen,
      loose: new Set(sh.loose),
      touched,
      refreshed: [],
      nodesRemoved,
      removed,
      nodeOrder: order,
      pending: sh.pending,
      read: { pending: [], extra: [] },
      readNoPod: false,
      podsShipped: 0,
      nodesShipped: 0,
    });
    // The next diff reads the pending pods again (cheap) rather than trusting a read made before the commands.
    sh.read = undefined;
    this.version++;
    this.committed = undefined;
    this.lastRefs = undefined;
  }

  /** New instance types get ids (a rebuilt type with the same content keeps its id); pools send id lists. */
  private diffCatalog(s: Snapshot, prev: ShippedRest, next: ShippedRest, d: MutableDelta): void {
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

/** The mirror's record of all but nodes and pods, with the snapshot's clock. */
function restOf(prev: ShippedRest, now: number): ShippedRest {
  const { types, typesByName, catalog, options, nodePools, nodeClasses, daemonSets, pdbs, dra, selectors } = prev;
  return { now, types, typesByName, catalog, options, nodePools, nodeClasses, daemonSets, pdbs, dra, selectors };
}

function diffSmall(s: Snapshot, prev: ShippedRest, next: ShippedRest, d: MutableDelta): void {
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

/** By places in the pending list when every pod is pending there, by uid when the model will hold these very pods, else in full. */
function podRefs(list: readonly Pod[], pending: readonly Pod[], shipped: (uid: string) => Pod | undefined): PodRefs {
  if (!list.every((p) => shipped(p.uid) === p)) return { pods: list };
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

/** Which diff: compared by identity only (ModelMirror.committed, lastRefs). */
type PassToken = Readonly<Record<string, never>>;

/** What a diff found, for its commit to apply to the mirror. */
interface ObjectPass {
  /** Every pod read this time (on new or rejoined nodes, pending, named by the operation): uid -> the pod. */
  readonly seen: Map<string, Pod>;
  /** Of those, the ones no node names. */
  readonly loose: Set<string>;
  /** Nodes new or rejoined (shipped or not: their record is kept either way). */
  readonly touched: readonly StateNode[];
  /** Nodes rejoined with the very pod list shipped before: their record is kept, their pods' links stay. */
  readonly refreshed: readonly StateNode[];
  readonly nodesRemoved: readonly string[];
  readonly removed: ReadonlySet<string>;
  readonly nodeOrder: readonly string[];
  readonly pending: readonly string[];
  /** The pod objects read as pending and as the operation's, for the next diff (Shipped.read). */
  readonly read: NonNullable<Shipped['read']>;
  /** No pod was read: they were all the very objects the last diff read, and no node changed. */
  readonly readNoPod: boolean;
  podsShipped: number;
  nodesShipped: number;
}

/**
 * Nodes and pods: the nodes that are not the very objects shipped last time are read (their fields, their pods),
 * the others passed over; then the pending pods and `extra`; then which pods and nodes the model holds that the
 * snapshot no longer has.
 */
function diffObjects(s: Snapshot, extra: readonly Pod[], prev: Shipped, d: MutableDelta): ObjectPass {
  const pods = new PodDiff(prev);
  const touched: StateNode[] = [];
  const refreshed: StateNode[] = [];
  const shipNodes: NodeRecord[] = [];
  const order: string[] = new Array(s.nodes.length);
  for (let i = 0; i < s.nodes.length; i++) {
    const n = s.nodes[i]!;
    order[i] = n.name;
    const old = prev.nodes.get(n.name);
    // The very node object shipped last time (snapshot data is immutable): its fields and pods are the same.
    if (old === n) continue;
    // A new node object with the very pod list shipped before (a nomination or a condition changed): its pods are
    // held as they are, so only its own fields are compared (a record shipped names them by uid, read off the list);
    // its pods stay linked as a node passed over.
    if (old?.pods === n.pods) {
      refreshed.push(n);
      if (sameNode(old, n)) continue;
      const { pods: _pods, ...rest } = n;
      shipNodes.push({ node: rest, pods: uidsOf(n.pods) });
      continue;
    }
    for (const p of n.pods) if (!pods.see(p, n.name)) refuseListedBefore(touched, n, p);
    touched.push(n);
    if (old && sameUids(old.pods, n.pods) && sameNode(old, n)) continue;
    const { pods: _pods, ...rest } = n;
    shipNodes.push({ node: rest, pods: uidsOf(n.pods) });
  }
  const nodesRemoved = sameNames(prev.nodeOrder, order) ? [] : goneNodes(prev, order);
  if (!sameNames(prev.nodeOrder, order)) d.nodeOrder = order;
  if (shipNodes.length) d.nodes = shipNodes;
  if (nodesRemoved.length) d.nodesRemoved = nodesRemoved;
  const read = { pending: s.pendingPods.slice(), extra: extra.slice() };
  const nodes = { touched, refreshed, nodesRemoved, nodeOrder: order, nodesShipped: shipNodes.length };
  // No node read and the very pod objects the last diff read: every one of them is held as it is here.
  if (!touched.length && !nodesRemoved.length && prev.read && sameObjects(prev.read, read))
    return {
      ...nodes,
      seen: new Map(),
      loose: prev.loose,
      removed: new Set(),
      pending: prev.pending,
      read,
      readNoPod: true,
      podsShipped: 0,
    };
  const linked = linkedElsewhere(prev, touched, nodesRemoved);
  refuseListedElsewhere(prev, pods.linkedAway, linked);
  for (const p of s.pendingPods) if (!linked(p.uid)) pods.see(p);
  for (const p of extra) if (!linked(p.uid)) pods.see(p);
  const removed = pods.gone(prev, touched, nodesRemoved, linked);
  const pending = s.pendingPods.map((p) => p.uid);
  if (!sameNames(prev.pending, pending)) d.pending = pending;
  pods.into(d, removed);
  return {
    ...nodes,
    seen: pods.seen,
    loose: pods.loose,
    removed,
    pending,
    read,
    readNoPod: false,
    podsShipped: pods.shipped(),
  };
}

/** The same pods, object for object, in the same order. */
function sameObjects(a: NonNullable<Shipped['read']>, b: NonNullable<Shipped['read']>): boolean {
  return sameIdentity(a.pending, b.pending) && sameIdentity(a.extra, b.extra);
}

/** Names of the shipped nodes the snapshot no longer has. */
function goneNodes(prev: Shipped, order: readonly string[]): string[] {
  const now = new Set(order);
  const out: string[] = [];
  for (const name of prev.nodes.keys()) if (!now.has(name)) out.push(name);
  return out;
}

/**
 * Whether a pod is named by a shipped node this diff passed over (that node still names it, with the object
 * shipped: the node's object wins over a pending or operation pod with the same uid, as a full pass would).
 */
function linkedElsewhere(
  prev: Shipped,
  touched: readonly StateNode[],
  nodesRemoved: readonly string[],
): (uid: string) => boolean {
  const stale = new Set(nodesRemoved);
  for (const t of touched) stale.add(t.name);
  return (uid) => {
    const at = linkOf(prev, uid);
    return at !== undefined && !stale.has(at);
  };
}

/**
 * A pod is listed by one node name at most: cluster state lists a pod on the node its nodeName names (a pod's
 * nodeName is set once, at binding, and cluster state keeps one record per pod), and carrying out commands moves a
 * pod off the node that goes. The model could hold a pod on two nodes, but the mirror keeps one link a pod, so such
 * a snapshot is refused with both nodes named rather than shipped as a model that drifts from a full rebuild. (Two
 * entries of one name are not caught here; cluster state lists one state node a providerID, two NodeClaims that
 * record one instance included, so it does not make them.)
 */
function listedTwice(p: Pod | undefined, uid: string, first: string, second: string): Error {
  const what = p ? `pod ${p.namespace}/${p.name} (uid ${uid})` : `pod ${uid}`;
  return new Error(
    `model mirror: ${what} is listed by two nodes, ${first} and ${second}; a pod is listed only by the node it is bound to`,
  );
}

/** Throws when `p`, read again while reading `n`, is listed by a node read before it (not by `n` itself, twice). */
function refuseListedBefore(touched: readonly StateNode[], n: StateNode, p: Pod): void {
  const other = touched.find((t) => t.name !== n.name && t.pods.some((q) => q.uid === p.uid));
  if (other) throw listedTwice(p, p.uid, other.name, n.name);
}

/** A pod a node read this time lists, and that node. */
interface Listing {
  readonly pod: Pod;
  readonly node: string;
}

/** Every pod the nodes list, with the node. */
function* listings(touched: readonly StateNode[]): Iterable<Listing> {
  for (const t of touched) for (const pod of t.pods) yield { pod, node: t.name };
}

/**
 * Throws when a node read this time lists a pod that a node passed over lists too (the mirror's links say which:
 * `linked`); `listed` holds at least every listing of a held pod linked to another node than the one listing it.
 */
function refuseListedElsewhere(prev: Shipped, listed: Iterable<Listing>, linked: (uid: string) => boolean): void {
  if (!prev.pods.size) return;
  for (const { pod, node } of listed)
    if (linked(pod.uid)) throw listedTwice(pod, pod.uid, linkOf(prev, pod.uid)!, node);
}

/** The pods read by one diff: which changed, how, and which the model holds that nothing names any more. */
class PodDiff {
  readonly seen = new Map<string, Pod>();
  readonly loose = new Set<string>();
  /** Pods read on a node that the mirror links to another node (refuseListedElsewhere checks that node was read too). */
  readonly linkedAway: Listing[] = [];
  private readonly changed: Pod[] = [];
  private readonly patches: Patch[] = [];

  constructor(private readonly prev: Shipped) {}

  /**
   * A pod of the snapshot, listed by the node `node` read this time (else pending or the operation's); the first
   * object for a uid wins. False when that uid was read before.
   */
  see(p: Pod, node?: string): boolean {
    if (this.seen.has(p.uid)) return false;
    this.seen.set(p.uid, p);
    if (node === undefined) this.loose.add(p.uid);
    const old = this.prev.pods.get(p.uid);
    if (node !== undefined && old !== undefined) this.checkLink(p, old, node);
    if (old === p) return true;
    const change = old === undefined ? 'whole' : podChange(old, p);
    if (change === 'whole') this.changed.push(p);
    else if (change) this.patches.push([p.uid, change]);
    return true;
  }

  /**
   * Pods the model holds that this snapshot has nowhere: of the pods the touched and removed nodes named and
   * the loose ones, those not read this time and not named by a node passed over.
   */
  gone(
    prev: Shipped,
    touched: readonly StateNode[],
    nodesRemoved: readonly string[],
    linked: (uid: string) => boolean,
  ): Set<string> {
    const out = new Set<string>();
    const check = (uid: string): void => {
      if (!this.seen.has(uid) && !linked(uid)) out.add(uid);
    };
    for (const t of touched) for (const p of prev.nodes.get(t.name)?.pods ?? []) check(p.uid);
    for (const name of nodesRemoved) for (const p of prev.nodes.get(name)?.pods ?? []) check(p.uid);
    for (const uid of prev.loose) check(uid);
    return out;
  }

  /** Notes a held pod that `node` lists and the mirror links to another node (linkOf, with the held pod at hand). */
  private checkLink(p: Pod, old: Pod, node: string): void {
    const prev = this.prev;
    const away = prev.away.size ? prev.away.get(p.uid) : undefined;
    const link = away ?? old.nodeName;
    if (link !== undefined && link !== node && (away !== undefined || !prev.loose.has(p.uid)))
      this.linkedAway.push({ pod: p, node });
  }

  into(d: MutableDelta, removed: ReadonlySet<string>): void {
    if (this.changed.length) d.pods = this.changed;
    if (this.patches.length) d.podPatches = this.patches;
    if (removed.size) d.podsRemoved = [...removed];
  }

  shipped(): number {
    return this.changed.length + this.patches.length;
  }
}

/** The node whose pod list names a held pod (one at most: listedTwice), or undefined when none does. */
function linkOf(sh: Shipped, uid: string): string | undefined {
  const away = sh.away.get(uid);
  if (away !== undefined) return away;
  return sh.loose.has(uid) ? undefined : sh.pods.get(uid)?.nodeName;
}

/** Records that the held pod `uid` is named by `node` (or by none). */
function setLink(sh: Shipped, uid: string, node: string | undefined): void {
  if (node !== undefined && node !== sh.pods.get(uid)?.nodeName) sh.away.set(uid, node);
  else sh.away.delete(uid);
}

/** Holds `p` in place of the pod with its uid, named by the same node as that one; returns that node. */
function holdPod(sh: Shipped, p: Pod): string | undefined {
  const link = linkOf(sh, p.uid);
  sh.pods.set(p.uid, p);
  setLink(sh, p.uid, link);
  return link;
}

/** A diff's findings into the mirror, in time proportional to them. */
function applyPass(sh: Shipped, pass: ObjectPass): void {
  for (const name of pass.nodesRemoved) sh.nodes.delete(name);
  for (const t of pass.touched) sh.nodes.set(t.name, t);
  for (const t of pass.refreshed) sh.nodes.set(t.name, t);
  for (const [uid, p] of pass.seen) sh.pods.set(uid, p);
  for (const uid of pass.removed) sh.pods.delete(uid);
  relink(sh, pass);
  sh.loose = pass.loose;
  sh.nodeOrder = pass.nodeOrder;
  sh.pending = pass.pending;
  sh.read = pass.read;
}

/**
 * The links after a pass. A pod it read is named by the last touched node that lists it, or by none: it was named
 * by none, or by a touched or removed node (a pod named by a node passed over is not read again as pending or as
 * the operation's, linkedElsewhere). A pod such a node named that was not read is dropped (ObjectPass.removed).
 * Every other pod keeps its link. A pod a touched node lists is not loose.
 */
function relink(sh: Shipped, pass: ObjectPass): void {
  if (sh.away.size) {
    for (const uid of pass.seen.keys()) sh.away.delete(uid);
    for (const uid of pass.removed) sh.away.delete(uid);
  }
  for (const t of pass.touched) {
    const name = t.name;
    for (const { uid } of t.pods) {
      if (pass.loose.size) pass.loose.delete(uid);
      if (sh.pods.get(uid)?.nodeName !== name) sh.away.set(uid, name);
      else if (sh.away.size) sh.away.delete(uid);
    }
  }
}
