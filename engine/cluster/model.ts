// A warm cluster model: a worker's copy of one cluster, updated from deltas (delta.ts), and the caches of
// what was worked out about its objects. Objects keep their identity from one decision to the next unless
// the delta changed them (a node whose pods changed is a new node object, the others are the same ones), so
// the per-object caches (ModelCaches: templates, encoded catalog chunks, node starts, pod classes, ...)
// answer again without redoing the work: the catalog and NodePool templates are encoded once per version
// of them, existing nodes and their pods once per change.
import type { Command, Decision } from '../disruption/types.ts';
import type { DraState } from '../domain/dra.ts';
import type {
  DaemonSet,
  EngineOptions,
  InstanceType,
  NodeClass,
  NodePool,
  Offering,
  Pod,
  PodDisruptionBudget,
  Requirement,
  SelectorSources,
  Snapshot,
  StateNode,
} from '../domain/types.ts';
import { DEFAULT_ENGINE_OPTIONS } from '../domain/types.ts';
import { NameIndex } from '../domain/nameindex.ts';
import { ModelCaches } from '../model/caches.ts';
import type { NodeRecord, PodRefs, SnapshotDelta } from './delta.ts';
import { requirementKey } from '../scheduling/requirements.ts';
import { sameData } from './equal.ts';
import { PodInterner } from './intern.ts';
import { clockOnly } from './speculation.ts';

/** Parts of a state node that nodes of one kind have alike (interned with the pods' parts). */
const NODE_PARTS: ReadonlySet<string> = new Set(['capacity', 'allocatable', 'taints', 'startupTaints']);

/** An offering's fields that repeat across the catalog's types. */
const OFFERING_STRINGS = ['zone', 'zoneId', 'capacityType', 'reservationId'] as const;

export class StaleModelError extends Error {
  override name = 'StaleModelError';
}

/** What the last delta changed (tests check that only changed objects were shipped and rebuilt). */
interface ApplyStats {
  readonly pods: number;
  readonly nodes: number;
  readonly nodesRebuilt: number;
  readonly types: number;
}

export class ClusterModel {
  version = 0;
  readonly caches = new ModelCaches();
  lastApply: ApplyStats = { pods: 0, nodes: 0, nodesRebuilt: 0, types: 0 };
  private now = 0;
  private options: EngineOptions = DEFAULT_ENGINE_OPTIONS;
  private nodePools: readonly NodePool[] = [];
  private nodeClasses: readonly NodeClass[] = [];
  private daemonSets: readonly DaemonSet[] = [];
  private pdbs: readonly PodDisruptionBudget[] = [];
  private dra: DraState | undefined;
  private selectors: SelectorSources | undefined;
  private readonly types = new Map<number, InstanceType>();
  /** Instance types' requirements by content (keptType). */
  private readonly requirements = new Map<string, Requirement>();
  private catalog = new Map<string, readonly InstanceType[]>();
  private catalogIds = new Map<string, readonly number[]>();
  private readonly pods = new Map<string, Pod>();
  /** Shared copies of the pods' labels, requests, tolerations, ... and repeated strings (intern.ts). */
  private readonly interner = new PodInterner();
  /**
   * The nodes by name. A node's fields and the uids of its pods are read off its state node: a record of each
   * (fields and uids, as shipped) beside it was a second copy of every node and an array of uids per node.
   */
  private readonly states = new Map<string, StateNode>();
  /**
   * Pod uid -> the nodes that list the pod other than the one its nodeName names: a name, or the names when more
   * than one does (a pod moving between two deltas' nodes). A pod's link to its own node is read off the pod and
   * that node's state (`ownNode`): nearly every pod has only that one, and an entry for each cost 37 bytes a pod.
   * Kept so: a name here is never the pod's nodeName (`replacePod`).
   */
  private readonly otherNodes = new NameIndex();
  private nodeOrder: readonly string[] = [];
  private pendingUids: readonly string[] = [];
  private nodeList: readonly StateNode[] = [];
  private pendingList: readonly Pod[] = [];
  private wellKnown: ReadonlySet<string> | undefined;
  /**
   * The commands of the last disruption decision made on the model, and the model's version then: kept while
   * nothing but the clock changes, so carrying them out (ops.ts, carryOut) names them by place instead of shipping
   * them back (a repack's command moves every pod of the cluster: megabytes).
   */
  private decided: { version: number; readonly commands: readonly Command[] } | undefined;

