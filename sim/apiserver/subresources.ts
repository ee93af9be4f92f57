// The pods/binding and */scale subresources.
import { toKubeTime } from '../../controller/operator/clock.ts';
import { errors } from './errors.ts';
import { mergePatch, jsonPatch } from './patch.ts';
import type { PatchType, Registry } from './registry.ts';
import type { ResourceInfo } from './resources.ts';
import { formatLabelSelector, type LabelSelectorObject } from './selectors.ts';
import { strategicMerge } from './strategic.ts';
import { draft, isObject, type JsonObject, type KObject } from './types.ts';

/**
 * Binds a pod to a node, as kube-scheduler does (POST pods/NAME/binding, or the legacy POST bindings):
 * sets spec.nodeName and the PodScheduled=True condition. A pod already bound is a 409.
 */
export function bind(reg: Registry, namespace: string, name: string, body: unknown): KObject {
  if (!isObject(body) || !isObject(body.target) || typeof body.target.name !== 'string' || !body.target.name) {
    throw errors.badRequest('a Binding needs target.name (the node)');
  }
  const pods = reg.resources.resolve('pods');
  const pod = reg.get(pods, namespace, name);
  const spec = (pod.spec ?? {}) as { nodeName?: string };
  if (spec.nodeName) throw errors.conflict(pods, name, `pod ${name} is already assigned to node "${spec.nodeName}"`);
  if (pod.metadata.deletionTimestamp)
    throw errors.conflict(pods, name, `pod ${name} is being deleted, cannot be assigned to a host`);
  const next = draft(pod);
  (next.spec as JsonObject).nodeName = body.target.name;
  const status = (isObject(next.status) ? next.status : (next.status = {})) as JsonObject;
  const conditions = ((status.conditions as JsonObject[] | undefined) ?? []).filter((c) => c.type !== 'PodScheduled');
  conditions.push({
    type: 'PodScheduled',
    status: 'True',
    lastProbeTime: null,
    lastTransitionTime: toKubeTime(reg.clock.now()),
  });
  status.conditions = conditions;
  return reg.commit(pods, pod, next);
}

/** The autoscaling/v1 Scale view of a Deployment, ReplicaSet, StatefulSet or NodePool (its status replicas: status.nodes, as Karpenter's CRD maps them). */
function scaleOf(r: ResourceInfo, obj: KObject): JsonObject {
  const spec = (obj.spec ?? {}) as { replicas?: number; selector?: LabelSelectorObject };
  const status = (obj.status ?? {}) as { replicas?: number; nodes?: number };
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: obj.metadata.name,
      namespace: obj.metadata.namespace,
      uid: obj.metadata.uid,
      resourceVersion: obj.metadata.resourceVersion,
      creationTimestamp: obj.metadata.creationTimestamp,
    },
    spec: { replicas: spec.replicas ?? 0 },
    status:
      r.kind === 'NodePool'
        ? { replicas: status.nodes ?? 0 }
        : { replicas: status.replicas ?? 0, selector: formatLabelSelector(spec.selector) },
  };
}

function requireScale(r: ResourceInfo): void {
  if (!r.subresources.includes('scale')) throw errors.pathNotFound(`${r.key}/scale`);
}

export function getScale(reg: Registry, r: ResourceInfo, namespace: string, name: string): JsonObject {
  requireScale(r);
  return scaleOf(r, reg.get(r, namespace, name));
}

/** PUT or PATCH of a Scale: only spec.replicas reaches the object (with its resourceVersion checked). */
export function writeScale(
  reg: Registry,
  r: ResourceInfo,
  namespace: string,
  name: string,
  body: unknown,
  patchType?: PatchType,
): JsonObject {
  requireScale(r);
  const obj = reg.get(r, namespace, name);
  const current = scaleOf(r, obj);
  let scale: unknown = body;
  if (patchType === 'json') scale = jsonPatch(current, body);
  else if (patchType === 'merge' || patchType === 'apply') scale = mergePatch(current, body);
  else if (patchType === 'strategic') scale = strategicMerge(current, body);
  if (
    !isObject(scale) ||
    !isObject(scale.spec) ||
    typeof scale.spec.replicas !== 'number' ||
    !Number.isInteger(scale.spec.replicas) ||
    scale.spec.replicas < 0
  ) {
    throw errors.invalid({ group: 'autoscaling', plural: 'scales', kind: 'Scale' }, name, [
      { field: 'spec.replicas', message: 'Invalid value: must be a non-negative integer' },
    ]);
  }
  const rv = isObject(scale.metadata) ? scale.metadata.resourceVersion : undefined;
  if (typeof rv === 'string' && rv && rv !== obj.metadata.resourceVersion) throw errors.conflict(r, name);
  const next = draft(obj);
  (next.spec as JsonObject).replicas = scale.spec.replicas;
  return scaleOf(r, reg.commit(r, obj, reg.prepareUpdate(r, obj, next, undefined)));
}
