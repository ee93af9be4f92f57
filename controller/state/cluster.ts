// Cluster state (docs/karpenter/disruption.md §6): the versioned in-memory model every decision reads. Informers
// feed it (apply/remove per kind); the provisioner writes the NodeClaims it creates straight in, to beat
// informer lag. State nodes are keyed by providerID and joined on demand (statenode.ts): one a providerID, however
// many Nodes or NodeClaims name it; NodeClaims are known by name from the moment they exist, so the synced gate can
// see launches in flight.
import {
  type Condition,
  isActive,
  isMirrorPod,
  isOwnedByDaemonSet,
  NameIndex,
  parseEC2NodeClass,
  parseNode,
  parseNodeClaim,
  parseNodeOverlay,
  parseNodePool,
  type NodeClaimInfo,
  type NodeInfo,
  type Pod,
  type StateNode,
} from '../../engine/index.ts';
import type { Clock } from '../operator/clock.ts';
import type { KubeObject } from '../operator/kube.ts';
import type { Logger } from '../operator/logger.ts';
import {
  consolidatable,
  errorsText,
  notOlder,
  sameVersion,
  podBindingChanged,
  type Change,
  type NodeClassEntry,
  type NodeOverlayEntry,
  type NodePoolEntry,
} from './changes.ts';
import { isSharedCondition, stripNode, stripNodeClaim } from './strip.ts';
import { Workloads } from './workloads.ts';
import { joinStateNode, type NodeClaimEntry, type NodeEntry } from './statenode.ts';

/** Nomination window: max(2 x batch max duration, 10 s) (docs/karpenter/disruption.md §6.3). */
export const nominationWindow = (batchMaxMs: number): number => Math.max(2 * batchMaxMs, 10_000);
const CONSOLIDATION_REFRESH_MS = 5 * 60_000;

/** A joined state node and the inputs it was joined from (Cluster.join compares them). */
interface JoinedNode {
  readonly node: NodeEntry | undefined;
  readonly claim: NodeClaimEntry | undefined;
  readonly podsVersion: number;
  readonly markedForDeletion: boolean;
  readonly nominatedUntil: number | undefined;
  readonly bufferPods: number;
  readonly sn: StateNode;
  /** The stateNodes pass that last returned it. */
  epoch: number;
}

/** Where a state node sits in the last list, and what it was joined from (a NodeClaim by name, else a Node). */
interface ListedAt {
  readonly index: number;
  readonly claim?: string;
  readonly node?: string;
}

interface StateNodeList {
  readonly nodes: readonly StateNode[];
  readonly at: ReadonlyMap<string, ListedAt>;
  /** Two entries share a join key (Nodes with a copied providerID): a change to either rebuilds the list. */
  readonly sharedKeys: boolean;
  /** The clock time the earliest nomination in it runs out. */
  nominationsExpire: number;
}

/** A managed Node without providerID (or without instance type before initialization) is not yet real. */
const real = (node: { readonly info: NodeEntry['info'] }): boolean =>
  node.info.nodePoolName === undefined ||
  (Boolean(node.info.providerId) &&
    (Boolean(node.info.labels['node.kubernetes.io/instance-type']) || node.info.initialized));

/**
 * The Node's info with its labels as a fast V8 object. The engine's decoder builds a string map key by key, and V8
 * keeps an object grown that way past 16 keys as a hash-table dictionary: a node's 26 labels took 1.6 KB so, a
 * spread copy about 130 bytes (heap snapshots, docs/controller-benchmark.md). The stripped Node's own labels are such
 * an object already (strip.ts), and the parse's map equals them key for key when the Node parsed: the info takes
 * them, so a Node's labels are held once, not twice. The joined state nodes share them.
 */
function fastLabels(info: NodeInfo, obj: KubeObject): NodeInfo {
  const own = obj.metadata.labels;
  return { ...info, labels: own && sameStrings(own, info.labels) ? own : { ...info.labels } };
}

/** Whether two string maps have the same keys, in the same order, with the same values. */
function sameStrings(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i] || a[ka[i]!] !== b[kb[i]!]) return false;
  return true;
}

type Part = Record<string, unknown> | undefined;