  /** Applies a delta made against this model's version, or from nothing (else StaleModelError: the caller starts over). */
  apply(d: SnapshotDelta): void {
    if (d.base !== 0 && d.base !== this.version)
      throw new StaleModelError(`the model is at version ${this.version}, the delta is for ${d.base}`);
    // Half-applied is unusable: until a delta from nothing comes, every delta is stale.
    this.version = -1;
    if (d.base === 0) this.clear();
    const decided = this.decided;
    this.decided = decided && decided.version === d.base && clockOnly(d) ? decided : undefined;
    this.now = d.now;
    this.applySmall(d);
    this.applyCatalog(d);
    const dirty = new Set<string>();
    const pendingChanged = this.applyPods(d, dirty);
    const shipped = this.applyNodes(d, dirty);
    this.rebuild(d, dirty, shipped, pendingChanged);
    this.lastApply = {
      pods: (d.pods?.length ?? 0) + (d.podPatches?.length ?? 0),
      nodes: d.nodes?.length ?? 0,
      nodesRebuilt: dirty.size,
      types: d.types?.length ?? 0,
    };
    this.version = d.version;
    if (this.decided) this.decided.version = d.version;
  }

  /** Keeps the decision's commands (itself, its follow-ups, its concurrent ones) for a carryOut by place. */
  keepDecision(d: Decision): void {
    this.decided =
      d.kind === 'noop'
        ? undefined
        : { version: this.version, commands: [d, ...(d.followUps ?? []), ...(d.concurrent ?? [])] };
  }

  /** The kept decision's commands at these places (StaleModelError when none is kept for this version). */
  decidedCommands(at: readonly number[]): Command[] {
    const kept = this.decided;
    if (!kept || kept.version !== this.version)
      throw new StaleModelError(`the model kept no decision at version ${this.version}`);
    return at.map((i) => {
      const c = kept.commands[i];
      if (!c) throw new StaleModelError(`the model's kept decision has no command ${i}`);
      return c;
    });
  }

  /**
   * Takes `after` as the model's cluster, at the next version: a snapshot made from this model's own snapshot by
   * carrying commands out on it (ops.ts, carryOut), so its unchanged nodes are the very objects the model holds and
   * its pending pods the same list. Only the other nodes are read; their objects become the model's as they are.
   */
  adopt(after: Snapshot): void {
    if (after.pendingPods !== this.pendingList || after.now !== this.now)
      throw new Error("cluster model: adopt takes a snapshot made from the model's own (its pending pods and clock)");
    const version = this.version;
    this.version = -1;
    const unlinked = new Set<string>();
    const names = new Array<string>(after.nodes.length);
    for (let i = 0; i < after.nodes.length; i++) {
      const n = after.nodes[i]!;
      names[i] = n.name;
      if (this.states.get(n.name) !== n) this.adoptNode(n, unlinked);
    }
    if (!sameOrder(this.nodeOrder, names)) {
      const now = new Set(names);
      for (const name of this.nodeOrder) if (!now.has(name)) this.dropNode(name, unlinked);
    }
    // Pods that were on a node carried away and are on none now (nor pending) leave the model.
    const pending = new Set(this.pendingUids);
    for (const uid of unlinked)
      if (this.otherNodes.count(uid) === 0 && this.ownNode(uid) === undefined && !pending.has(uid))
        this.pods.delete(uid);
    this.nodeOrder = names;
    this.nodeList = after.nodes;
    this.lastApply = { pods: 0, nodes: 0, nodesRebuilt: 0, types: 0 };
    this.decided = undefined;
    this.version = version + 1;
  }

