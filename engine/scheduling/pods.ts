// What the scheduler derives from a pod: its requirements under a preference policy, its validity for
// Karpenter, selector matching, and the small predicates the disruption code shares.
import type {
  LabelSelector, Labels, NodeSelectorRequirement, Pod, PreferencePolicy, Requirements,
} from '../domain/types.ts';
import { NODEPOOL_LABEL, schedulingRestrictedReason } from './labels.ts';
import { add, fromLabels, fromSelector, operatorOf } from './requirements.ts';

/** The preferred node affinity terms, heaviest first (stable). */
export function preferredTermsByWeight(pod: Pod) {
  const prefs = pod.affinity?.nodeAffinity?.preferred ?? [];
  return [...prefs].sort((a, b) => b.weight - a.weight);
}

/**
 * Pod requirements (§1.11): nodeSelector, then (Respect only) the heaviest preferred node-affinity term,
 * then the first required term. Karpenter tries required terms one at a time; relaxation drops the first.
 */
export function podRequirements(pod: Pod, policy: PreferencePolicy): Requirements {
  let reqs = fromLabels(pod.nodeSelector);
  if (policy === 'Respect') {
    const heaviest = preferredTermsByWeight(pod)[0];
    if (heaviest) reqs = add(reqs, ...heaviest.preference.matchExpressions.map(fromSelector));
  }
  const required = pod.affinity?.nodeAffinity?.required?.[0];
  if (required) reqs = add(reqs, ...required.matchExpressions.map(fromSelector));
  return reqs;
}

/** The same without preferences: used for topology domains, daemonset compatibility and under Ignore. */
export function strictPodRequirements(pod: Pod): Requirements {
  return podRequirements(pod, 'Ignore');
}

/** A reason Karpenter ignores the pod before scheduling (§1.10), or undefined. */
export function podValidationError(pod: Pod): string | undefined {
  if (pod.ignoredReason) return pod.ignoredReason;
  const check = (r: NodeSelectorRequirement, where: string): string | undefined => {
    const restricted = schedulingRestrictedReason(r.key);
    if (restricted && r.key !== NODEPOOL_LABEL) return `${where}: ${restricted}`;
    if (!['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'].includes(r.operator)) return `${where}: operator ${r.operator} is not supported for pods`;
    if (r.operator === 'In' && r.values.length === 0) return `${where}: operator In needs at least one value`;
    if ((r.operator === 'Gt' || r.operator === 'Lt') && (r.values.length !== 1 || !/^\d+$/.test(r.values[0]!))) return `${where}: operator ${r.operator} needs one non-negative integer value`;
    return undefined;
  };
  for (const [k, v] of Object.entries(pod.nodeSelector)) {
    const e = check({ key: k, operator: 'In', values: [v] }, `nodeSelector ${k}`);
    if (e) return e;
  }
  const terms = pod.affinity?.nodeAffinity?.required ?? [];
  for (const [i, term] of terms.entries()) {
    if (term.matchFields?.length) return `required node affinity term ${i} uses matchFields, which Karpenter does not support`;
    for (const r of term.matchExpressions) {
      const e = check(r, `required node affinity term ${i} key ${r.key}`);
      if (e) return e;
    }
  }
  for (const [i, p] of (pod.affinity?.nodeAffinity?.preferred ?? []).entries()) {
    for (const r of p.preference.matchExpressions) {
      const e = check(r, `preferred node affinity term ${i} key ${r.key}`);
      if (e) return e;
    }
  }
  return undefined;
}

/** The pod opted out of Karpenter with `karpenter.sh/nodepool DoesNotExist`. */
export function optsOutOfKarpenter(pod: Pod): boolean {
  const r = strictPodRequirements(pod).get(NODEPOOL_LABEL);
  return r !== undefined && operatorOf(r) === 'DoesNotExist';
}

export function isTerminal(pod: Pod): boolean {
  return pod.phase === 'Succeeded' || pod.phase === 'Failed';
}

export function isTerminating(pod: Pod): boolean {
  return pod.deletionTimestamp !== undefined;
}

export function isActive(pod: Pod): boolean {
  return !isTerminal(pod) && !isTerminating(pod);
}

export function isOwnedByDaemonSet(pod: Pod): boolean {
  return pod.owner?.kind === 'DaemonSet';
}

export function isMirrorPod(pod: Pod): boolean {
  return pod.owner?.kind === 'Node' || pod.annotations['kubernetes.io/config.mirror'] !== undefined;
}

export function isStatefulSetPod(pod: Pod): boolean {
  return pod.owner?.kind === 'StatefulSet';
}

export function podKey(pod: Pod): string {
  return `${pod.namespace}/${pod.name}`;
}

/** Label selector matching. An undefined selector matches nothing; {} matches everything. */
export function selectorMatches(sel: LabelSelector | undefined, labels: Labels): boolean {
  if (!sel) return false;
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const v = labels[e.key];
    switch (e.operator) {
      case 'In':
        if (!has || !e.values.includes(v!)) return false;
        break;
      case 'NotIn':
        if (has && e.values.includes(v!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}

/**
 * The scheduling queue order (§2.3): CPU descending, memory descending, older first, then uid.
 * `creationIndex` breaks ties between pods created in the same millisecond when the caller knows their order.
 */
export function compareQueueOrder(a: Pod, b: Pod): number {
  const ca = a.requests['cpu'] ?? 0;
  const cb = b.requests['cpu'] ?? 0;
  if (ca !== cb) return cb - ca;
  const ma = a.requests['memory'] ?? 0;
  const mb = b.requests['memory'] ?? 0;
  if (ma !== mb) return mb - ma;
  if (a.creationTimestamp !== b.creationTimestamp) return a.creationTimestamp - b.creationTimestamp;
  return a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0;
}
