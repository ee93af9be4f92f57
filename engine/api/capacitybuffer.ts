// CapacityBuffer (autoscaling.x-k8s.io/v1beta1) -> the engine's CapacityBuffer after admission, the replica
// arithmetic Karpenter's buffer controller does (core pkg/controllers/capacitybuffer/controller.go and
// helpers.go, main at 2266468), and the virtual pods a buffer stands for (pkg/state/virtualpods/
// utilities.go): pods of the buffer's template, never bound, that the provisioner and the disruption
// simulation schedule with the real pending pods, so the room they take is launched and kept.
//
// Replicas: replicas and the percentage of the scalable's replicas (rounded up, at least one when both are
// positive) combine by taking the larger; limits cap that (floor of limit / per-pod request, the smallest
// over the resources both name); with neither replicas nor percentage, limits alone give the count.
import { parseResources } from '../domain/resources.ts';
import type { Pod, Resources } from '../domain/types.ts';
import { fail, fieldError, isRecord, objectRef, ok, type Result } from './errors.ts';
import { parsePod } from './pod.ts';
import { admit } from './validate.ts';

/** Annotations Karpenter puts on a virtual pod (pkg/apis/autoscaling/v1beta1/constants.go). */
const VIRTUAL_POD_ANNOTATION = 'karpenter.sh/capacity-buffer-fake-pod';
const BUFFER_NAME_ANNOTATION = 'karpenter.sh/capacity-buffer-name';
const BUFFER_NAMESPACE_ANNOTATION = 'karpenter.sh/capacity-buffer-namespace';
/** The priority of a virtual pod: the lowest an int32 holds (Karpenter's VirtualPodPriority). */
const VIRTUAL_POD_PRIORITY = -2147483648;

export interface CapacityBuffer {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly generation?: number;
  readonly provisioningStrategy: string;
  readonly podTemplateRef?: { readonly name: string };
  readonly scalableRef?: { readonly apiGroup: string; readonly kind: string; readonly name: string };
  readonly replicas?: number;
  readonly percentage?: number;
  readonly limits?: Resources;
}

type Obj = Record<string, unknown>;
const rec = (v: unknown): Obj => (isRecord(v) ? v : {});
const int = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

export function parseCapacityBuffer(obj: unknown): Result<CapacityBuffer> {
  const admitted = admit(obj);
  if (!admitted.ok) return fail(admitted.errors);
  const o = admitted.value;
  if (o['kind'] !== 'CapacityBuffer') return fail([fieldError(objectRef(o), ['kind'], 'expected a CapacityBuffer')]);
  const meta = rec(o['metadata']);
  const spec = rec(o['spec']);
  const out: Record<string, unknown> = {
    namespace: String(meta['namespace'] ?? 'default'),
    name: String(meta['name'] ?? ''),
    uid: String(meta['uid'] ?? `${String(meta['namespace'] ?? 'default')}/${String(meta['name'] ?? '')}`),
    provisioningStrategy: String(spec['provisioningStrategy'] ?? ''),
  };
  if (typeof meta['generation'] === 'number') out['generation'] = meta['generation'];
  if (isRecord(spec['podTemplateRef'])) out['podTemplateRef'] = { name: String(spec['podTemplateRef']['name']) };
  if (isRecord(spec['scalableRef'])) {
    const r = spec['scalableRef'];
    out['scalableRef'] = { apiGroup: String(r['apiGroup'] ?? ''), kind: String(r['kind']), name: String(r['name']) };
  }
  if (int(spec['replicas']) !== undefined) out['replicas'] = spec['replicas'];
  if (int(spec['percentage']) !== undefined) out['percentage'] = spec['percentage'];
  if (isRecord(spec['limits'])) out['limits'] = parseResources(spec['limits'] as Record<string, string | number>);
  return ok(out as unknown as CapacityBuffer);
}

/** ceil(scalable x percentage / 100), at least 1 when both are positive. */
export function percentageReplicas(scalableReplicas: number, percentage: number): number {
  const n = Math.ceil((scalableReplicas * percentage) / 100);
  return n < 1 && percentage > 0 && scalableReplicas > 0 ? 1 : n;
}

const INT32_MAX = 2147483647;

/**
 * How many pods of `requests` fit in `limits`: floor(limit / request) for each resource both name with a
 * non-zero request, the smallest of those; undefined when no resource is shared (limits constrain nothing).
 * `pods` is not a request here (Karpenter sums container requests only).
 */
