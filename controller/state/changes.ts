// What cluster state tells its subscribers, the entries it keeps for NodePools and node classes, and the
// small predicates it decides with.
import {
  formatFieldError,
  type EC2NodeClass,
  type FieldError,
  type NodeOverlay,
  type NodePool,
} from '../../engine/index.ts';
import type { KubeObject } from '../operator/kube.ts';

type ChangeKind =
  | 'Node'
  | 'NodeClaim'
  | 'Pod'
  | 'NodePool'
  | 'EC2NodeClass'
  | 'NodeOverlay'
  | 'CapacityBuffer'
  | 'PodTemplate'
  | 'DaemonSet'
  | 'PodDisruptionBudget'
  | 'ResourceSlice'
  | 'ResourceClaim'
  | 'ResourceClaimTemplate'
  | 'DeviceClass'
  | 'Service'
  | 'ReplicaSet'
  | 'StatefulSet'
  | 'ReplicationController';

export interface Change {
  readonly kind: ChangeKind;
  readonly type: 'upsert' | 'delete';
  readonly name: string;
  readonly namespace?: string;
  readonly obj: KubeObject;
  readonly old?: KubeObject;
}

/** What subscribers hear of a namespaced object (namespace "default" when unset), with the version it replaces. */
export function namespacedChange(kind: ChangeKind, type: Change['type'], obj: KubeObject, old?: KubeObject): Change {
  return {
    kind,
    type,
    name: obj.metadata.name ?? '',
    namespace: obj.metadata.namespace ?? 'default',
    obj,
    ...(old ? { old } : {}),
  };
}

export interface NodePoolEntry {
  readonly obj: KubeObject;
  /** undefined when the object does not validate (see errors). */
  readonly pool?: NodePool;
  readonly errors: readonly string[];
}

export interface NodeOverlayEntry {
  readonly obj: KubeObject;
  /** undefined when the object does not validate (see errors). */
  readonly overlay?: NodeOverlay;
  readonly errors: readonly string[];
}

export interface NodeClassEntry {
  readonly obj: KubeObject;
  readonly nodeClass?: EC2NodeClass;
  readonly errors: readonly string[];
}

const rvOf = (o: KubeObject | undefined): number => Number(o?.metadata.resourceVersion ?? NaN);
/** Whether `next` is not older than `cur` (resourceVersions compared as integers when both are). */
export const notOlder = (cur: KubeObject | undefined, next: KubeObject): boolean => !(rvOf(next) < rvOf(cur));
/**
 * The same version of the same object (uid and a non-empty resourceVersion equal): what a write's answer and the
 * watch event of that write both carry. Its parse is the parse of the version already held.
 */
export const sameVersion = (cur: KubeObject | undefined, next: KubeObject): boolean =>
  cur !== undefined &&
  Boolean(next.metadata.resourceVersion) &&
  cur.metadata.resourceVersion === next.metadata.resourceVersion &&
  cur.metadata.uid === next.metadata.uid;
export const errorsText = (errs: readonly FieldError[]): string[] => errs.map(formatFieldError);

export function consolidatable(o: KubeObject): boolean {
  return ((o.status?.['conditions'] ?? []) as Array<{ type?: string; status?: string }>).some(
    (c) => c.type === 'Consolidatable' && c.status === 'True',
  );
}

export function podBindingChanged(c: Change): boolean {
  const nodeName = (o: KubeObject | undefined) => (o?.spec as { nodeName?: string } | undefined)?.nodeName;
  return c.type === 'delete' || nodeName(c.obj) !== nodeName(c.old);
}
