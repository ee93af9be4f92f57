// The workload half of cluster state: pods (indexed by node), DaemonSets (with their newest pod, which
// stands for the overhead a new node must reserve) and PodDisruptionBudgets. Objects that do not parse are
// logged with the field at fault and left out.
import {
  formatFieldError,
  isActive,
  parseDaemonSet,
  parsePodDisruptionBudget,
  type DaemonSet,
  type FieldError,
  type Pod,
  type PodDisruptionBudget,
} from '../../engine/index.ts';
import type { KubeObject } from '../operator/kube.ts';
import type { Logger } from '../operator/logger.ts';
import { namespacedChange, type Change } from './changes.ts';
import { BufferObjects } from './buffers.ts';
import { type PodRecord, PodRecords, type ParsedPodRecord } from './podrecord.ts';
import type { KeptObjects } from './keptcache.ts';
import { DraObjects } from './dra.ts';
import { SelectorObjects } from './selectors.ts';
import { ReportedOnce } from './reported.ts';

const keyOf = (o: KubeObject): string => `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`;
const namespaceOf = (o: KubeObject): string => o.metadata.namespace ?? 'default';
const nameOf = (o: KubeObject): string => String(o.metadata.name);

/**
 * The pods by namespace and then by name: the name a record holds is the key (a map by a joined `namespace/name`
 * took a string of its own per pod). Iterated a namespace at a time, each in the order its pods were first added.
 */
class PodTable {
  /** Read by client-node's Pod cache too (keptcache.ts): a namespace with no pods is dropped, as its cache does. */
  readonly byNamespace = new Map<string, Map<string, ParsedPodRecord>>();
  size = 0;

  get(namespace: string, name: string): ParsedPodRecord | undefined {
    return this.byNamespace.get(namespace)?.get(name);
  }

  set(rec: ParsedPodRecord): void {
    const ns = namespaceOf(rec);
    let names = this.byNamespace.get(ns);
    if (!names) this.byNamespace.set(ns, (names = new Map()));
    const name = nameOf(rec);
    if (!names.has(name)) this.size++;
    names.set(name, rec);
  }

  delete(namespace: string, name: string): void {
    const names = this.byNamespace.get(namespace);
    if (!names?.delete(name)) return;
    this.size--;
    if (names.size === 0) this.byNamespace.delete(namespace);
  }

  clear(): void {
    this.byNamespace.clear();
    this.size = 0;
  }

  *values(): IterableIterator<ParsedPodRecord> {
    for (const names of this.byNamespace.values()) yield* names.values();
  }
}

/**
 * `had` is the record of this very version of the pod `o` (same uid and resourceVersion): a relist hands over every
 * pod again, and client-node's cache keeps the object it has for a version it has (cache.js isSameVersion), so
 * parsing it again would only make garbage.
 */
const sameVersion = (had: PodRecord, o: KubeObject): boolean =>
  o.metadata.resourceVersion !== undefined &&
  had.metadata.resourceVersion === o.metadata.resourceVersion &&
  had.metadata.uid === o.metadata.uid;

interface DaemonSetEntry {
  obj: KubeObject;
  newest?: ParsedPodRecord;
  parsed?: { ds?: DaemonSet; for: string };
}

export class Workloads {
  /** The pods by namespace and name: what the Pod informer's cache holds too (podrecord.ts). */
  private readonly pods = new PodTable();
  /**
   * The records of each node's pods, in the order they were last added (a list, not a Set: a node's few dozen take
   * a fraction of a Set's table; a change moves the pod to the end, as deleting and adding it to a Set did).
   */
  private readonly byNode = new Map<string, ParsedPodRecord[]>();
  /**
   * The records of the pods bound to no node by `namespace/name`, in the order they were first added (a pod's
   * nodeName is set once and never cleared, so a pod leaves this map only when it is bound or deleted): a decision
   * reads the pending pods without walking every pod of the cluster.
   */
  private readonly unbound = new Map<string, ParsedPodRecord>();
  /** Per node name: a number that changes whenever a pod on it is added, changed or removed (see podsVersion). */
  private readonly nodePodsVersion = new Map<string, number>();
  private podsSeq = 0;
  /** Makes the pod records, with shared copies of equal parts (labels, requests, ...): one per workload, not per pod. */
  private readonly records = new PodRecords(() => this.pods.size);
  private readonly daemonSets = new Map<string, DaemonSetEntry>();
  private readonly pdbs = new Map<string, { obj: KubeObject; pdb?: PodDisruptionBudget }>();
  /** DRA objects (watched only when IGNORE_DRA_REQUESTS is false). */
  readonly dra: DraObjects;
  /** Services and workload selectors (watched only when SCHEDULER_CONFIG sets default topology spread). */
  readonly selectors: SelectorObjects;