  /** A node of an adopted snapshot, new or changed: its state, its pods, its links. */
  private adoptNode(n: StateNode, unlinked: Set<string>): void {
    for (const p of this.states.get(n.name)?.pods ?? []) {
      this.otherNodes.drop(p.uid, n.name);
      unlinked.add(p.uid);
    }
    for (const p of n.pods) {
      if (this.pods.get(p.uid) !== p) this.replacePod(p.uid, p);
      this.link(p.uid, n.name);
    }
    this.states.set(n.name, n);
  }

  /** A node the adopted snapshot no longer has. */
  private dropNode(name: string, unlinked: Set<string>): void {
    for (const p of this.states.get(name)?.pods ?? []) {
      this.otherNodes.drop(p.uid, name);
      unlinked.add(p.uid);
    }
    this.states.delete(name);
  }

  /** The cluster as a snapshot; its arrays and objects are the same from call to call until a delta changes them. */
  snapshot(): Snapshot {
    return {
      now: this.now,
      nodePools: this.nodePools,
      nodeClasses: this.nodeClasses,
      instanceTypes: this.catalog,
      nodes: this.nodeList,
      pendingPods: this.pendingList,
      daemonSets: this.daemonSets,
      pdbs: this.pdbs,
      options: this.options,
      ...(this.dra ? { dra: this.dra } : {}),
      ...(this.selectors ? { selectorSources: this.selectors } : {}),
    };
  }

  /** The pods an operation names. */
  podsOf(refs: PodRefs): Pod[] {
    if ('pods' in refs) return [...refs.pods];
    if ('pendingAt' in refs)
      return Array.from(refs.pendingAt, (i) => {
        const p = this.pendingList[i];
        if (!p) throw new StaleModelError(`the model has no pending pod at ${i}`);
        return p;
      });
    return refs.uids.map((uid) => {
      const p = this.pods.get(uid);
      if (!p) throw new StaleModelError(`the model has no pod ${uid}`);
      return p;
    });
  }

  /**
   * How many pods and nodes the model holds, and pods it keeps links for (listed by a node other than their own;
   * tests check that churn does not grow them).
   */
  held(): { readonly pods: number; readonly nodes: number; readonly podLinks: number } {
    return { pods: this.pods.size, nodes: this.states.size, podLinks: this.otherNodes.size };
  }

  /** The same set object as last time when the content is the same (caches key on its identity). */
  wellKnownLabels(labels: ReadonlySet<string> | undefined): ReadonlySet<string> | undefined {
    if (!labels) return undefined;
    if (!this.wellKnown || !sameData(this.wellKnown, labels)) this.wellKnown = labels;
    return this.wellKnown;
  }

  private clear(): void {
    this.types.clear();
    this.requirements.clear();
    this.catalog = new Map();
    this.catalogIds = new Map();
    this.pods.clear();
    this.interner.clear();
    this.states.clear();
    this.otherNodes.clear();
    this.nodeOrder = [];
    this.pendingUids = [];
    this.nodeList = [];
    this.pendingList = [];
    this.dra = undefined;
    this.selectors = undefined;
  }

  private applySmall(d: SnapshotDelta): void {
    if (d.options) this.options = d.options;
    if (d.nodePools) this.nodePools = d.nodePools;
    if (d.nodeClasses) this.nodeClasses = d.nodeClasses;
    if (d.daemonSets) this.daemonSets = d.daemonSets;
    if (d.pdbs) this.pdbs = d.pdbs;
    if (d.dra) this.dra = d.dra.state;
    if (d.selectors) this.selectors = d.selectors.sources;
  }

  /** New types into the table; a pool whose id list did not change keeps its array (templates key on it). */
  private applyCatalog(d: SnapshotDelta): void {
    for (const [id, it] of d.types ?? []) this.types.set(id, this.keptType(it));
    if (!d.catalog) return;
    const catalog = new Map<string, readonly InstanceType[]>();
    const ids = new Map<string, readonly number[]>();
    for (const [pool, list] of d.catalog) {
      const old = this.catalogIds.get(pool);
      const same = old !== undefined && old.length === list.length && old.every((x, i) => x === list[i]);
      catalog.set(pool, same ? this.catalog.get(pool)! : list.map((id) => this.typeOf(id)));
      ids.set(pool, list);
    }
    this.catalog = catalog;
    this.catalogIds = ids;
    const used = new Set([...ids.values()].flat());
    for (const id of this.types.keys()) if (!used.has(id)) this.types.delete(id);
  }

