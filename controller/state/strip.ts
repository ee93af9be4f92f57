// What the informers drop from an object before it is cached (controller-runtime's cache transforms, e.g.
// TransformStripManagedFields, do the same for Karpenter): fields no part of the controller reads, which at
// 100,000 pods are most of the cache's memory. The informer passes the stripped copy on in place of the object
// the list or watch delivered, so client-node's own cache and cluster state hold that one copy; a pod's copy is
// then made into its record (podrecord.ts), which is what both hold of a pod.
//
// - every kind: metadata.managedFields and the `kubectl.kubernetes.io/last-applied-configuration` annotation
//   (a second copy of the object as last applied);
// - Pods: of each container, what scheduling, limits and metrics read stay (name, resources, ports,
//   restartPolicy, resizePolicy); image, command, args, env, probes, mounts, security context and the like go;
//   of the status, the container statuses keep only their name and resources (in-place resize), and the pod
//   and host IPs go; of the conditions, only the types something reads stay (PodScheduled, Ready,
//   PodResizePending), without lastProbeTime; the pod's qosClass goes. Of the spec, the fields that only the
//   kubelet and the container runtime read (DNS, service account, security context, image pull secrets, ...)
//   go. Phase, nominatedNodeName, startTime and everything else stay.
// - Nodes: of the status, what the kubelet reports for people and other components and no part of the controller
//   reads: the image list (on a real node dozens of images, each with its names and size: usually the largest
//   part of a Node), nodeInfo, addresses, daemonEndpoints, volumesInUse, volumesAttached, config and
//   runtimeHandlers; and each condition's lastHeartbeatTime (a kubelet heartbeat; nothing reads it). Capacity,
//   allocatable, conditions (type, status, reason, message, lastTransitionTime), phase and features stay.
// - Nodes and NodeClaims: as for pods below, the short strings are shared copies, and so are the parts that the
//   Nodes or NodeClaims of one NodePool and instance type have alike (a NodeClaim's labels, annotations,
//   requirements, capacity, ...; a Node's annotations, capacity, allocatable, taints), and so is each status condition
//   equal to one seen before (heldCondition: NodeClaims launched together carry equal conditions, times included).
//   Of a NodeClaim every field stays. At 5,000 nodes the NodeClaims were the largest thing cluster state held after the pods
//   (docs/controller-benchmark.md, "The main thread per pod").
// - Pods: the short strings that repeat from pod to pod (condition types and reasons, toleration keys, owner
//   names, node names, quantities) are replaced by one shared copy (V8's JSON parser shares only keys and
//   values of up to 10 characters). Strings cannot change, so sharing them is invisible to every reader.
// - Pods: the parts that a workload's pods have alike (labels, owner references, tolerations, the container
//   lists, node selector, affinity, spread constraints) are one shared copy for all the pods that have equal
//   ones. A stripped pod is only read (its record is parsed from it; a DaemonSet's newest pod is parsed with the
//   DaemonSet), so sharing them is invisible too. While the watch's events wait in the informers' queue
//   (delivery.ts), the stripped pod is what each holds: at 5,000 nodes 150,000 of them held 170 MiB during the
//   set-up (docs/controller-benchmark.md, "What the set-up holds").
//
// Measured at 6,000 pods (docs/controller-benchmark.md, "Where the controller's memory goes"): a simulated
// pod's stripped JSON held about 2.0 KiB and 45 heap objects before the conditions, spec fields and string
// sharing above.
import type { KubeObject } from '../operator/kube.ts';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** Container fields the controller reads; the others are dropped. */
const CONTAINER_KEPT = new Set(['name', 'resources', 'ports', 'restartPolicy', 'resizePolicy']);
/** Container-status fields the controller reads (the resources of an in-place resize). */
const CONTAINER_STATUS_KEPT = new Set(['name', 'resources', 'allocatedResources']);
const POD_STATUS_DROPPED: ReadonlySet<string> = new Set([
  'podIP',
  'podIPs',
  'hostIP',
  'hostIPs',
  'ephemeralContainerStatuses',
  'qosClass',
]);

