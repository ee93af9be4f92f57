// The workload half of cluster state: pods (indexed by node), DaemonSets (with their newest pod, which
// stands for the overhead a new node must reserve) and PodDisruptionBudgets. Objects that do not parse are
// logged with the field at fault and left out.
import {
  formatFieldError,
  isActive,
  parseDaemonSet,
  parsePod,
  parsePodDisruptionBudget,
  PodInterner,
  type DaemonSet,
  type FieldError,
  type Pod,
  type PodDisruptionBudget,
} from '../../engine/index.ts';
import type { KubeObject } from '../operator/kube.ts';
import type { Logger } from '../operator/logger.ts';
import type { Change } from './changes.ts';
import { BufferObjects } from './buffers.ts';
import { DraObjects } from './dra.ts';
import { SelectorObjects } from './selectors.ts';

const keyOf = (o: KubeObject): string => `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`;
const nodeNameOf = (o: KubeObject): string | undefined =>
  (o.spec as { nodeName?: string } | undefined)?.nodeName || undefined;

interface DaemonSetEntry {
  obj: KubeObject;
  newest?: KubeObject;
  parsed?: { ds?: DaemonSet; for: string };
}

export class Workloads {
  private readonly pods = new Map<string, { obj: KubeObject; pod: Pod }>();
  private readonly byNode = new Map<string, Set<string>>();
  /**
   * Keys of the pods bound to no node, in the order the pods map holds them (a pod's nodeName is set once and
   * never cleared, so a pod leaves this set only when it is bound or deleted): a decision reads the pending pods
   * without walking every pod of the cluster.
   */
  private readonly unbound = new Set<string>();
  /** Per node name: a number that changes whenever a pod on it is added, changed or removed (see podsVersion). */
  private readonly nodePodsVersion = new Map<string, number>();
  private podsSeq = 0;
  /** Shared copies of equal pod parts (labels, requests, tolerations, ...): one per workload, not one per pod. */
  private readonly interner = new PodInterner();
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

  applyPod(obj: KubeObject): void {
    const key = keyOf(obj);
    const old = this.pods.get(key);
    if (Number(obj.metadata.resourceVersion) < Number(old?.obj.metadata.resourceVersion)) return;
    const r = parsePod(obj);
    if (!r.ok) {
      this.problem('pod', key, r.errors);
      return;
    }
    this.unindex(key, old?.obj);
    // Parts of pods long gone stay in the table until it outgrows the pods it serves; then it starts afresh.
    if (this.interner.size > Math.max(10_000, 4 * this.pods.size)) this.interner.clear();
    this.pods.set(key, { obj, pod: this.interner.intern(r.value) });
    const node = nodeNameOf(obj);
    if (!node) this.unbound.add(key);
    else this.unbound.delete(key);
    if (node) {
      let set = this.byNode.get(node);
      if (!set) this.byNode.set(node, (set = new Set()));
      set.add(key);
      this.nodePodsVersion.set(node, ++this.podsSeq);
    }
    this.trackDaemonPod(obj);
    this.deps.changed({
      kind: 'Pod',
      type: 'upsert',
      name: obj.metadata.name!,
      namespace: obj.metadata.namespace ?? 'default',
      obj,
      ...(old ? { old: old.obj } : {}),
    });
  }

  removePod(obj: KubeObject): void {
    const key = keyOf(obj);
    const old = this.pods.get(key);
    if (!old) return;
    this.pods.delete(key);
    this.unbound.delete(key);
    this.unindex(key, old.obj);
    this.deps.changed({
      kind: 'Pod',
      type: 'delete',
      name: obj.metadata.name!,
      namespace: obj.metadata.namespace ?? 'default',
      obj: old.obj,
    });
  }

  applyDaemonSet(obj: KubeObject): void {
    const key = keyOf(obj);
    const entry = this.daemonSets.get(key);
    this.daemonSets.set(key, { obj, ...(entry?.newest ? { newest: entry.newest } : {}) });
    this.deps.changed({
      kind: 'DaemonSet',
      type: 'upsert',
      name: obj.metadata.name!,
      namespace: obj.metadata.namespace ?? 'default',
      obj,
    });
  }

