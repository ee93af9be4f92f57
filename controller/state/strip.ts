// What the informers drop from an object before it is cached (controller-runtime's cache transforms, e.g.
// TransformStripManagedFields, do the same for Karpenter): fields no part of the controller reads, which at
// 100,000 pods are most of the cache's memory. The informer passes the stripped copy on in place of the object
// the list or watch delivered, so client-node's own cache and cluster state hold that one copy.
//
// - every kind: metadata.managedFields and the `kubectl.kubernetes.io/last-applied-configuration` annotation
//   (a second copy of the object as last applied);
// - Pods: of each container, what scheduling, limits and metrics read stay (name, resources, ports,
//   restartPolicy, resizePolicy); image, command, args, env, probes, mounts, security context and the like go;
//   of the status, the container statuses keep only their name and resources (in-place resize), and the pod
//   and host IPs go. Conditions, phase, nominatedNodeName, startTime and everything else stay.
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
]);

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

const CONTAINER_LISTS = ['containers', 'initContainers', 'ephemeralContainers'] as const;

/** A Pod without what the controller never reads (a new object; `o` is left as it is). */
export function stripPod(o: KubeObject): KubeObject {
  const out: KubeObject = stripMetadata(o) === o ? { ...o } : stripMetadata(o);
  if (isObj(o.spec)) {
    const spec: Obj = { ...o.spec };
    for (const k of CONTAINER_LISTS) if (k in spec) spec[k] = pickEach(spec[k], CONTAINER_KEPT);
    out.spec = spec;
  }
  if (isObj(o.status)) {
    const status = pick(o.status, (k) => !POD_STATUS_DROPPED.has(k));
    for (const k of ['containerStatuses', 'initContainerStatuses'])
      if (k in status) status[k] = pickEach(status[k], CONTAINER_STATUS_KEPT);
    out.status = status;
  }
  return out;
}
