// What cluster state and the Pod informer's cache keep of a pod: one record holding the parsed, interned Pod
// (what decisions read) and the few fields of the object that controllers read and the Pod does not carry.
// The informer builds it as its cache transform, so the list/watch cache and cluster state hold this one
// record; the pod's JSON is garbage once the record is made.
//
// Kept of the object (and who reads it):
// - metadata: name, namespace, uid, resourceVersion (the informer's cache, stale-update checks),
//   deletionTimestamp (provisioning's trigger, pod events), ownerReferences (pod events, pod metrics);
// - spec.nodeName (cluster state's node index, node termination, pod events, provisioning's trigger);
// - status.phase (pod events) and the PodScheduled and Ready conditions without their message (provisioning's
//   trigger, pod metrics);
// - the pod's limits, summed (node metrics);
// - for a DaemonSet's pods only, the stripped object itself: the DaemonSet's newest pod stands for the
//   overhead a new node reserves, and is parsed with the DaemonSet's template (engine/api/workloads.ts).
//
// Anything else a controller wants of a pod, it reads from the Pod. Before, the cache held the stripped JSON
// (strip.ts; about 1.3 KiB and 29 objects a pod) beside the Pod (docs/controller-benchmark.md, "Where the
// controller's memory goes").
import {
  add,
  max,
  PartMemo,
  parsePod,
  parseResources,
  PodInterner,
  type FieldError,
  type Pod,
  type Resources,
} from '../../engine/index.ts';
import type { KubeCondition } from '../operator/conditions.ts';
import type { KubeObject } from '../operator/kube.ts';
import { stripPod } from './strip.ts';

/** The pod conditions a controller reads from the record (the Pod has the rest it needs). */
const CONDITIONS_KEPT: ReadonlySet<string> = new Set(['PodScheduled', 'Ready']);

type Meta = KubeObject['metadata'];
type KeptMeta = Pick<Meta, 'name' | 'namespace' | 'uid' | 'resourceVersion' | 'deletionTimestamp' | 'ownerReferences'>;

const NO_ERRORS: readonly FieldError[] = Object.freeze([]);

// Type literals (not interfaces): a KubeObject's spec and status are records.
type PodRecordSpec = { readonly nodeName?: string };
type PodRecordStatus = { readonly phase?: string; readonly conditions?: readonly KubeCondition[] };

const METRICS_SEEN = 1;
const BOUND_OBSERVED = 2;
const STARTED_OBSERVED = 4;

/**
 * A pod's name, namespace and uid: the parsed Pod's when they are the object's own, else the object's (with why the
 * object does not parse, when it does not).
 */
type Ident = {
  readonly name: string | undefined;
  readonly namespace: string | undefined;
  readonly uid: string | undefined;
  readonly errors?: readonly FieldError[];
};

export class PodRecord implements KubeObject {
  [k: string]: unknown;

  /** When the provisioner first saw the pod pending (PodTimes.seen), ms; carried to the pod's newer records. */
  seenAt: number | undefined = undefined;
  /** When the provisioner first decided where the pod goes (PodTimes.decided), ms; carried over likewise. */
  decidedAt: number | undefined = undefined;
  /** metricsSeen, boundObserved and startedObserved as bits of one small integer (a field each took 8 bytes). */
  private marks = 0;
  /**
   * Where the kept name, namespace and uid are read: the parsed Pod itself when it has the object's (an API server's
   * pod always does), else an object of the object's own (a pod that does not parse, with its errors, or one whose
   * namespace or uid the parse defaulted). Three fields of the record's own, and one for the errors, took 32 bytes a
   * pod.
   */
  private readonly ident: Ident;
  // The rest of the metadata kept (see `metadata`).
  readonly resourceVersion: string | undefined;
  readonly deletionTimestamp: string | undefined;
  readonly ownerReferences: Meta['ownerReferences'];

  constructor(
    metadata: KeptMeta,
    readonly spec: PodRecordSpec,
    readonly status: PodRecordStatus,
    /** The containers' limits as Karpenter's node metrics sum them (see podLimits). */
    readonly limits: Resources,
    /** The parsed, interned pod; undefined when the object does not parse (errors says why). */
    readonly pod: Pod | undefined,
    errors: readonly FieldError[],
    /** The stripped object, for a DaemonSet's pods only. */
    readonly source: KubeObject | undefined,
  ) {
    this.ident =
      pod && pod.name === metadata.name && pod.namespace === metadata.namespace && pod.uid === metadata.uid
        ? pod
        : { name: metadata.name, namespace: metadata.namespace, uid: metadata.uid, errors };
    this.resourceVersion = metadata.resourceVersion;
    this.deletionTimestamp = metadata.deletionTimestamp;
    this.ownerReferences = metadata.ownerReferences;
  }