  removeDaemonSet(obj: KubeObject): void {
    if (!this.daemonSets.delete(keyOf(obj))) return;
    this.deps.changed({
      kind: 'DaemonSet',
      type: 'delete',
      name: obj.metadata.name!,
      namespace: obj.metadata.namespace ?? 'default',
      obj,
    });
  }

  applyPdb(obj: KubeObject): void {
    const r = parsePodDisruptionBudget(obj);
    if (!r.ok) this.problem('poddisruptionbudget', keyOf(obj), r.errors);
    this.pdbs.set(keyOf(obj), { obj, ...(r.ok ? { pdb: r.value } : {}) });
    this.deps.changed({
      kind: 'PodDisruptionBudget',
      type: 'upsert',
      name: obj.metadata.name!,
      namespace: obj.metadata.namespace ?? 'default',
      obj,
    });
  }

  removePdb(obj: KubeObject): void {
    if (!this.pdbs.delete(keyOf(obj))) return;
    this.deps.changed({
      kind: 'PodDisruptionBudget',
      type: 'delete',
      name: obj.metadata.name!,
      namespace: obj.metadata.namespace ?? 'default',
      obj,
    });
  }

  pod(namespace: string, name: string): { obj: KubeObject; pod: Pod } | undefined {
    return this.pods.get(`${namespace}/${name}`);
  }

  /**
   * Changes whenever the pods on `nodeName` change (one added, changed or removed): cluster state keeps a
   * node's joined StateNode until this or its Node or NodeClaim moves.
   */
  podsVersion(nodeName: string): number {
    return this.nodePodsVersion.get(nodeName) ?? 0;
  }

  podsOn(nodeName: string): Pod[] {
    const out: Pod[] = [];
    for (const k of this.byNode.get(nodeName) ?? []) {
      const e = this.pods.get(k);
      if (e) out.push(e.pod);
    }
    return out;
  }

  /** Active pods not bound to a node. */
  pendingPods(): Pod[] {
    const out: Pod[] = [];
    for (const key of this.unbound) {
      const pod = this.pods.get(key)?.pod;
      if (pod && !pod.nodeName && isActive(pod)) out.push(pod);
    }
    return out;
  }

  allPods(): Pod[] {
    return [...this.pods.values()].map((e) => e.pod);
  }

  daemonSetList(): DaemonSet[] {
    const out: DaemonSet[] = [];
    for (const [key, e] of this.daemonSets) {
      const version = `${e.obj.metadata.resourceVersion}/${e.newest?.metadata.resourceVersion ?? ''}`;
      if (e.parsed?.for !== version) {
        const r = parseDaemonSet(e.obj, e.newest ? { newestPod: e.newest } : {});
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

  private trackDaemonPod(obj: KubeObject): void {
    const owner = obj.metadata.ownerReferences?.find((o) => o.kind === 'DaemonSet' && o.controller);
    if (!owner) return;
    const e = this.daemonSets.get(`${obj.metadata.namespace ?? 'default'}/${owner.name}`);
    if (!e) return;
    if (!e.newest || String(obj.metadata.creationTimestamp) >= String(e.newest.metadata.creationTimestamp))
      e.newest = obj;
  }

  private unindex(key: string, old: KubeObject | undefined): void {
    const node = old && nodeNameOf(old);
    if (!node) return;
    const set = this.byNode.get(node);
    set?.delete(key);
    if (set && set.size === 0) {
      // No pods left: forget the node's version too (node names are not reused, so keeping it would grow without
      // bound). 0 again is safe: a join cached at version 0 was made with no pods on the node either.
      this.byNode.delete(node);
      this.nodePodsVersion.delete(node);
      return;
    }
    this.nodePodsVersion.set(node, ++this.podsSeq);
  }

  private readonly reported = new Set<string>();

  private problem(kind: string, key: string, errors: readonly FieldError[]): void {
    const msg = errors.map(formatFieldError);
    const k = `${kind}/${key}/${msg.join('|')}`;
    if (this.reported.has(k)) return;
    this.reported.add(k);
    this.deps.log.error({ [kind]: key, errors: msg }, `${kind} does not parse; left out of cluster state`);
  }
}
