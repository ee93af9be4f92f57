// Per-node filters of the simulated scheduler, each returning kube-scheduler's reason text when the node
// does not fit (those texts end up in the pod's PodScheduled=False message, where people read them).
import type { KObject } from '../../apiserver/index.ts';
import {
  hostPorts,
  podRequests,
  podSpec,
  portsConflict,
  type NodeInfo,
  type NodeSelectorRequirement,
  type NodeSelectorTerm,
  type Taint,
} from './nodes.ts';

const REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector";
const REASON_PORTS = "node(s) didn't have free ports for the requested pod ports";

function matchRequirement(req: NodeSelectorRequirement, value: string | undefined): boolean {
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      if (value === undefined || values.length !== 1) return false;
      const a = Number.parseInt(value, 10);
      const b = Number.parseInt(values[0]!, 10);
      if (!Number.isFinite(a) || !Number.isFinite(b) || String(a) !== value.trim()) return false;
      return req.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

/** One nodeSelectorTerm: expressions on labels and fields (metadata.name) ANDed; an empty term matches nothing. */
function matchTerm(term: NodeSelectorTerm, labels: Record<string, string>, nodeName: string): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  return (
    exprs.every((e) =>
      matchRequirement(e, Object.prototype.hasOwnProperty.call(labels, e.key) ? labels[e.key] : undefined),
    ) && fields.every((f) => matchRequirement(f, f.key === 'metadata.name' ? nodeName : undefined))
  );
}

/** nodeSelector and required node affinity (terms ORed). */
export function matchesNodeAffinity(pod: KObject, labels: Record<string, string>, nodeName: string): boolean {
  const spec = podSpec(pod);
  for (const [k, v] of Object.entries(spec.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const required = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return true;
  return (required.nodeSelectorTerms ?? []).some((t) => matchTerm(t, labels, nodeName));
}

type Toleration = NonNullable<ReturnType<typeof podSpec>['tolerations']>[number];

function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.operator === 'Exists') return !t.key || t.key === taint.key;
  return t.key === taint.key && (t.value ?? '') === (taint.value ?? '');
}

/** The first NoSchedule/NoExecute taint none of the tolerations covers. */
export function untoleratedTaint(
  tolerations: readonly Toleration[] | undefined,
  taints: readonly Taint[],
): Taint | undefined {
  return taints.find(
    (taint) =>
      (taint.effect === 'NoSchedule' || taint.effect === 'NoExecute') &&
      !(tolerations ?? []).some((t) => tolerates(t, taint)),
  );
}

const taintReason = (t: Taint): string => `node(s) had untolerated taint {${t.key}: ${t.value ?? ''}}`;

/** "Insufficient cpu", "Too many pods", ... for each resource the node lacks. */
function insufficient(pod: KObject, info: NodeInfo): string[] {
  const out: string[] = [];
  const free = (k: string): number => (info.allocatable[k] ?? 0) - (info.used[k] ?? 0);
  if (free('pods') < 1) out.push('Too many pods');
  const req = podRequests(pod);
  for (const k in req) {
    const v = req[k]!;
    if (k !== 'pods' && v > 0 && v > free(k)) out.push(`Insufficient ${k}`);
  }
  return out;
}

/** The node-local filters in kube-scheduler's order; the reasons for the first that fails. */
export function nodeFilters(pod: KObject, info: NodeInfo): string[] {
  if (!matchesNodeAffinity(pod, info.labels, info.name)) return [REASON_AFFINITY];
  const taint = untoleratedTaint(podSpec(pod).tolerations, info.taints);
  if (taint) return [taintReason(taint)];
  const lacking = insufficient(pod, info);
  if (lacking.length) return lacking;
  if (portsConflict(hostPorts(pod), info.ports)) return [REASON_PORTS];
  return [];
}

/** kube-scheduler's default score (NodeResourcesFit, LeastAllocated): mean free fraction of cpu and memory after placing. */
export function leastAllocatedScore(pod: KObject, info: NodeInfo): number {
  const req = podRequests(pod);
  let sum = 0;
  for (const k of ['cpu', 'memory']) {
    const cap = info.allocatable[k] ?? 0;
    sum += cap > 0 ? Math.max(0, cap - (info.used[k] ?? 0) - (req[k] ?? 0)) / cap : 0;
  }
  return sum / 2;
}