/** Pod condition types something in the controller or engine reads (metrics, provisioning, in-place resize). */
const POD_CONDITIONS_KEPT: ReadonlySet<string> = new Set(['PodScheduled', 'Ready', 'PodResizePending']);
/** Pod spec fields only the kubelet or the container runtime reads. */
const POD_SPEC_DROPPED: ReadonlySet<string> = new Set([
  'dnsPolicy',
  'dnsConfig',
  'schedulerName',
  'securityContext',
  'serviceAccount',
  'serviceAccountName',
  'automountServiceAccountToken',
  'enableServiceLinks',
  'imagePullSecrets',
  'hostAliases',
  'setHostnameAsFQDN',
  'shareProcessNamespace',
]);
/** Fields whose string values are (nearly) unique to one object: sharing them would only grow the table. */
const UNIQUE_VALUES: ReadonlySet<string> = new Set([
  'name',
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'deletionTimestamp',
  'lastTransitionTime',
  'startTime',
  'message',
]);
const SHARED_MAX_LENGTH = 128;
const SHARED_MAX_ENTRIES = 50_000;

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

// New objects rather than `delete`: an object that lost a property through `delete` turns into a slow
// dictionary in V8, larger than the whole object was.

/** A copy of `o` with only the keys `keep` accepts. */
function pick(o: Obj, keep: (k: string) => boolean): Obj {
  const out: Obj = {};
  for (const k of Object.keys(o)) if (keep(k)) out[k] = o[k];
  return out;
}

/** Each object of `list` with only the `kept` keys (anything else in the list as it is). */
function pickEach(list: unknown, kept: ReadonlySet<string>): unknown {
  if (!Array.isArray(list)) return list;
  return list.map((item) => (isObj(item) ? pick(item, (k) => kept.has(k)) : item));
}

/** Metadata without managedFields and the last-applied annotation (the same object when it has neither). */
function leanMetadata(meta: Obj): Obj {
  const annotations = meta['annotations'];
  const lastApplied = isObj(annotations) && LAST_APPLIED in annotations;
  if (!('managedFields' in meta) && !lastApplied) return meta;
  const out = pick(meta, (k) => k !== 'managedFields');
  if (lastApplied) out['annotations'] = pick(annotations, (k) => k !== LAST_APPLIED);
  return out;
}

/** The object without what no kind needs; returns a new object, or `o` when there was nothing to drop. */
export function stripMetadata(o: KubeObject): KubeObject {
  const meta = o.metadata as unknown as Obj | undefined;
  if (!meta) return o;
  const lean = leanMetadata(meta);
  return lean === meta ? o : { ...o, metadata: lean as KubeObject['metadata'] };
}

/** Node status fields no part of the controller reads (the engine parses capacity, allocatable and conditions). */
const NODE_STATUS_DROPPED: ReadonlySet<string> = new Set([
  'images',
  'nodeInfo',
  'addresses',
  'daemonEndpoints',
  'volumesInUse',
  'volumesAttached',
  'config',
  'runtimeHandlers',
]);

/** The Nodes and NodeClaims stripNode and stripNodeClaim made (Cluster leans only the others: its own writes). */
const leanObjects = new WeakSet<object>();

/**
 * A Node without what the controller never reads, its short strings and the parts that the Nodes of one instance
 * type have alike (NODE_SHARING) shared copies: a new object (`o` is left as it is), or `o` itself when it is such a
 * copy already.
 */
export function stripNode(o: KubeObject): KubeObject {
  if (leanObjects.has(o)) return o;
  const lean = stripMetadata(o);
  let out = lean;
  if (isObj(o.status)) {
    const status = pick(o.status, (k) => !NODE_STATUS_DROPPED.has(k));
    const conditions = status['conditions'];
    if (Array.isArray(conditions))
      status['conditions'] = conditions.map((c) => (isObj(c) ? pick(c, (k) => k !== 'lastHeartbeatTime') : c));
    out = { ...lean, status };
  }
  const shared = copyShared(out, '', 0, NODE_SHARING) as KubeObject;
  leanObjects.add(shared);
  return shared;
}