  /** CapacityBuffers, their virtual pods and where they were placed (watched only with the gate CapacityBuffer). */
  readonly buffers: BufferObjects;

  constructor(private readonly deps: { log: Logger; changed: (c: Change) => void; unconsolidated?: () => void }) {
    this.dra = new DraObjects(deps.log, deps.changed);
    this.selectors = new SelectorObjects(deps);
    this.buffers = new BufferObjects({ changed: deps.changed, unconsolidated: deps.unconsolidated ?? (() => {}) });
  }

  /**
   * What the Pod informer caches and hands to applyPod and removePod: the record of the object a list or watch
   * delivered, once its transform (strip.ts) made the stripped copy.
   */
  podRecord(stripped: KubeObject): PodRecord {
    const had = this.pods.get(namespaceOf(stripped), nameOf(stripped));
    return had && sameVersion(had, stripped) ? had : this.records.record(stripped, true, had);
  }

  /**
   * The pods by namespace and name, for the Pod informer's cache to read (keptcache.ts): it has a pod when cluster
   * state has it, so an event of a pod that did not parse, or of a version older than the one held, is not one it
   * drops as seen.
   */
  keptPods(): KeptObjects {
    return this.pods.byNamespace;
  }

  /** A pod added or changed: a record, or a pod object (made into its record). */
  applyPod(obj: KubeObject): void {
    const rec = this.records.record(obj);
    const old = this.pods.get(namespaceOf(rec), nameOf(rec));
    if (Number(rec.metadata.resourceVersion) < Number(old?.metadata.resourceVersion)) return;
    if (!rec.pod) {
      this.problem('pod', keyOf(rec), rec.errors);
      return;
    }
    const parsed = rec as ParsedPodRecord;
    if (old) parsed.carryFrom(old);
    this.unindex(old);
    this.pods.set(parsed);
    const node = parsed.spec.nodeName || undefined;
    // Set again while unbound (it keeps its place); deleted once bound, if it was held unbound.
    if (!node) this.unbound.set(keyOf(parsed), parsed);
    else if (old && !old.spec.nodeName) this.unbound.delete(keyOf(parsed));
    if (node) {
      let recs = this.byNode.get(node);
      if (!recs) this.byNode.set(node, (recs = []));
      recs.push(parsed);
      this.nodePodsVersion.set(node, ++this.podsSeq);
    }
    this.trackDaemonPod(parsed);
    this.deps.changed(namespacedChange('Pod', 'upsert', rec, old));
  }

  removePod(obj: KubeObject): void {
    const old = this.pods.get(namespaceOf(obj), nameOf(obj));
    if (!old) return;
    this.pods.delete(namespaceOf(obj), nameOf(obj));
    if (!old.spec.nodeName) this.unbound.delete(keyOf(old));
    this.unindex(old);
    this.deps.changed(namespacedChange('Pod', 'delete', old));
  }

  applyDaemonSet(obj: KubeObject): void {
    const key = keyOf(obj);
    const entry = this.daemonSets.get(key);
    this.daemonSets.set(key, { obj, ...(entry?.newest ? { newest: entry.newest } : {}) });
    this.deps.changed(namespacedChange('DaemonSet', 'upsert', obj));
  }

  removeDaemonSet(obj: KubeObject): void {
    if (!this.daemonSets.delete(keyOf(obj))) return;
    this.deps.changed(namespacedChange('DaemonSet', 'delete', obj));
  }

  applyPdb(obj: KubeObject): void {
    const r = parsePodDisruptionBudget(obj);
    if (!r.ok) this.problem('poddisruptionbudget', keyOf(obj), r.errors);
    this.pdbs.set(keyOf(obj), { obj, ...(r.ok ? { pdb: r.value } : {}) });
    this.deps.changed(namespacedChange('PodDisruptionBudget', 'upsert', obj));
  }

