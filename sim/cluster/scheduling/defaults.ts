// The simulated kube-scheduler's PodTopologySpread defaultConstraints: a pod that declares no spread
// constraints is scheduled as if it had the configured ones, each with the selector kube-scheduler deduces
// from the Services selecting the pod and its ReplicaSet, StatefulSet or ReplicationController (the engine's
// deduction, so the simulated scheduler and the controller agree as a real cluster's would when both are
// configured alike). Only DoNotSchedule constraints filter nodes here; ScheduleAnyway is a score the simulated
// scheduler does not compute.
import {
  defaultSelector,
  ownerKey,
  parseServiceSelector,
  parseWorkloadSelector,
  type LabelSelector,
  type OwnerRef,
  type Pod,
  type SelectorSources,
  type TopologySpreadConstraint,
} from '../../../engine/index.ts';
import type { KObject, Store } from '../../apiserver/index.ts';
import { podSpec } from './nodes.ts';

function sourcesOf(store: Store): SelectorSources {
  const services = store.list('services').flatMap((o) => {
    const r = parseServiceSelector(o);
    return r.ok ? [r.value] : [];
  });
  const owners = new Map<string, LabelSelector>();
  for (const [resource, kind] of [
    ['replicasets.apps', 'ReplicaSet'],
    ['statefulsets.apps', 'StatefulSet'],
    ['replicationcontrollers', 'ReplicationController'],
  ] as const) {
    for (const o of store.list(resource)) {
      const r = parseWorkloadSelector(o, kind);
      if (r.ok) owners.set(ownerKey(kind, r.value.namespace, r.value.name), r.value.selector);
    }
  }
  return { services, owners };
}

/** What the deduction reads of a pod object. */
function podView(p: KObject): Pod {
  const controller = p.metadata.ownerReferences?.find((o) => o.controller);
  const owner: OwnerRef | undefined = controller
    ? {
        kind: controller.kind,
        name: controller.name,
        uid: controller.uid,
        apiVersion: controller.apiVersion,
        controller: true,
      }
    : undefined;
  return {
    namespace: p.metadata.namespace ?? 'default',
    labels: p.metadata.labels ?? {},
    ...(owner ? { owner } : {}),
  } as Pod;
}

/** The pods, those without spread constraints given the defaults (as copies); the same array without defaults. */
export function withDefaultConstraints(
  pods: KObject[],
  defaults: readonly TopologySpreadConstraint[],
  store: Store,
): KObject[] {
  if (!defaults.length || pods.every((p) => (podSpec(p).topologySpreadConstraints ?? []).length)) return pods;
  const sources = sourcesOf(store);
  return pods.map((p) => {
    if ((podSpec(p).topologySpreadConstraints ?? []).length) return p;
    const labelSelector = defaultSelector(podView(p), sources);
    if (!labelSelector) return p;
    const topologySpreadConstraints = defaults.map((c) => ({ ...c, labelSelector }));
    return { ...p, spec: { ...(p.spec as object), topologySpreadConstraints } } as KObject;
  });
}