const CONTAINER_LISTS = ['containers', 'initContainers', 'ephemeralContainers'] as const;

/** One copy of each short string seen in pods; started afresh when it outgrows SHARED_MAX_ENTRIES. */
const shared = new Map<string, string>();

/** Pod fields whose whole value is usually the same for all the pods of a workload. */
const SHARED_PARTS: ReadonlySet<string> = new Set([
  'labels',
  'ownerReferences',
  'tolerations',
  'containers',
  'initContainers',
  'nodeSelector',
  'affinity',
  'topologySpreadConstraints',
]);
const SHARED_PARTS_MAX_ENTRIES = 10_000;

/** One copy of each such part seen, by its JSON; started afresh when it outgrows SHARED_PARTS_MAX_ENTRIES. */
const sharedParts = new Map<string, unknown>();

/**
 * What a kind shares: the fields whose whole value is one copy for all the objects with an equal one (`parts`), and
 * the fields of its top levels whose strings are unique to the object (`unique`: not put in the shared table).
 */
interface Sharing {
  readonly parts: ReadonlySet<string>;
  readonly unique: ReadonlySet<string>;
  /** Whether each of status.conditions is one copy for all the objects with an equal one (heldCondition). */
  readonly conditions?: boolean;
  /** Whether the objects of its top levels are made with their fields inside the object (withFieldsInside). */
  readonly inside?: boolean;
}

const POD_SHARING: Sharing = { parts: SHARED_PARTS, unique: UNIQUE_VALUES };

/**
 * NodeClaims: the NodeClaims of one NodePool and instance type have the same labels, annotations (the pool's and
 * class's hashes), owner, requirements, requests, node class, capacity and allocatable. Of the status, the
 * providerID, node name and last pod event time are the claim's own.
 */
const CLAIM_SHARING: Sharing = {
  parts: new Set([
    'labels',
    'annotations',
    'ownerReferences',
    'finalizers',
    'requirements',
    'resources',
    'nodeClassRef',
    'taints',
    'startupTaints',
    'capacity',
    'allocatable',
  ]),
  unique: new Set([...UNIQUE_VALUES, 'providerID', 'nodeName', 'lastPodEventTime']),
  conditions: true,
  inside: true,
};

/**
 * Nodes: the Nodes of one instance type have the same annotations, capacity, allocatable and taints; the name, uid,
 * providerID and the hostname label are the node's own (the labels, with the hostname among them, are not shared).
 */
const NODE_SHARING: Sharing = {
  parts: new Set(['annotations', 'finalizers', 'taints', 'capacity', 'allocatable']),
  unique: new Set([...UNIQUE_VALUES, 'providerID']),
  conditions: true,
  inside: true,
};

/**
 * The one copy of the part `v` (the value of a shared part's field, at `depth`): looked up by the JSON of `v` as it
 * came, which is the JSON of its copy too (copyShared changes no value, only which string object holds it), so a
 * part seen before is not copied again.
 */
function sharePart(v: unknown, key: string, depth: number, how: Sharing): unknown {
  if (typeof v !== 'object' || v === null) return copyShared(v, key, depth, how);
  const json = JSON.stringify(v);
  const had = sharedParts.get(json);
  if (had !== undefined) return had;
  const copy = copyShared(v, key, depth, how);
  if (sharedParts.size >= SHARED_PARTS_MAX_ENTRIES) sharedParts.clear();
  sharedParts.set(json, copy);
  return copy;
}

function share(v: string): string {
  if (v.length > SHARED_MAX_LENGTH) return v;
  const had = shared.get(v);
  if (had !== undefined) return had;
  if (shared.size >= SHARED_MAX_ENTRIES) shared.clear();
  shared.set(v, v);
  return v;
}