/** The fields of a NodeClaimInfo that are parsed from one part of the object each, and that part. */
const CLAIM_INFO_PARTS: ReadonlyArray<readonly [keyof NodeClaimInfo, (spec: Part, status: Part) => unknown]> = [
  ['requirements', (spec) => spec?.['requirements']],
  ['taints', (spec) => spec?.['taints']],
  ['startupTaints', (spec) => spec?.['startupTaints']],
  ['requests', (spec) => spec?.['resources']],
  ['nodeClassRef', (spec) => spec?.['nodeClassRef']],
  ['capacity', (_, status) => status?.['capacity']],
  ['allocatable', (_, status) => status?.['allocatable']],
];

/** The same for a NodeInfo (its labels are copied apart: fastLabels). */
const NODE_INFO_PARTS: ReadonlyArray<readonly [keyof NodeInfo, (spec: Part, status: Part) => unknown]> = [
  ['taints', (spec) => spec?.['taints']],
  ['capacity', (_, status) => status?.['capacity']],
  ['allocatable', (_, status) => status?.['allocatable']],
];

/**
 * The info with each field parsed from a part of the object that an earlier object had too (the same object:
 * strip.ts shares the parts Nodes and NodeClaims have alike) the value that object's info has: a field's parse reads
 * only its part, so the two are equal; and infos are only read. `parsed` maps each such part to what it gave.
 */
function sharedInfo<T extends object>(
  info: T,
  obj: KubeObject,
  fields: ReadonlyArray<readonly [keyof T, (spec: Part, status: Part) => unknown]>,
  parsed: WeakMap<object, unknown>,
): T {
  const spec = obj.spec as Part;
  const status = obj.status as Part;
  let out: T | undefined;
  for (const [field, partOf] of fields) {
    const part = partOf(spec, status);
    if (typeof part !== 'object' || part === null) continue;
    const had = parsed.get(part);
    if (had === undefined) parsed.set(part, info[field]);
    else if (had !== info[field]) (out ??= { ...info })[field] = had as T[keyof T];
  }
  return out ?? info;
}

/**
 * The info's conditions, each the parse an earlier object's equal condition gave when its status condition is the
 * same object (strip.ts shares equal conditions): a condition's parse reads only that condition, so the two are
 * equal. `parsed` maps each shared status condition to its parse, per kind (a Node's parse keeps other fields than
 * a NodeClaim's); a condition no other object has is not remembered. The info's list is the parse's own, fresh, so
 * its entries are replaced in place.
 */
function shareConditions(
  info: { readonly conditions: readonly Condition[] },
  obj: KubeObject,
  parsed: WeakMap<object, Condition>,
): void {
  const given = (obj.status as Part)?.['conditions'];
  const conds = info.conditions as Condition[];
  if (!Array.isArray(given) || given.length !== conds.length) return;
  for (let i = 0; i < conds.length; i++) {
    const c = given[i];
    if (typeof c !== 'object' || c === null || !isSharedCondition(c)) continue;
    const had = parsed.get(c);
    if (had === undefined) parsed.set(c, conds[i]!);
    else conds[i] = had;
  }
}

/** The oldest entry (creationTimestamp), ties broken by name: the same one whatever order they came in. */
function oldest<T extends { readonly info: { readonly name: string; readonly creationTimestamp?: number } }>(
  entries: readonly T[],
): T | undefined {
  let best: T | undefined;
  for (const e of entries) {
    const d = best ? (e.info.creationTimestamp ?? 0) - (best.info.creationTimestamp ?? 0) : -1;
    if (d < 0 || (d === 0 && e.info.name < best!.info.name)) best = e;
  }
  return best;
}

const nodeNameOf = (o: KubeObject): string | undefined =>
  (o.spec as { nodeName?: string } | undefined)?.nodeName || undefined;

export type { Change, NodeClassEntry, NodeOverlayEntry, NodePoolEntry } from './changes.ts';

