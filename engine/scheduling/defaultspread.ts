// kube-scheduler's default topology spread constraints in the scheduling simulation (Karpenter core main after
// v1.14.1: pkg/controllers/provisioning/scheduling/defaultconstraints.go and
// designs/default-topology-spread-awareness.md). A pod to place that declares no topologySpreadConstraints of
// its own gets the configured defaults, each with a label selector deduced for it the way kube-scheduler's
// PodTopologySpread plugin deduces one (helper.DefaultSelector):
//
//   1. every Service of the pod's namespace whose selector matches the pod adds its selector's labels (a nil
//      selector matches nothing; an empty one matches everything and adds nothing);
//   2. the pod's controller adds its selector, when it is a ReplicationController (its labels overwrite the
//      Services' on a shared key) or a ReplicaSet or StatefulSet (ANDed on as expressions). Any other controller
//      (a Job, a DaemonSet) adds nothing, nor does one that is gone.
//
// A pod for which nothing was deduced gets no defaults at all: an empty selector would count every pod of the
// namespace. Deployment pods are grouped per ReplicaSet, i.e. per revision (its selector has pod-template-hash).
// The defaults exist only on the scheduling copies of the pods; they feed the same topology machinery as a
// pod's own constraints (ScheduleAnyway ones are preferences, relaxed as any other under PreferencePolicy).
import type {
  LabelSelector,
  LabelSelectorRequirement,
  Labels,
  Pod,
  SelectorSources,
  TopologySpreadConstraint,
} from '../domain/types.ts';
import { ownerKey } from '../domain/types.ts';

const EMPTY_SOURCES: SelectorSources = { services: [], owners: new Map() };

/** A LabelSelector as requirements: each matchLabels entry an In of one value, then the expressions. */
function requirementsFrom(sel: LabelSelector): LabelSelectorRequirement[] {
  return [
    ...Object.keys(sel.matchLabels ?? {})
      .sort()
      .map((key) => ({ key, operator: 'In' as const, values: [sel.matchLabels![key]!] })),
    ...(sel.matchExpressions ?? []),
  ];
}

const selects = (selector: Labels, labels: Labels): boolean =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

/** What the pod's controller adds: labels (ReplicationController) or expressions (ReplicaSet, StatefulSet). */
function ownerContribution(
  pod: Pod,
  sources: SelectorSources,
): { labels?: Labels; expressions?: LabelSelectorRequirement[] } {
  const o = pod.owner;
  if (!o?.controller) return {};
  const sel = sources.owners.get(ownerKey(o.kind, pod.namespace, o.name));
  if (!sel) return {};
  const gvk = `${o.apiVersion ?? ''}/${o.kind}`;
  if (gvk === 'v1/ReplicationController')
    return sel.matchLabels && Object.keys(sel.matchLabels).length ? { labels: sel.matchLabels } : {};
  if (gvk === 'apps/v1/ReplicaSet' || gvk === 'apps/v1/StatefulSet') return { expressions: requirementsFrom(sel) };
  return {};
}

/** The selector kube-scheduler deduces for the pod's default constraints, or undefined when there is none. */
export function defaultSelector(pod: Pod, sources: SelectorSources): LabelSelector | undefined {
  const matchLabels: Record<string, string> = {};
  for (const svc of sources.services) {
    if (svc.namespace !== pod.namespace || !svc.selector || !selects(svc.selector, pod.labels)) continue;
    Object.assign(matchLabels, svc.selector);
  }
  const owner = ownerContribution(pod, sources);
  if (owner.labels) Object.assign(matchLabels, owner.labels);
  const expressions = owner.expressions ?? [];
  if (!Object.keys(matchLabels).length && !expressions.length) return undefined;
  return {
    ...(Object.keys(matchLabels).length ? { matchLabels } : {}),
    ...(expressions.length ? { matchExpressions: expressions } : {}),
  };
}

/** Pods of one workload share their inputs: namespace, controller and labels. */
function inputsKey(p: Pod): string {
  const o = p.owner?.controller ? `${p.owner.apiVersion ?? ''}/${p.owner.kind}/${p.owner.name}` : '';
  return `${p.namespace}\u0000${o}\u0000${Object.keys(p.labels)
    .sort()
    .map((k) => `${k}=${p.labels[k]}`)
    .join(',')}`;
}

/**
 * The pods with the default constraints given to those that declare none (others unchanged, the same array
 * when nothing changes). Pods of one workload share one constraint list; the data is immutable, so sharing is
 * safe where Karpenter copies per pod.
 */
export function withDefaultSpread(
  pods: readonly Pod[],
  defaults: readonly TopologySpreadConstraint[] | undefined,
  sources: SelectorSources = EMPTY_SOURCES,
): readonly Pod[] {
  if (!defaults?.length) return pods;
  const byInputs = new Map<string, readonly TopologySpreadConstraint[] | null>();
  let changed = false;
  const out = pods.map((p) => {
    if (p.topologySpreadConstraints.length) return p;
    const key = inputsKey(p);
    let constraints = byInputs.get(key);
    if (constraints === undefined) {
      const labelSelector = defaultSelector(p, sources);
      constraints = labelSelector ? Object.freeze(defaults.map((c) => ({ ...c, labelSelector }))) : null;
      byInputs.set(key, constraints);
    }
    if (!constraints) return p;
    changed = true;
    return { ...p, topologySpreadConstraints: constraints };
  });
  return changed ? out : pods;
}
