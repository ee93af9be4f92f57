// Turns one planned NodeClaim into the NodeClaim object to create (docs/karpenter/scheduling.md §1.12,
// docs/karpenter/disruption.md §0.4): the NodePool's template labels, annotations, taints and startup taints, the
// nodepool and node-class labels, the nodepool-hash annotations, the plan's requirements (price-ordered
// instance types, capacity types, zones) and the requests of the pods it is for.
import {
  formatDuration,
  formatResourceValue,
  nodePoolHash,
  NODEPOOL_HASH_VERSION,
  nonZero,
  type NewNodeClaimPlan,
  type NodePool,
  type Resources,
  type Taint,
} from '../../../engine/index.ts';
import { apiVersionOf, type KubeObject } from '../../operator/kube.ts';
import {
  MIN_VALUES_RELAXED_ANNOTATION,
  NODEPOOL_HASH_ANNOTATION,
  NODEPOOL_HASH_VERSION_ANNOTATION,
  NODEPOOL_LABEL,
  nodeClassLabel,
} from '../keys.ts';

export function quantities(r: Resources): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(nonZero(r))) out[k] = formatResourceValue(k, v);
  return out;
}

const taintJson = (t: Taint) => ({ key: t.key, effect: t.effect, ...(t.value ? { value: t.value } : {}) });

export function nodeClaimFor(plan: NewNodeClaimPlan, pool: NodePool, poolObj: KubeObject): KubeObject {
  const ref = pool.template.nodeClassRef;
  const labels: Record<string, string> = {
    ...pool.template.labels,
    ...plan.labels,
    [NODEPOOL_LABEL]: pool.name,
    [nodeClassLabel(ref)]: ref.name,
  };
  const annotations: Record<string, string> = {
    ...pool.template.annotations,
    // The engine's template hash (requirements left out: requirements drift is checked on its own).
    [NODEPOOL_HASH_ANNOTATION]: nodePoolHash(pool),
    [NODEPOOL_HASH_VERSION_ANNOTATION]: NODEPOOL_HASH_VERSION,
    ...(plan.minValuesRelaxed !== undefined ? { [MIN_VALUES_RELAXED_ANNOTATION]: String(plan.minValuesRelaxed) } : {}),
    // karpenter.sh/requested-dra-drivers (spec §2.16), when the NodeClaim's pods take node-local DRA devices.
    ...(plan.annotations ?? {}),
  };
  const spec: Record<string, unknown> = {
    requirements: plan.requirements.map((r) => ({
      key: r.key,
      operator: r.operator,
      values: [...r.values],
      ...(r.minValues !== undefined ? { minValues: r.minValues } : {}),
    })),
    resources: { requests: quantities(plan.requests) },
    nodeClassRef: { group: ref.group, kind: ref.kind, name: ref.name },
    expireAfter: pool.template.expireAfter === null ? 'Never' : formatDuration(pool.template.expireAfter),
  };
  if (plan.taints.length) spec['taints'] = plan.taints.map(taintJson);
  if (plan.startupTaints.length) spec['startupTaints'] = plan.startupTaints.map(taintJson);
  if (pool.template.terminationGracePeriod !== undefined)
    spec['terminationGracePeriod'] = formatDuration(pool.template.terminationGracePeriod);
  return {
    apiVersion: apiVersionOf('NodeClaim'),
    kind: 'NodeClaim',
    metadata: {
      generateName: `${pool.name}-`,
      labels,
      annotations,
      ...(poolObj.metadata.uid
        ? {
            ownerReferences: [
              {
                apiVersion: apiVersionOf('NodePool'),
                kind: 'NodePool',
                name: pool.name,
                uid: poolObj.metadata.uid,
                blockOwnerDeletion: true,
              },
            ],
          }
        : {}),
    },
    spec,
  };
}