export class Cluster {
  /** Bumped on every change (the disruption loop compares it to skip work). */
  version = 0;
  readonly workloads: Workloads;
  private readonly nodes = new Map<string, NodeEntry>();
  private readonly claims = new Map<string, NodeClaimEntry>();
  /** What each shared part of the Nodes and NodeClaims parsed to (sharedInfo). */
  private readonly parsedParts = new WeakMap<object, unknown>();
  /** What each shared status condition of the Nodes, and of the NodeClaims, parsed to (shareConditions). */
  private readonly parsedNodeConditions = new WeakMap<object, Condition>();
  private readonly parsedClaimConditions = new WeakMap<object, Condition>();
  /** Node names by providerID: several Nodes may name one instance (a copied providerID), see nodeByProviderID. */
  private readonly nodesByProvider = new NameIndex();
  /**
   * NodeClaim names by providerID. Two NodeClaims may record one instance (a copied status): the state node joins
   * one of them, the oldest (nodeClaimByProviderID), and the other is kept here to take over if that one goes.
   */
  private readonly claimsByProvider = new NameIndex();
  /** NodeClaims without a providerID (waiting for their launch): the synced gate asks often, so it is counted. */
  private readonly launching = new Set<string>();
  private readonly pools = new Map<string, NodePoolEntry>();
  private readonly classes = new Map<string, NodeClassEntry>();
  private readonly overlays = new Map<string, NodeOverlayEntry>();
  private readonly nominated = new Map<string, number>();
  private readonly marked = new Set<string>();
  private readonly listeners = new Set<(c: Change) => void>();
  private consolidatedAt = 0;
  private listedOnce = false;
  /**
   * Joined state nodes by join key (providerID, or the node name of a Node without one), each with what it
   * was joined from: a decision, the NodePool counter and the metrics read every node many times a second at
   * scale, and rejoining 5,000 nodes with their pods each time made cluster-wide work of every change.
   */
  private readonly joined = new Map<string, JoinedNode>();
  private joinEpoch = 0;
  /**
   * The last stateNodes list, and what changed since: the keys of state nodes whose inputs changed (a pod on
   * the node, its Node or NodeClaim updated in place, a mark, a nomination), or 'all' when the list itself may
   * have changed (a node or NodeClaim came or went or changed its providerID, buffer room moved). A call with
   * only keys dirty rejoins just those: the other entries are the very objects of the last list, which is
   * what lets a decision's delta (ModelMirror) pass them over.
   */
  private listed: StateNodeList | undefined;
  private dirty: Set<string> | 'all' = 'all';
  /** Names of nodes whose pods changed since the last list (resolved to keys when the list is next asked for). */
  private readonly dirtyPods = new Set<string>();

  constructor(private readonly deps: { clock: Clock; log: Logger; listed: () => boolean }) {
    this.workloads = new Workloads({
      log: deps.log,
      changed: (c) => {
        this.touchWorkload(c);
        this.changed(c, c.kind === 'Pod' && podBindingChanged(c));
      },
      unconsolidated: () => {
        // Buffer room moved between nodes (or virtual pods changed): any state node's bufferPods may differ.
        this.dirty = 'all';
        this.changed(undefined, true);
      },
    });
  }

