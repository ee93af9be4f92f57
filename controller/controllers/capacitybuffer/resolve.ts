// Resolving a CapacityBuffer's pod shape (Karpenter core pkg/utils/apps/resolve.go, main at 2266468): a
// podTemplateRef names a PodTemplate of the buffer's namespace; a scalableRef a Deployment, StatefulSet or
// ReplicaSet of group apps (an empty group means apps), whose spec.template is the shape and whose
// spec.replicas (1 when unset) feeds the percentage. Read from the API server on every pass (Karpenter reads
// the workload with a typed Get and re-resolves every 30 s; it does not watch workloads).
import type { CapacityBuffer } from '../../../engine/index.ts';
import type { KubeClient, KubeObject } from '../../operator/kube.ts';

export interface Resolution {
  /** A PodTemplateSpec: metadata (labels) and spec. */
  readonly template: unknown;
  readonly podTemplate?: { readonly name: string; readonly generation: number };
  readonly scalableReplicas?: number;
}

/** A reference that cannot be followed for a reason the user must fix (not retried sooner than the requeue). */
export class UnsupportedRefError extends Error {
  override name = 'UnsupportedRefError';
}

const templateOf = (o: KubeObject): unknown => (o.spec as { template?: unknown } | undefined)?.template ?? {};
const replicasOf = (o: KubeObject): number => {
  const r = (o.spec as { replicas?: unknown } | undefined)?.replicas;
  return typeof r === 'number' ? r : 1;
};

async function scalable(kube: KubeClient, kind: string, name: string, ns: string): Promise<KubeObject> {
  // One literal call per kind: test/deploy/rbac.ts reads these to check the chart's RBAC.
  switch (kind) {
    case 'Deployment':
      return kube.get('Deployment', name, ns);
    case 'StatefulSet':
      return kube.get('StatefulSet', name, ns);
    case 'ReplicaSet':
      return kube.get('ReplicaSet', name, ns);
    default:
      throw new UnsupportedRefError(`unsupported kind "${kind}"`);
  }
}

/** The buffer's shape; rejects with the API error (404 when the object is missing) or UnsupportedRefError. */
export async function resolveBuffer(kube: KubeClient, cb: CapacityBuffer): Promise<Resolution> {
  if (cb.podTemplateRef) {
    const pt = await kube.get('PodTemplate', cb.podTemplateRef.name, cb.namespace);
    return {
      template: (pt as { template?: unknown }).template ?? {},
      podTemplate: { name: pt.metadata.name ?? cb.podTemplateRef.name, generation: pt.metadata.generation ?? 0 },
    };
  }
  const ref = cb.scalableRef!;
  const group = ref.apiGroup || 'apps';
  if (group !== 'apps') throw new UnsupportedRefError(`unsupported scalableRef API group "${ref.apiGroup}"`);
  const obj = await scalable(kube, ref.kind, ref.name, cb.namespace);
  return { template: templateOf(obj), scalableReplicas: replicasOf(obj) };
}
