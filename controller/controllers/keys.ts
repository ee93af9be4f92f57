// Karpenter's well-known keys the controllers write (docs/karpenter/disruption.md §0.2).
export const TERMINATION_FINALIZER = 'karpenter.sh/termination';
export const NODEPOOL_LABEL = 'karpenter.sh/nodepool';
export const REGISTERED_LABEL = 'karpenter.sh/registered';
export const INITIALIZED_LABEL = 'karpenter.sh/initialized';
export const DO_NOT_SYNC_TAINTS_LABEL = 'karpenter.sh/do-not-sync-taints';
export const DO_NOT_DISRUPT_ANNOTATION = 'karpenter.sh/do-not-disrupt';
export const NODEPOOL_HASH_ANNOTATION = 'karpenter.sh/nodepool-hash';
export const NODEPOOL_HASH_VERSION_ANNOTATION = 'karpenter.sh/nodepool-hash-version';
export { NODEPOOL_HASH_VERSION } from '../../engine/index.ts';
export const TERMINATION_TIMESTAMP_ANNOTATION = 'karpenter.sh/nodeclaim-termination-timestamp';
export const MIN_VALUES_RELAXED_ANNOTATION = 'karpenter.sh/nodeclaim-min-values-relaxed';
export const UNREGISTERED_TAINT = { key: 'karpenter.sh/unregistered', effect: 'NoExecute' } as const;
export const DISRUPTED_TAINT = { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' } as const;
export const EXCLUDE_LB_LABEL = 'node.kubernetes.io/exclude-from-external-load-balancers';

/** The node-class label: `<group>/<lower-case kind>` = name (karpenter.k8s.aws/ec2nodeclass). */
export const nodeClassLabel = (ref: { group: string; kind: string }): string =>
  `${ref.group}/${ref.kind.toLowerCase()}`;