  removePdb(obj: KubeObject): void {
    if (!this.pdbs.delete(keyOf(obj))) return;
    this.deps.changed(namespacedChange('PodDisruptionBudget', 'delete', obj));
  }

  /** The pod's record: `pod` the parsed pod, the rest what controllers read of the object (podrecord.ts). */
  pod(namespace: string, name: string): ParsedPodRecord | undefined {
    return this.pods.get(namespace, name);
  }

  /**
   * Changes whenever the pods on `nodeName` change (one added, changed or removed): cluster state keeps a
   * node's joined StateNode until this or its Node or NodeClaim moves.
   */
  podsVersion(nodeName: string): number {
    return this.nodePodsVersion.get(nodeName) ?? 0;
  }

  podsOn(nodeName: string): Pod[] {
    // Mapped, not pushed: the list is allocated at its length (a state node keeps it, and one grown by push keeps
    // room for more).
    return (this.byNode.get(nodeName) ?? []).map((r) => r.pod);
  }

  /** Active pods not bound to a node. */
  pendingPods(): Pod[] {
    const out: Pod[] = [];
    for (const rec of this.unbound.values()) {
      const pod = rec.pod;
      if (!pod.nodeName && isActive(pod)) out.push(pod);
    }
    return out;
  }

  allPods(): Pod[] {
    return Array.from(this.pods.values(), (e) => e.pod);
  }

  /** Every pod's record. */
  podRecords(): IterableIterator<ParsedPodRecord> {
    return this.pods.values();
  }

  /**
   * The record of the pod `uid` called namespace/name, where its times are kept (PodTimes); undefined once the
   * pod is gone or the name is another pod's.
   */
  timesOf(namespace: string, name: string, uid: string): ParsedPodRecord | undefined {
    const rec = this.pods.get(namespace, name);
    return rec?.metadata.uid === uid ? rec : undefined;
  }

  daemonSetList(): DaemonSet[] {
    const out: DaemonSet[] = [];
    for (const [key, e] of this.daemonSets) {
      const version = `${e.obj.metadata.resourceVersion}/${e.newest?.metadata.resourceVersion ?? ''}`;
      if (e.parsed?.for !== version) {
        const r = parseDaemonSet(e.obj, e.newest?.source ? { newestPod: e.newest.source } : {});
        if (!r.ok) this.problem('daemonset', key, r.errors);
        e.parsed = { for: version, ...(r.ok ? { ds: r.value } : {}) };
      }
      if (e.parsed.ds) out.push(e.parsed.ds);
    }
    return out;
  }

  pdbList(): PodDisruptionBudget[] {
    return [...this.pdbs.values()].flatMap((e) => (e.pdb ? [e.pdb] : []));
  }

  private trackDaemonPod(rec: ParsedPodRecord): void {
    const owner = rec.metadata.ownerReferences?.find((o) => o.kind === 'DaemonSet' && o.controller);
    if (!owner) return;
    const e = this.daemonSets.get(`${rec.metadata.namespace ?? 'default'}/${owner.name}`);
    if (!e) return;
    if (!e.newest || rec.pod.creationTimestamp >= e.newest.pod.creationTimestamp) e.newest = rec;
  }

  private unindex(old: ParsedPodRecord | undefined): void {
    const node = old?.spec.nodeName || undefined;
    if (!node) return;
    const recs = this.byNode.get(node);
    const at = recs ? recs.indexOf(old!) : -1;
    if (recs && at >= 0) recs.splice(at, 1);
    if (recs && recs.length === 0) {
      // No pods left: forget the node's version too (node names are not reused, so keeping it would grow without
      // bound). 0 again is safe: a join cached at version 0 was made with no pods on the node either.
      this.byNode.delete(node);
      this.nodePodsVersion.delete(node);
      return;
    }
    this.nodePodsVersion.set(node, ++this.podsSeq);
  }

  private readonly reported = new ReportedOnce();

  private problem(kind: string, key: string, errors: readonly FieldError[]): void {
    const msg = errors.map(formatFieldError);
    const k = `${kind}/${key}/${msg.join('|')}`;
    if (!this.reported.first(k)) return;
    this.deps.log.error({ [kind]: key, errors: msg }, `${kind} does not parse; left out of cluster state`);
  }
}