/**
 * A copy of the JSON tree under `o` whose short string values are shared copies. `key` is the field the value
 * sits in (object keys are shared by V8 already). At the object's top levels (metadata, status), the fields
 * unique to the object are left as they are; deeper, names and uids are an owner's, a container's, a node's,
 * which repeat from pod to pod. The value of a SHARED_PARTS field is one copy for every pod whose part is equal.
 */
function copyShared(o: unknown, key: string, depth: number, how: Sharing): unknown {
  if (typeof o === 'string') return depth <= 2 && how.unique.has(key) ? o : share(o);
  if (Array.isArray(o)) {
    if (how.conditions && key === 'conditions' && depth === 2)
      return o.map((c) => heldCondition(c) ?? keepCondition(copyShared(c, key, depth + 1, how)));
    return o.map((v) => copyShared(v, key, depth + 1, how));
  }
  if (!isObj(o)) return o;
  const keys = Object.keys(o);
  const out: Obj = how.inside && depth <= 3 && keys.length > 4 && keys.length <= 16 ? withFieldsInside(keys) : {};
  for (const k of keys)
    out[k] = how.parts.has(k) ? sharePart(o[k], k, depth + 1, how) : copyShared(o[k], k, depth + 1, how);
  // Grown key by key past 16 keys, V8 keeps an object as a hash-table dictionary; a spread copy is a fast object
  // (a NodeClaim's two dozen labels: cluster.ts, fastLabels).
  return keys.length > 16 ? { ...out } : out;
}

/**
 * One copy of each condition of the Nodes and NodeClaims held (status.conditions): the NodeClaims launched together
 * went through their lifecycle together, so their conditions are equal field for field, times included (a time has
 * a second's resolution), and a condition was the largest part of a NodeClaim that was its own. Found by the
 * lastTransitionTime string, then compared field by field (before the condition is copied); a condition without a time,
 * or with a field that is not a string, number or boolean, stays its own. The table holds the conditions of the last
 * SHARED_CONDITIONS_MAX_TIMES times seen (started afresh past that), so what it costs where no two objects share a
 * time is bounded, not a cost per object. A condition is only read (the lifecycle edits copies), so sharing it is
 * invisible.
 */
const sharedConditions = new Map<string, Obj | Obj[]>();
const SHARED_CONDITIONS_MAX_TIMES = 2_000;
/** The conditions another object's equal condition was made into (what is worth remembering a parse of). */
const conditionsShared = new WeakSet<object>();

/** Whether `c` is a condition that stands for an equal one of another Node or NodeClaim (heldCondition). */
export function isSharedCondition(c: object): boolean {
  return conditionsShared.has(c);
}

/** The time a condition is found by, when it can be shared: it has one and its fields are strings, numbers, booleans. */
function timeOf(c: unknown): string | undefined {
  if (!isObj(c)) return undefined;
  const at = c['lastTransitionTime'];
  if (typeof at !== 'string') return undefined;
  for (const k in c) {
    const t = typeof c[k];
    if (t !== 'string' && t !== 'number' && t !== 'boolean') return undefined;
  }
  return at;
}

/** The condition the table holds that equals `c` (as given: no copy is made of a condition held already). */
function heldCondition(c: unknown): Obj | undefined {
  const at = timeOf(c);
  const had = at === undefined ? undefined : sharedConditions.get(at);
  if (had === undefined) return undefined;
  const same = Array.isArray(had) ? had.find((h) => sameFlat(h, c as Obj)) : sameFlat(had, c as Obj) ? had : undefined;
  if (same) conditionsShared.add(same);
  return same;
}

/** `c` (a copy that heldCondition found no equal of) kept in the table for the objects that come next. */
function keepCondition(c: unknown): unknown {
  const at = timeOf(c);
  if (at === undefined) return c;
  const had = sharedConditions.get(at);
  if (had === undefined) {
    if (sharedConditions.size >= SHARED_CONDITIONS_MAX_TIMES) sharedConditions.clear();
    sharedConditions.set(at, c as Obj);
  } else if (Array.isArray(had)) had.push(c as Obj);
  else sharedConditions.set(at, [had, c as Obj]);
  return c;
}