  /** Subscribes to changes; returns the unsubscribe function. */
  subscribe(fn: (c: Change) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  // ---- feeding ------------------------------------------------------------------------------------

  applyNode(given: KubeObject): void {
    const name = given.metadata.name!;
    const old = this.nodes.get(name);
    if (!notOlder(old?.obj, given)) return;
    // The informer's copy is lean already; the controller's own writes are made so here.
    const obj = stripNode(given);
    // A write's answer and its watch event carry the same version: parsed once (a parse validates the whole object).
    const same = old !== undefined && sameVersion(old.obj, obj);
    const r = same ? ({ ok: true, value: old.info } as const) : parseNode(obj);
    if (!r.ok) {
      this.deps.log.error(
        { node: name, errors: errorsText(r.errors) },
        'node does not parse; left out of cluster state',
      );
      return;
    }
    if (old?.info.providerId && old.info.providerId !== r.value.providerId) this.unindexNode(old.info.providerId, name);
    if (r.value.providerId) this.indexNode(r.value.providerId, name);
    if (!same) shareConditions(r.value, obj, this.parsedNodeConditions);
    const info = same ? r.value : sharedInfo(fastLabels(r.value, obj), obj, NODE_INFO_PARTS, this.parsedParts);
    this.nodes.set(name, { obj, info });
    this.touchNode(old, r.value);
    const flips =
      !old ||
      old.info.initialized !== r.value.initialized ||
      Boolean(old.info.deletionTimestamp) !== Boolean(r.value.deletionTimestamp);
    this.changed({ kind: 'Node', type: 'upsert', name, obj, ...(old ? { old: old.obj } : {}) }, flips);
  }

  removeNode(obj: KubeObject): void {
    const name = obj.metadata.name!;
    const old = this.nodes.get(name);
    if (!old) return;
    this.nodes.delete(name);
    if (old.info.providerId) this.unindexNode(old.info.providerId, name);
    this.dirty = 'all';
    this.changed({ kind: 'Node', type: 'delete', name, obj: old.obj }, true);
  }

  private indexNode(pid: string, name: string): void {
    this.nodesByProvider.add(pid, name);
  }

  private unindexNode(pid: string, name: string): void {
    this.nodesByProvider.drop(pid, name);
  }

  applyNodeClaim(given: KubeObject): void {
    const name = given.metadata.name!;
    const old = this.claims.get(name);
    if (!notOlder(old?.obj, given)) return;
    // The informer's copy is lean already; the controller's own writes are made so here.
    const obj = stripNodeClaim(given);
    // A write's answer and its watch event carry the same version: parsed once (a parse validates the whole object).
    const same = old !== undefined && sameVersion(old.obj, obj);
    const r = same ? ({ ok: true, value: old.info } as const) : parseNodeClaim(obj);
    if (!r.ok) {
      this.deps.log.error(
        { nodeclaim: name, errors: errorsText(r.errors) },
        'nodeclaim does not parse; left out of cluster state',
      );
      return;
    }
    const pid = r.value.providerId;
    if (old?.info.providerId && old.info.providerId !== pid) this.releaseClaim(old.info.providerId, name, 'moved');
    if (pid) this.launching.delete(name);
    else this.launching.add(name);
    if (!same) shareConditions(r.value, obj, this.parsedClaimConditions);
    this.claims.set(name, { obj, info: same ? r.value : sharedInfo(r.value, obj, CLAIM_INFO_PARTS, this.parsedParts) });
    if (pid && old?.info.providerId !== pid) this.indexClaim(pid, name);
    this.touchClaim(old?.info.providerId, r.value.providerId, !old);
    // Consolidatable flips make consolidation worth re-evaluating (a new candidate appeared or left).
    const flips = !old || consolidatable(old.obj) !== consolidatable(obj);
    this.changed({ kind: 'NodeClaim', type: 'upsert', name, obj, ...(old ? { old: old.obj } : {}) }, flips);
  }

  removeNodeClaim(obj: KubeObject): void {
    const name = obj.metadata.name!;
    const old = this.claims.get(name);
    if (!old) return;
    // Released while still held: which NodeClaim the state node joined is read from the NodeClaims held.
    if (old.info.providerId) this.releaseClaim(old.info.providerId, name, 'deleted');
    this.claims.delete(name);
    this.launching.delete(name);
    this.dirty = 'all';
    this.changed({ kind: 'NodeClaim', type: 'delete', name, obj: old.obj }, true);
  }

  /**
   * Records that the NodeClaim (already in `claims`) names the instance. A second NodeClaim for one instance is
   * logged with both names and the one the state node joins; neither is dropped.
   */
  private indexClaim(pid: string, name: string): void {
    this.claimsByProvider.add(pid, name);
    if (this.claimsByProvider.count(pid) < 2) return;
    this.deps.log.warn(
      {
        providerID: pid,
        nodeclaim: name,
        nodeclaims: this.claimsByProvider.names(pid).sort(),
        joined: this.nodeClaimByProviderID(pid)?.info.name,
      },
      'several NodeClaims record one instance; cluster state lists it once, joined with the oldest NodeClaim',
    );
  }

  /**
   * The NodeClaim no longer names the instance (deleted, or its providerID changed). Another NodeClaim that names it
   * takes the state node over (logged); with none left, the instance's mark and nomination go with the NodeClaim.
   */
  private releaseClaim(pid: string, name: string, why: 'deleted' | 'moved'): void {
    const joined = this.nodeClaimByProviderID(pid)?.info.name;
    this.claimsByProvider.drop(pid, name);
    const next = this.nodeClaimByProviderID(pid)?.info.name;
    if (next === undefined) {
      if (why === 'deleted') {
        this.marked.delete(pid);
        this.nominated.delete(pid);
      }
      return;
    }
    if (joined === name)
      this.deps.log.warn(
        { providerID: pid, nodeclaim: name, joined: next },
        `the NodeClaim an instance's state node joined was ${why === 'deleted' ? 'deleted' : 'given another providerID'}; another NodeClaim recording the instance is joined now`,
      );
  }

  applyNodePool(obj: KubeObject): void {
    const name = obj.metadata.name!;
    const old = this.pools.get(name);
    if (!notOlder(old?.obj, obj)) return;
    const r = parseNodePool(obj);
    this.pools.set(name, r.ok ? { obj, pool: r.value, errors: [] } : { obj, errors: errorsText(r.errors) });
    const generationChanged = old?.obj.metadata.generation !== obj.metadata.generation;
    this.changed({ kind: 'NodePool', type: 'upsert', name, obj, ...(old ? { old: old.obj } : {}) }, generationChanged);
  }

  removeNodePool(obj: KubeObject): void {
    const old = this.pools.get(obj.metadata.name!);
    if (!old) return;
    this.pools.delete(obj.metadata.name!);
    this.changed({ kind: 'NodePool', type: 'delete', name: obj.metadata.name!, obj: old.obj }, true);
  }

  applyNodeClass(obj: KubeObject): void {
    const name = obj.metadata.name!;
    const old = this.classes.get(name);
    if (!notOlder(old?.obj, obj)) return;
    const r = parseEC2NodeClass(obj);
    this.classes.set(name, r.ok ? { obj, nodeClass: r.value, errors: [] } : { obj, errors: errorsText(r.errors) });
    this.changed({ kind: 'EC2NodeClass', type: 'upsert', name, obj, ...(old ? { old: old.obj } : {}) }, false);
  }

  removeNodeClass(obj: KubeObject): void {
    const old = this.classes.get(obj.metadata.name!);
    if (!old) return;
    this.classes.delete(obj.metadata.name!);
    this.changed({ kind: 'EC2NodeClass', type: 'delete', name: obj.metadata.name!, obj: old.obj }, false);
  }

  applyNodeOverlay(obj: KubeObject): void {
    const name = obj.metadata.name!;
    const old = this.overlays.get(name);
    if (!notOlder(old?.obj, obj)) return;
    const r = parseNodeOverlay(obj);
    this.overlays.set(name, r.ok ? { obj, overlay: r.value, errors: [] } : { obj, errors: errorsText(r.errors) });
    this.changed({ kind: 'NodeOverlay', type: 'upsert', name, obj, ...(old ? { old: old.obj } : {}) }, false);
  }

  removeNodeOverlay(obj: KubeObject): void {
    const old = this.overlays.get(obj.metadata.name!);
    if (!old) return;
    this.overlays.delete(obj.metadata.name!);
    this.changed({ kind: 'NodeOverlay', type: 'delete', name: obj.metadata.name!, obj: old.obj }, false);
  }

  /** The catalog changed under the disruption engine (NodeOverlays re-evaluated): consolidation looks again. */
  markUnconsolidated(): void {
    this.changed(undefined, true);
  }

  // ---- queries ------------------------------------------------------------------------------------

  nodeOverlay(name: string): NodeOverlayEntry | undefined {
    return this.overlays.get(name);
  }

  nodeOverlays(): NodeOverlayEntry[] {
    return [...this.overlays.values()];
  }

  node(name: string): NodeEntry | undefined {
    return this.nodes.get(name);
  }

  /**
   * The Node of an instance. When several Nodes name it (a Node object created with a copied providerID),
   * the one its NodeClaim's status names; without that, the oldest (ties broken by name).
   */
  nodeByProviderID(pid: string): NodeEntry | undefined {
    // One Node per instance is the rule: answered without building a list (every join asks).
    if (this.nodesByProvider.count(pid) <= 1) {
      const only = this.nodesByProvider.only(pid);
      return only === undefined ? undefined : this.nodes.get(only);
    }
    const nodes = this.nodesByProviderID(pid);
    const named = this.nodeClaimByProviderID(pid)?.info.nodeName;
    return nodes.find((n) => n.info.name === named) ?? oldest(nodes);
  }

  /** Every Node that names the instance. */
  nodesByProviderID(pid: string): NodeEntry[] {
    return this.nodesByProvider.names(pid).flatMap((n) => this.nodes.get(n) ?? []);
  }

  allNodes(): NodeEntry[] {
    return [...this.nodes.values()];
  }

  nodeClaim(name: string): NodeClaimEntry | undefined {
    return this.claims.get(name);
  }

  /**
   * The NodeClaim of an instance. When several record it (a NodeClaim with a copied status), the oldest, ties broken
   * by name: the same one whatever order they came in, so a restarted controller and a full rebuild agree.
   */
  nodeClaimByProviderID(pid: string): NodeClaimEntry | undefined {
    // One NodeClaim per instance is the rule: answered without building a list (every join asks).
    if (this.claimsByProvider.count(pid) <= 1) {
      const only = this.claimsByProvider.only(pid);
      return only === undefined ? undefined : this.claims.get(only);
    }
    return oldest(this.claimsByProvider.names(pid).flatMap((n) => this.claims.get(n) ?? []));
  }

  /** Every NodeClaim that records the instance. */
  nodeClaimsByProviderID(pid: string): NodeClaimEntry[] {
    return this.claimsByProvider.names(pid).flatMap((n) => this.claims.get(n) ?? []);
  }

  nodeClaims(): NodeClaimEntry[] {
    return [...this.claims.values()];
  }

  nodePool(name: string): NodePoolEntry | undefined {
    return this.pools.get(name);
  }

  nodePools(): NodePoolEntry[] {
    return [...this.pools.values()];
  }

  nodeClass(name: string): NodeClassEntry | undefined {
    return this.classes.get(name);
  }

  nodeClasses(): NodeClassEntry[] {
    return [...this.classes.values()];
  }

  /**
   * State nodes (spec §6.1): NodeClaims with a providerID joined with their Node, plus Nodes without one. The
   * list is the same array until something in it changes, and then a new one: callers must not change it.
   */
  stateNodes(): readonly StateNode[] {
    const now = this.deps.clock.now();
    const l = this.listed;
    if (this.dirty === 'all' || !l || now >= l.nominationsExpire) return this.listAll(now);
    if (this.dirtyPods.size) for (const name of this.dirtyPods) this.dirty.add(this.keyOfNode(name));
    this.dirtyPods.clear();
    if (!this.dirty.size) return l.nodes;
    if (l.sharedKeys) return this.listAll(now);
    const nodes = l.nodes.slice();
    for (const key of this.dirty) {
      const at = l.at.get(key);
      if (!at) continue;
      const claim = at.claim === undefined ? undefined : this.claims.get(at.claim);
      const node = at.claim === undefined ? this.nodes.get(at.node!) : this.nodeByProviderID(key);
      // Its NodeClaim or Node went without the list being marked: rebuild it whole.
      if ((at.claim !== undefined && !claim) || (at.claim === undefined && !node)) return this.listAll(now);
      nodes[at.index] = this.join(node, claim, key, now);
    }
    this.dirty.clear();
    this.listed = { ...l, nodes };
    return nodes;
  }

  /** Every state node joined (from the join cache where its inputs did not change), and the list remembered. */
  private listAll(now: number): readonly StateNode[] {
    const out: StateNode[] = [];
    const at = new Map<string, ListedAt>();
    const seenNodes = new Set<string>();
    const epoch = ++this.joinEpoch;
    const place = (key: string, where: Omit<ListedAt, 'index'>): void => {
      if (at.has(key)) sharedKeys = true;
      at.set(key, { index: out.length, ...where });
    };
    let sharedKeys = false;
    for (const claim of this.claims.values()) {
      const pid = claim.info.providerId;
      // One state node an instance: a NodeClaim that records another's instance is listed through that one.
      if (!pid || (this.sharedClaim(pid) && this.nodeClaimByProviderID(pid) !== claim)) continue;
      const node = this.nodeByProviderID(pid);
      if (node) seenNodes.add(node.info.name);
      place(pid, { claim: claim.info.name });
      out.push(this.join(node, claim, pid, now));
    }
    for (const node of this.nodes.values()) {
      if (seenNodes.has(node.info.name) || !real(node)) continue;
      const key = node.info.providerId ?? node.info.name;
      place(key, { node: node.info.name });
      out.push(this.join(node, undefined, key, now));
    }
    this.pruneJoined(epoch);
    this.listed = { nodes: out, at, sharedKeys, nominationsExpire: this.nextNominationExpiry(now) };
    this.dirty = new Set();
    this.dirtyPods.clear();
    return out;
  }

  /** When the earliest live nomination runs out (a state node's nominatedUntil then changes): Infinity if none. */
  private nextNominationExpiry(now: number): number {
    let next = Infinity;
    for (const until of this.nominated.values()) if (until > now && until < next) next = until;
    return next;
  }

  /** The join key of the node called `name` (its providerID, or its name without one). */
  private keyOfNode(name: string): string {
    return this.nodes.get(name)?.info.providerId ?? name;
  }

  /** A Node upserted: its state node is dirty, or the list when the Node came, moved instance, or became real or not. */
  private touchNode(old: NodeEntry | undefined, now: NodeEntry['info']): void {
    if (this.dirty === 'all') return;
    const pid = now.providerId;
    if (!old || old.info.providerId !== pid || real(old) !== real({ info: now }) || (pid && this.shared(pid)))
      this.dirty = 'all';
    else this.dirty.add(pid ?? now.name);
  }

  /** A NodeClaim upserted: its state node is dirty, or the list when it is new or its providerID changed. */
  private touchClaim(oldPid: string | undefined, pid: string | undefined, created: boolean): void {
    if (this.dirty === 'all') return;
    if (created || oldPid !== pid || (pid && this.shared(pid))) this.dirty = 'all';
    else if (pid) this.dirty.add(pid);
  }

  /** A pod changed on a node (either side of a move): that node's state node is dirty. */
  private touchWorkload(c: Change): void {
    if (c.kind !== 'Pod') return;
    const on = nodeNameOf(c.obj);
    if (on) this.dirtyPods.add(on);
    const was = c.old && nodeNameOf(c.old);
    if (was) this.dirtyPods.add(was);
  }

  /** Whether several Nodes name the instance (which one joins depends on more than its own entry). */
  private shared(pid: string): boolean {
    return this.nodesByProvider.count(pid) > 1;
  }

  /** Whether several NodeClaims record the instance. */
  private sharedClaim(pid: string): boolean {
    return this.claimsByProvider.count(pid) > 1;
  }

  stateNode(providerID: string): StateNode | undefined {
    const claim = this.nodeClaimByProviderID(providerID);
    const node = this.nodeByProviderID(providerID);
    return claim || node ? this.join(node, claim, providerID, this.deps.clock.now()) : undefined;
  }

  /** The joined state node, from the cache while its Node, NodeClaim, pods, mark, nomination and buffer pods are the same. */
  private join(node: NodeEntry | undefined, claim: NodeClaimEntry | undefined, key: string, now: number): StateNode {
    const until = this.nominated.get(key);
    const nominatedUntil = until !== undefined && until > now ? until : undefined;
    const podsVersion = node ? this.workloads.podsVersion(node.info.name) : -1;
    const markedForDeletion = this.marked.has(key);
    const bufferPods = this.workloads.buffers.bufferPodsOn(key);
    const hit = this.joined.get(key);
    if (
      hit &&
      hit.node === node &&
      hit.claim === claim &&
      hit.podsVersion === podsVersion &&
      hit.markedForDeletion === markedForDeletion &&
      hit.nominatedUntil === nominatedUntil &&
      hit.bufferPods === bufferPods
    ) {
      hit.epoch = this.joinEpoch;
      return hit.sn;
    }
    const sn = joinStateNode(node, claim, {
      pods: this.podsOf(node, hit, podsVersion),
      markedForDeletion,
      ...(nominatedUntil !== undefined ? { nominatedUntil } : {}),
      ...(bufferPods ? { bufferPods } : {}),
    });
    this.joined.set(key, {
      node,
      claim,
      podsVersion,
      markedForDeletion,
      nominatedUntil,
      bufferPods,
      sn,
      epoch: this.joinEpoch,
    });
    return sn;
  }

  /**
   * The node's pods: the last join's very array while no pod on the node changed, so the engine's diff passes them
   * over when only the node's own fields (a nomination, a condition) changed.
   */
  private podsOf(node: NodeEntry | undefined, hit: JoinedNode | undefined, podsVersion: number): readonly Pod[] {
    if (!node) return [];
    if (hit?.node?.info.name === node.info.name && hit.podsVersion === podsVersion) return hit.sn.pods;
    return this.workloads.podsOn(node.info.name);
  }

  /** Drops the joined nodes the last full pass (stateNodes) did not visit: their keys are gone. */
  private pruneJoined(epoch: number): void {
    for (const [key, j] of this.joined) if (j.epoch !== epoch) this.joined.delete(key);
  }

  /**
   * Pods to provision for: pending pods the kube-scheduler marked unschedulable (not DaemonSet or mirror
   * pods, not preempting), plus the reschedulable pods of nodes being deleted or marked for deletion, so
   * their replacements are launched before the drain evicts them (spec §6.3).
   */
  provisionablePods(): Pod[] {
    const out = this.workloads
      .pendingPods()
      .filter((p) => p.unschedulable && !p.nominatedNodeName && !isOwnedByDaemonSet(p) && !isMirrorPod(p));
    for (const sn of this.stateNodes()) {
      if (!sn.managed || !(sn.deleting || sn.markedForDeletion)) continue;
      for (const p of sn.pods) if (isActive(p) && !isOwnedByDaemonSet(p) && !isMirrorPod(p)) out.push(p);
    }
    return out;
  }

  // ---- marks --------------------------------------------------------------------------------------

  /** Nominates a state node (by providerID) until `until`; re-nomination extends it. */
  nominate(providerID: string, until: number): void {
    const prior = this.nominated.get(providerID) ?? 0;
    if (until <= prior) return;
    this.nominated.set(providerID, until);
    this.touchKey(providerID);
    if (this.listed && until < this.listed.nominationsExpire) this.listed.nominationsExpire = until;
  }

  markForDeletion(...providerIDs: string[]): void {
    for (const p of providerIDs) {
      this.marked.add(p);
      this.touchKey(p);
    }
    this.changed(undefined, true);
  }

  unmarkForDeletion(...providerIDs: string[]): void {
    for (const p of providerIDs) {
      this.marked.delete(p);
      this.touchKey(p);
    }
    this.changed(undefined, true);
  }

  private touchKey(key: string): void {
    if (this.dirty !== 'all') this.dirty.add(key);
  }

  isMarkedForDeletion(providerID: string): boolean {
    return this.marked.has(providerID);
  }

  /** The consolidation-state timestamp (spec §6.4), refreshed when 5 minutes old. */
  consolidationState(): number {
    const now = this.deps.clock.now();
    if (now - this.consolidatedAt >= CONSOLIDATION_REFRESH_MS) this.consolidatedAt = now;
    return this.consolidatedAt;
  }

  /**
   * Every informer has listed once (latches): the state holds at least what the API server held when the
   * controller started. The first half of the synced gate, without its "nothing mid-launch" half.
   */
  hydrated(): boolean {
    if (!this.listedOnce) {
      if (!this.deps.listed()) return false;
      this.listedOnce = true;
    }
    return true;
  }

  /**
   * The synced gate (spec §6.5): every informer has listed once (which latches), and no NodeClaim is
   * waiting for its launch (a NodeClaim without providerID).
   */
  synced(): boolean {
    return this.hydrated() && this.launching.size === 0;
  }

  private changed(c: Change | undefined, consolidation: boolean): void {
    this.version++;
    if (consolidation) this.consolidatedAt = this.deps.clock.now();
    if (!c) return;
    for (const fn of this.listeners) {
      try {
        fn(c);
      } catch (err) {
        this.deps.log.error({ err: String(err), kind: c.kind, name: c.name }, 'cluster state subscriber failed');
      }
    }
  }
}