  /**
   * An instance type as the model keeps it: its requirements shared with the other types that have the same (most
   * of a type's 40 requirements are alike from type to type), its offerings' zones and capacity types one copy
   * each. Decoded, each of the ~1,400 types of the AWS catalog had its own, about 12 KiB a type.
   */
  private keptType(it: InstanceType): InstanceType {
    const requirements = new Map<string, Requirement>();
    for (const [k, r] of it.requirements) requirements.set(k, this.requirement(r));
    const offerings = it.offerings.map((o) => {
      const out: Record<string, unknown> = { ...o };
      for (const k of OFFERING_STRINGS) if (typeof o[k] === 'string') out[k] = this.interner.string(o[k]);
      return out as unknown as Offering;
    });
    return { ...it, requirements, offerings };
  }

  /** One requirement object for each requirement with the same content (its values in the same order). */
  private requirement(r: Requirement): Requirement {
    const key = requirementKey(r);
    const known = this.requirements.get(key);
    if (known) return known;
    this.requirements.set(key, r);
    return r;
  }

  private typeOf(id: number): InstanceType {
    const it = this.types.get(id);
    if (!it) throw new StaleModelError(`the model has no instance type ${id}`);
    return it;
  }

  /** Upserts and removals; the nodes holding a changed pod are marked dirty. Returns whether a pending pod changed. */
  private applyPods(d: SnapshotDelta, dirty: Set<string>): boolean {
    const pending = new Set(this.pendingUids);
    let pendingChanged = false;
    const touch = (uid: string): void => {
      for (const n of this.nodesOf(uid)) dirty.add(n);
      if (pending.has(uid)) pendingChanged = true;
    };
    // Parts of pods long gone stay in the table until it outgrows the pods it serves; then it starts afresh.
    if (this.interner.size > Math.max(10_000, 4 * this.pods.size)) this.interner.clear();
    for (const p of d.pods ?? []) {
      this.replacePod(p.uid, this.interner.intern(p));
      touch(p.uid);
    }
    // A patched pod keeps the model's shared parts: only its scalar fields change (their strings shared). Not a
    // spread: a pending pod's patch adds nodeName, and a spread copy that gains a field gets a hidden class of its
    // own (see rebuild).
    for (const [uid, fields] of d.podPatches ?? []) {
      this.replacePod(uid, Object.assign({}, this.podOf(uid), this.interner.patch(fields)));
      touch(uid);
    }
    for (const uid of d.podsRemoved ?? []) {
      this.replacePod(uid, undefined);
      touch(uid);
    }
    return pendingChanged;
  }

  /** The names of the nodes that list the pod. */
  private nodesOf(uid: string): string[] {
    const out = this.otherNodes.names(uid);
    const own = this.ownNode(uid);
    if (own !== undefined) out.push(own);
    return out;
  }

  /** The node the pod's nodeName names, when that node's state lists the pod. */
  private ownNode(uid: string): string | undefined {
    const name = this.pods.get(uid)?.nodeName;
    if (name === undefined) return undefined;
    const pods = this.states.get(name)?.pods;
    if (!pods) return undefined;
    for (const p of pods) if (p.uid === uid) return name;
    return undefined;
  }

  /**
   * The model's pod of that uid becomes `next` (undefined: it leaves). When its nodeName changes, a link to the
   * node it named before is kept here while that node still lists it, and one to the node it names now is not.
   */
  private replacePod(uid: string, next: Pod | undefined): void {
    const before = this.ownNode(uid);
    if (next) this.pods.set(uid, next);
    else this.pods.delete(uid);
    if (before !== undefined && before !== next?.nodeName) this.otherNodes.add(uid, before);
    if (next?.nodeName !== undefined) this.otherNodes.drop(uid, next.nodeName);
  }