/** Whether two flat objects have the same keys in the same order and identical values. */
function sameFlat(a: Obj, b: Obj): boolean {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i] || a[ka[i]!] !== b[kb[i]!]) return false;
  return true;
}

/**
 * A new empty object whose fields, set in the order of `keys`, will sit inside it. An object grown key by key from
 * `{}` has room inside for four fields and puts the rest in a separate array, grown a few slots at a time; an object
 * made by a constructor gets room for what that constructor's first objects came to have (V8's slack tracking). So each
 * set of keys of the Nodes' and NodeClaims' top-level objects (the object, metadata, spec, status, a condition) has a
 * constructor of its own, whose prototype is Object.prototype (its objects are plain objects to every reader); no code
 * is made from the keys. At most SHAPES_MAX sets are remembered (started afresh past that).
 */
function withFieldsInside(keys: readonly string[]): Obj {
  const id = keys.join('\n');
  let make = shapes.get(id);
  if (make === undefined) {
    if (shapes.size >= SHAPES_MAX) shapes.clear();
    make = constructorOfItsOwn();
    shapes.set(id, make);
  }
  return new make() as Obj;
}

const shapes = new Map<string, new () => object>();
const SHAPES_MAX = 1_000;

/** A constructor of plain objects, a new one at each call (each has its own V8 map and slack). */
function constructorOfItsOwn(): new () => object {
  const make = function (this: object) {} as unknown as { prototype: object } & (new () => object);
  make.prototype = Object.prototype;
  return make;
}

/** The conditions something reads, without lastProbeTime (always null; nothing reads it). */
function leanConditions(list: unknown): unknown {
  if (!Array.isArray(list)) return list;
  return list
    .filter((c) => !isObj(c) || POD_CONDITIONS_KEPT.has(String(c['type'])))
    .map((c) => (isObj(c) ? pick(c, (k) => k !== 'lastProbeTime') : c));
}

/** A Pod's status without what nobody reads. */
function leanPodStatus(status: Obj): Obj {
  const out = pick(status, (k) => !POD_STATUS_DROPPED.has(k));
  for (const k of ['containerStatuses', 'initContainerStatuses'])
    if (k in out) out[k] = pickEach(out[k], CONTAINER_STATUS_KEPT);
  if ('conditions' in out) out['conditions'] = leanConditions(out['conditions']);
  return out;
}

/** A Pod without what the controller never reads (a new object; `o` is left as it is). */
export function stripPod(o: KubeObject): KubeObject {
  const out: KubeObject = { ...stripMetadata(o) };
  if (isObj(o.spec)) {
    const spec = pick(o.spec, (k) => !POD_SPEC_DROPPED.has(k));
    for (const k of CONTAINER_LISTS) if (k in spec) spec[k] = pickEach(spec[k], CONTAINER_KEPT);
    out.spec = spec;
  }
  if (isObj(o.status)) out.status = leanPodStatus(o.status);
  // The kept parts that are still the caller's (labels, ownerReferences, resources, tolerations) are copied too.
  return copyShared(out, '', 0, POD_SHARING) as KubeObject;
}

/**
 * A NodeClaim without managedFields and the last-applied annotation, its short strings and the parts that
 * NodeClaims have alike (CLAIM_SHARING) shared copies. Every field stays: the lifecycle, disruption and metrics read
 * the object; it is only read (the lifecycle edits a draft copy, nodeclaim/lifecycle/draft.ts). Returns `o` itself
 * when it is such a copy already.
 */
export function stripNodeClaim(o: KubeObject): KubeObject {
  if (leanObjects.has(o)) return o;
  const out = copyShared(stripMetadata(o), '', 0, CLAIM_SHARING) as KubeObject;
  leanObjects.add(out);
  return out;
}