  get name(): string | undefined {
    return this.ident.name;
  }

  get namespace(): string | undefined {
    return this.ident.namespace;
  }

  get uid(): string | undefined {
    return this.ident.uid;
  }

  /** Why the object does not parse (none when it does). */
  get errors(): readonly FieldError[] {
    return this.pod ? NO_ERRORS : (this.ident.errors ?? NO_ERRORS);
  }

  /**
   * The metadata kept of the object (name, namespace, uid, resourceVersion, deletionTimestamp, ownerReferences) is
   * the record's own fields and getters: `metadata` is the record itself, read as metadata (an object of its own took a
   * header and a field for each per pod). Only read: name, namespace and uid are getters, which neither a spread nor
   * JSON copies.
   */
  get metadata(): Meta {
    return this as Meta;
  }

  /** metrics.pod has seen this pod (its karpenter_pods_state series is worked out at each scrape). */
  get metricsSeen(): boolean {
    return (this.marks & METRICS_SEEN) !== 0;
  }
  set metricsSeen(v: boolean) {
    this.mark(METRICS_SEEN, v);
  }

  /** metrics.pod observed the pod's time to bound, and to running: once per pod. */
  get boundObserved(): boolean {
    return (this.marks & BOUND_OBSERVED) !== 0;
  }
  set boundObserved(v: boolean) {
    this.mark(BOUND_OBSERVED, v);
  }

  get startedObserved(): boolean {
    return (this.marks & STARTED_OBSERVED) !== 0;
  }
  set startedObserved(v: boolean) {
    this.mark(STARTED_OBSERVED, v);
  }

  private mark(bit: number, v: boolean): void {
    this.marks = v ? this.marks | bit : this.marks & ~bit;
  }

  /**
   * This record replaces `old` (the record of the same namespace/name) in cluster state: if it is the same pod
   * (uid), it takes its times and what its metrics observed; a new pod of the same name starts afresh.
   */
  carryFrom(old: PodRecord): void {
    if (old === this) return;
    if (old.metadata.uid !== this.metadata.uid) return;
    this.seenAt = old.seenAt;
    this.decidedAt = old.decidedAt;
    this.marks = old.marks;
  }
}

/** A record whose object parsed (what cluster state holds). */
export type ParsedPodRecord = PodRecord & { readonly pod: Pod };

type Container = { resources?: { limits?: Record<string, string> }; restartPolicy?: string };

function limitsOf(c: Container): Resources {
  try {
    return parseResources(c.resources?.limits);
  } catch {
    return {};
  }
}

/**
 * The pod's limits in the engine's integer units (missing limits count as none), summed the way requests are:
 * containers and sidecars add up, a plain init container counts only when it needs more than they do.
 */
function podLimits(obj: KubeObject): Resources {
  const spec = (obj.spec ?? {}) as { containers?: Container[]; initContainers?: Container[] };
  let total: Resources = {};
  let sidecars: Resources = {};
  let initMax: Resources = {};
  for (const c of spec.containers ?? []) total = add(total, limitsOf(c));
  for (const c of spec.initContainers ?? []) {
    const l = limitsOf(c);
    if (c.restartPolicy === 'Always') {
      total = add(total, l);
      sidecars = add(sidecars, l);
      initMax = max(initMax, sidecars);
    } else initMax = max(initMax, add(l, sidecars));
  }
  return max(total, initMax);
}

/**
 * Each version of a pod parses its name and uid into strings of its own, and what outlives a version keeps that
 * version's copy: the maps keyed by the first version's (cluster state's and the informer's cache by name, the model
 * mirror's by uid), the event recorder's dedupe keys (a nomination's pod uid). The stripped copy `o` (strip.ts's, ours
 * to change) takes the held record's strings instead where they are equal, so every version and what names it share
 * one.
 */
function sameStrings(o: KubeObject, prior: PodRecord): void {
  const m = o.metadata;
  if (Object.isFrozen(m)) return;
  if (prior.name !== undefined && m.name === prior.name) m.name = prior.name;
  if (prior.uid !== undefined && m.uid === prior.uid) m.uid = prior.uid;
}

const isDaemonPod = (o: KubeObject): boolean =>
  o.metadata.ownerReferences?.some((r) => r.kind === 'DaemonSet' && r.controller) ?? false;

// Every object below is built with all its fields, absent ones undefined: objects of one shape share V8's hidden
// class, where conditional spreads left each pod's status object a dictionary of its own (about 300 bytes).