  /** The pod is listed on the node too. */
  private link(uid: string, name: string): void {
    if (this.pods.get(uid)?.nodeName !== name) this.otherNodes.add(uid, name);
  }

  /** Removals, and the delta's node records as the model keeps them (by name) for rebuild to make their states. */
  private applyNodes(d: SnapshotDelta, dirty: Set<string>): Map<string, NodeRecord> {
    for (const name of d.nodesRemoved ?? []) {
      for (const p of this.states.get(name)?.pods ?? []) this.otherNodes.drop(p.uid, name);
      this.states.delete(name);
      dirty.delete(name);
    }
    const records = new Map<string, NodeRecord>();
    for (const shipped of d.nodes ?? []) {
      const rec = this.kept(shipped);
      const name = rec.node.name;
      const before = records.get(name);
      if (before) for (const uid of before.pods) this.otherNodes.drop(uid, name);
      else for (const p of this.states.get(name)?.pods ?? []) this.otherNodes.drop(p.uid, name);
      for (const uid of rec.pods) this.link(uid, name);
      records.set(name, rec);
      dirty.add(name);
    }
    return records;
  }

  /**
   * A node record as the model keeps it: its strings and label values the interner's copies, its capacity and
   * taints shared with the nodes that have the same, and its pods' uids the very strings the pods hold (decoded,
   * each was a copy of its own: about 60 bytes a pod).
   */
  private kept(rec: NodeRecord): NodeRecord {
    const node: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(rec.node)) {
      if (typeof v === 'string') node[k] = this.interner.string(v);
      else if (k === 'labels' || k === 'annotations') node[k] = this.strings(v as Readonly<Record<string, string>>);
      else if (NODE_PARTS.has(k) && v !== null && typeof v === 'object') node[k] = this.interner.shared(k, v);
      else node[k] = v;
    }
    const pods = rec.pods.map((uid) => this.pods.get(uid)?.uid ?? uid);
    return { node: node as unknown as NodeRecord['node'], pods };
  }

  private strings(m: Readonly<Record<string, string>>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const k in m) out[k] = this.interner.string(m[k]!);
    return out;
  }

  /**
   * New node objects for dirty nodes (from the record shipped, else from the node as it was, with its pods as they
   * are now); new arrays only when something in them changed.
   */
  private rebuild(
    d: SnapshotDelta,
    dirty: ReadonlySet<string>,
    shipped: ReadonlyMap<string, NodeRecord>,
    pendingChanged: boolean,
  ): void {
    for (const name of dirty) {
      const rec = shipped.get(name);
      const old = rec ? undefined : this.states.get(name);
      // Object.assign onto a new object, not a spread: V8 (Node 20) gives a spread copy that gains a field its
      // source lacks a hidden class of its own, so every node had one and each read of a node field went
      // megamorphic (docs/engine.md, "Hidden classes of snapshot objects"). A node as it was has its fields in the
      // same order, pods last, so its copy takes the same hidden class.
      if (rec)
        this.states.set(
          name,
          Object.assign({}, rec.node, { pods: rec.pods.map((uid) => this.podOf(uid)) }) as StateNode,
        );
      else if (old) this.states.set(name, Object.assign({}, old, { pods: old.pods.map((p) => this.podOf(p.uid)) }));
    }
    if (d.nodeOrder) this.nodeOrder = d.nodeOrder;
    if (dirty.size || d.nodeOrder || d.nodesRemoved?.length) this.nodeList = this.nodeOrder.map((n) => this.stateOf(n));
    if (d.pending) this.pendingUids = d.pending;
    if (d.pending || pendingChanged) this.pendingList = this.pendingUids.map((uid) => this.podOf(uid));
  }

  private podOf(uid: string): Pod {
    const p = this.pods.get(uid);
    if (!p) throw new StaleModelError(`the model has no pod ${uid}`);
    return p;
  }

  private stateOf(name: string): StateNode {
    const n = this.states.get(name);
    if (!n) throw new StaleModelError(`the model has no node ${name}`);
    return n;
  }
}

const sameOrder = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);
