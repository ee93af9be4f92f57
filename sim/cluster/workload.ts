// Helpers the simulated workload controllers share: owner references, readiness, pod templates.
import type { Api, KObject, OwnerReference } from '../apiserver/index.ts';
import { isPodReady } from '../apiserver/index.ts';
import { isTerminal } from './scheduling/nodes.ts';

export function controllerRef(owner: KObject): OwnerReference {
  return {
    apiVersion: owner.apiVersion!,
    kind: owner.kind!,
    name: owner.metadata.name!,
    uid: owner.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Objects of `resource` whose controller is the owner (through the store's owner index, not a scan). */
export function owned(api: Api, resource: string, owner: KObject): KObject[] {
  const out: KObject[] = [];
  for (const ref of api.store.dependents(owner.metadata.uid!)) {
    if (ref.resource !== resource) continue;
    const o = api.store.get(ref.resource, ref.namespace, ref.name);
    if (o?.metadata.ownerReferences?.some((r) => r.controller && r.uid === owner.metadata.uid)) out.push(o);
  }
  return out;
}

/** Pods that count toward replicas: not being deleted, not finished. */
export const isActive = (p: KObject): boolean => !p.metadata.deletionTimestamp && !isTerminal(p);

export { isPodReady };

export interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
}

/** A new pod from a template, owned by `owner`, named `<generateName>xxxxx`. */
export function podFromTemplate(
  owner: KObject,
  template: PodTemplate,
  generateName: string,
  extraLabels: Record<string, string> = {},
): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName,
      namespace: owner.metadata.namespace,
      labels: { ...(template.metadata?.labels ?? {}), ...extraLabels },
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ownerReferences: [controllerRef(owner)],
    },
    spec: structuredClone(template.spec ?? {}),
  };
}

/** Writes `status` through the status subresource unless it is already current. */
export function writeStatus(api: Api, resource: string, obj: KObject, status: Record<string, unknown>): void {
  const cur = (obj.status ?? {}) as Record<string, unknown>;
  const same = Object.keys({ ...cur, ...status }).every((k) => JSON.stringify(cur[k]) === JSON.stringify(status[k]));
  if (same) return;
  api.updateStatus(resource, obj.metadata.namespace, obj.metadata.name!, { ...obj, status });
}