function leanConditions(status: Record<string, unknown> | undefined): KubeCondition[] | undefined {
  const list = status?.['conditions'];
  if (!Array.isArray(list)) return undefined;
  // filter, then map: the array kept is allocated at its length (one grown by push keeps room for 17).
  return (list as KubeCondition[])
    .filter((c) => c && CONDITIONS_KEPT.has(c.type))
    .map((c) => ({ type: c.type, status: c.status, reason: c.reason, lastTransitionTime: c.lastTransitionTime }));
}

/**
 * Makes the records: parses and interns each pod, and shares equal owner lists and limits between pods (a
 * workload's pods have the same ones). The tables start afresh once they outgrow the pods held.
 */
export class PodRecords {
  private readonly interner = new PodInterner();
  /**
   * The parts of the stripped pods decoded so far: strip.ts makes a workload's pods share their labels,
   * tolerations, containers and the like, and a stripped pod is only read, so each such part is decoded once,
   * not at every event of every pod.
   */
  private readonly memo = new PartMemo();
  /**
   * The shared parts by key, held weakly: a part no record holds any more (the status of pods long gone: each
   * second of transitions makes new ones) is collected, and its entry with its key goes once it is (`forget`).
   */
  private readonly parts = new Map<string, WeakRef<object>>();
  private readonly forget = new FinalizationRegistry<string>((key) => {
    if (this.parts.get(key)?.deref() === undefined) this.parts.delete(key);
  });

  /** `held`: how many pods cluster state holds (the tables are cleared when far larger than that). */
  constructor(private readonly held: () => number) {}

  /**
   * The record of a pod object; `stripped`: the object is strip.ts's copy already (the informer's transform made
   * it), else it is stripped here. A record is returned as it is. `prior`: the record held under the pod's
   * namespace/name, whose name and uid strings the new record takes (see sameStrings).
   */
  record(obj: KubeObject, stripped = false, prior?: PodRecord): PodRecord {
    if (obj instanceof PodRecord) return obj;
    const o = stripped ? obj : stripPod(obj);
    if (prior) sameStrings(o, prior);
    const bound = Math.max(10_000, 4 * this.held());
    if (this.interner.size > bound) this.interner.clear();
    if (this.parts.size > bound) this.parts.clear();
    const r = parsePod(o, { memo: this.memo });
    const m = o.metadata;
    const metadata: KeptMeta = {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      deletionTimestamp: m.deletionTimestamp,
      ownerReferences: m.ownerReferences && (this.share('owners', m.ownerReferences) as Meta['ownerReferences']),
    };
    return new PodRecord(
      metadata,
      this.spec((o.spec as PodRecordSpec | undefined)?.nodeName),
      this.status(o.status),
      this.share('limits', podLimits(o)) as Resources,
      r.ok ? this.interner.intern(r.value, true) : undefined,
      r.ok ? NO_ERRORS : r.errors,
      isDaemonPod(o) ? o : undefined,
    );
  }

  private share(field: string, v: object): object {
    return this.shared(`${field}\u0000${JSON.stringify(v)}`, () => v);
  }

  /** The one copy of the part known by `key`, made the first time. */
  private shared<T extends object>(key: string, make: () => T): T {
    const known = this.parts.get(key)?.deref();
    if (known !== undefined) return known as T;
    const v = make();
    this.parts.set(key, new WeakRef(v));
    this.forget.register(v, key);
    return v;
  }

  /** The spec part: one per node name (the pods of a node share it). */
  private spec(nodeName: string | undefined): PodRecordSpec {
    return this.shared(`spec\u0000${nodeName ?? ''}`, () => Object.freeze({ nodeName }));
  }

  /**
   * The status part: phase and the kept conditions. Pods that changed phase and condition in the same second
   * have equal ones (at 6,000 pods of the benchmark, 56 distinct transition times), so equal statuses are one
   * object; frozen, as several records hold it.
   */
  private status(status: Record<string, unknown> | undefined): PodRecordStatus {
    const p = status?.['phase'];
    const phase = typeof p === 'string' ? p : undefined;
    const conditions = leanConditions(status);
    let key = `status\u0000${phase ?? ''}`;
    for (const c of conditions ?? [])
      key += `\u0000${c.type}\u0000${c.status}\u0000${c.reason}\u0000${c.lastTransitionTime}`;
    if (!conditions) key += '\u0000-';
    return this.shared(key, () =>
      Object.freeze({ phase, conditions: conditions && Object.freeze(conditions.map((c) => Object.freeze(c))) }),
    );
  }
}