export function limitReplicas(limits: Resources, requests: Resources): number | undefined {
  let best: number | undefined;
  for (const [name, limit] of Object.entries(limits)) {
    if (name === 'pods') continue;
    const request = requests[name];
    if (!request) continue;
    const n = Math.min(Math.floor(limit / request), INT32_MAX);
    best = best === undefined ? n : Math.min(best, n);
  }
  return best;
}

/** The buffer's replica count, given the scalable's replicas (scalableRef buffers) and one pod's requests. */
export function bufferReplicas(cb: CapacityBuffer, requests: Resources, scalableReplicas?: number): number {
  const candidates: number[] = [];
  if (cb.percentage !== undefined && scalableReplicas !== undefined && scalableReplicas > 0)
    candidates.push(percentageReplicas(scalableReplicas, cb.percentage));
  if (cb.replicas !== undefined) candidates.push(cb.replicas);
  const desired = candidates.length ? Math.max(...candidates) : 0;
  const byLimits = cb.limits ? limitReplicas(cb.limits, requests) : undefined;
  if (byLimits === undefined) return desired;
  return candidates.length ? Math.min(desired, byLimits) : byLimits;
}

/**
 * The template's pod spec as a virtual pod may carry it: no node name, no PersistentVolumeClaim or ephemeral
 * volumes (their claims never exist for a pod that is never created) and none of their mounts, the lowest
 * priority.
 */
export function sanitizeVirtualPodSpec(spec: Obj): Obj {
  const volumes = Array.isArray(spec['volumes']) ? (spec['volumes'] as Obj[]) : [];
  const dropped = new Set(
    volumes.filter((v) => v['persistentVolumeClaim'] || v['ephemeral']).map((v) => String(v['name'])),
  );
  const mounts = (cs: unknown): Obj[] | undefined =>
    Array.isArray(cs)
      ? (cs as Obj[]).map((c) =>
          Array.isArray(c['volumeMounts'])
            ? { ...c, volumeMounts: (c['volumeMounts'] as Obj[]).filter((m) => !dropped.has(String(m['name']))) }
            : c,
        )
      : undefined;
  const out: Obj = { ...spec, priority: VIRTUAL_POD_PRIORITY };
  delete out['nodeName'];
  if (volumes.length) out['volumes'] = volumes.filter((v) => !dropped.has(String(v['name'])));
  if (dropped.size) {
    const containers = mounts(spec['containers']);
    const inits = mounts(spec['initContainers']);
    if (containers) out['containers'] = containers;
    if (inits) out['initContainers'] = inits;
  }
  return out;
}

/**
 * The buffer's virtual pods: `replicas` pods of `template` (a PodTemplateSpec: metadata.labels and spec),
 * named capacity-buffer-<buffer>-<i> with uid <buffer uid>-<i> (deterministic, so a decision names the same
 * pod from one pass to the next), annotated with the buffer they stand for, marked unschedulable. A template
 * that does not make a pod is an error naming the buffer and the field.
 */
export function virtualPods(cb: CapacityBuffer, template: unknown, replicas: number, now: number): Result<Pod[]> {
  const t = rec(template);
  const labels = rec(rec(t['metadata'])['labels']);
  const spec = sanitizeVirtualPodSpec(rec(t['spec']));
  const out: Pod[] = [];
  for (let i = 1; i <= replicas; i++) {
    const r = parsePod(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `capacity-buffer-${cb.name}-${i}`,
          namespace: cb.namespace,
          uid: `${cb.uid}-${i}`,
          labels,
          annotations: {
            [VIRTUAL_POD_ANNOTATION]: 'true',
            [BUFFER_NAME_ANNOTATION]: cb.name,
            [BUFFER_NAMESPACE_ANNOTATION]: cb.namespace,
          },
        },
        spec,
        status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] },
      },
      { now },
    );
    if (!r.ok) {
      const ref = `CapacityBuffer/${cb.namespace}/${cb.name}`;
      return fail(r.errors.map((e) => ({ ...e, object: ref, message: `pod template: ${e.path} ${e.message}` })));
    }
    out.push(r.value);
  }
  return ok(out);
}

/** The buffer a virtual pod stands for ("namespace/name"), or undefined for a real pod. */
export function bufferOf(p: Pod): string | undefined {
  if (p.annotations[VIRTUAL_POD_ANNOTATION] !== 'true') return undefined;
  const ns = p.annotations[BUFFER_NAMESPACE_ANNOTATION];
  const name = p.annotations[BUFFER_NAME_ANNOTATION];
  return ns && name ? `${ns}/${name}` : undefined;
}
