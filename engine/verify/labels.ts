// The verifier's own small matchers (engine/verify): node labels as a launched node would carry them, and the
// kube-scheduler's view of whether a pod may run there. Shared by the verifier's checks, never by the solvers.
import type {
  DaemonSet,
  InstanceType,
  NodePool,
  NodeSelectorRequirement,
  Offering,
  Pod,
  Taint,
  Toleration,
} from '../domain/types.ts';
import type { NewNodeClaimPlan } from '../model/types.ts';

export type Labels = Record<string, string>;

export function matchExpr(e: NodeSelectorRequirement, labels: Labels): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, e.key);
  const v = labels[e.key];
  switch (e.operator) {
    case 'In':
      return has && e.values.includes(v!);
    case 'NotIn':
      return !has || !e.values.includes(v!);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
      return has && /^-?\d+$/.test(v!) && Number(v) > Number(e.values[0]);
    case 'Lt':
      return has && /^-?\d+$/.test(v!) && Number(v) < Number(e.values[0]);
    case 'Gte':
      return has && /^-?\d+$/.test(v!) && Number(v) >= Number(e.values[0]);
    case 'Lte':
      return has && /^-?\d+$/.test(v!) && Number(v) <= Number(e.values[0]);
  }
}

const ALIASES: Record<string, string> = {
  'failure-domain.beta.kubernetes.io/zone': 'topology.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region': 'topology.kubernetes.io/region',
  'beta.kubernetes.io/arch': 'kubernetes.io/arch',
  'beta.kubernetes.io/os': 'kubernetes.io/os',
  'beta.kubernetes.io/instance-type': 'node.kubernetes.io/instance-type',
};
export const norm = (k: string) => ALIASES[k] ?? k;

/** kube-scheduler's view: nodeSelector and (one of) the required node affinity terms match the labels. */
export function podMatchesLabels(pod: Pod, labels: Labels): string | undefined {
  for (const [k, v] of Object.entries(pod.nodeSelector)) if (labels[norm(k)] !== v) return `nodeSelector ${k}=${v}`;
  const terms = pod.affinity?.nodeAffinity?.required ?? [];
  if (
    terms.length &&
    !terms.some((t) => t.matchExpressions.every((e) => matchExpr({ ...e, key: norm(e.key) }, labels)))
  ) {
    return 'required node affinity';
  }
  for (const alt of pod.volumeRequirements ?? [])
    if (alt.every((e) => matchExpr({ ...e, key: norm(e.key) }, labels))) return undefined;
  if (pod.volumeRequirements?.length) return 'volume topology';
  return undefined;
}

export function tolerated(tols: readonly Toleration[], taint: Taint): boolean {
  return tols.some((t) => {
    if (t.effect && t.effect !== taint.effect) return false;
    if (!t.key) return t.operator === 'Exists';
    if (t.key !== taint.key) return false;
    if ((t.operator ?? 'Equal') === 'Exists') return true;
    if (t.operator === 'Gt' || t.operator === 'Lt') {
      const a = Number(taint.value);
      const b = Number(t.value);
      return Number.isInteger(a) && Number.isInteger(b) && (t.operator === 'Gt' ? a > b : a < b);
    }
    return (t.value ?? '') === (taint.value ?? '');
  });
}

/** kube-scheduler's TaintToleration filter: only NoSchedule and NoExecute keep a pod off a node. */
export function blocks(t: Taint): boolean {
  return t.effect !== 'PreferNoSchedule';
}

export function sumRequests(pods: readonly Pod[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of pods) for (const [k, v] of Object.entries(p.requests)) out[k] = (out[k] ?? 0) + v;
  return out;
}

export const RESERVATION_ID = 'karpenter.k8s.aws/capacity-reservation-id';

export function typeLabels(it: InstanceType, o: Offering): Labels {
  const out: Labels = {};
  for (const r of it.requirements.values()) if (!r.complement && r.values.size === 1) out[r.key] = [...r.values][0]!;
  out['topology.kubernetes.io/zone'] = o.zone;
  out['karpenter.sh/capacity-type'] = o.capacityType;
  if (o.reservationId !== undefined) out[RESERVATION_ID] = o.reservationId;
  out['node.kubernetes.io/instance-type'] = it.name;
  return out;
}

/**
 * Labels the launched node carries because the NodeClaim pins them: a single-valued In requirement (an
 * instance type that offers several operating systems boots the one the claim asks for). The type's own
 * single values are applied after these, so a claim that contradicts its instance type still shows.
 */
export function claimLabels(claim: NewNodeClaimPlan): Labels {
  const out: Labels = {};
  for (const r of claim.requirements) if (r.operator === 'In' && r.values.length === 1) out[norm(r.key)] = r.values[0]!;
  return out;
}

/** The offerings of a type a NodeClaim allows (its zone, capacity-type and reservation requirements). */
export function allowedOfferings(claim: NewNodeClaimPlan, it: InstanceType): Offering[] {
  const zone = claim.requirements.filter((r) => norm(r.key) === 'topology.kubernetes.io/zone');
  const ct = claim.requirements.filter((r) => r.key === 'karpenter.sh/capacity-type');
  const rid = claim.requirements.filter((r) => r.key === RESERVATION_ID);
  return it.offerings.filter(
    (o) =>
      o.available &&
      zone.every((r) => matchExpr(r, { 'topology.kubernetes.io/zone': o.zone })) &&
      ct.every((r) => matchExpr(r, { 'karpenter.sh/capacity-type': o.capacityType })) &&
      rid.every((r) => matchExpr(r, o.reservationId !== undefined ? { [RESERVATION_ID]: o.reservationId } : {})),
  );
}

export function daemonOverhead(
  daemonSets: readonly DaemonSet[],
  pool: NodePool,
  labels: Labels,
): Record<string, number> {
  const pods = daemonSets
    .map((d) => d.pod)
    .filter(
      (p) =>
        pool.template.taints.every((t) => t.effect === 'PreferNoSchedule' || tolerated(p.tolerations, t)) &&
        podMatchesLabels(p, labels) === undefined,
    );
  return sumRequests(pods);
}
