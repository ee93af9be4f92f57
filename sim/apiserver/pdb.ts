// PodDisruptionBudget arithmetic, as kube-controller-manager's disruption controller computes status
// (pkg/controller/disruption/disruption.go) and the eviction subresource reads it:
//
//   expectedPods   minAvailable as an integer: the number of matching pods; otherwise the sum of the
//                  replicas of the matching pods' controllers (a Deployment through its ReplicaSet, a
//                  ReplicaSet, a StatefulSet). A matching pod without such a controller makes the
//                  budget fail safe: 0 disruptions allowed, as upstream does.
//   desiredHealthy minAvailable (percentages of expectedPods round up), or expectedPods - maxUnavailable
//                  (maxUnavailable percentages round up too).
//   currentHealthy matching pods that are Ready, not being deleted, and not evicted in the last 2 minutes
//                  (status.disruptedPods).
//   disruptionsAllowed = max(0, currentHealthy - desiredHealthy).
import { toKubeTime } from '../../controller/operator/clock.ts';
import { matchesLabelSelector, type LabelSelectorObject } from './selectors.ts';
import type { Store } from './store.ts';
import type { KObject } from './types.ts';

interface PdbStatus {
  observedGeneration: number;
  currentHealthy: number;
  desiredHealthy: number;
  disruptionsAllowed: number;
  expectedPods: number;
  disruptedPods?: Record<string, string>;
  conditions?: Array<Record<string, unknown>>;
}

interface PdbSpec {
  selector?: LabelSelectorObject | null;
  minAvailable?: number | string;
  maxUnavailable?: number | string;
  unhealthyPodEvictionPolicy?: 'IfHealthyBudget' | 'AlwaysAllow';
}

/** How long an evicted pod stays out of currentHealthy if it is not deleted (DeletionTimeout upstream). */
export const DISRUPTED_POD_TIMEOUT_MS = 2 * 60 * 1000;

export const pdbSpec = (pdb: KObject): PdbSpec => (pdb.spec ?? {}) as PdbSpec;

export function isPodReady(pod: KObject): boolean {
  const conditions =
    (pod.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? [];
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Pods in the budget's namespace that its selector matches (in policy/v1 an empty selector matches all). */
function podsOf(store: Store, pdb: KObject): KObject[] {
  const sel = pdbSpec(pdb).selector;
  return store
    .list('pods', { namespace: pdb.metadata.namespace ?? '' })
    .filter((p) => matchesLabelSelector(sel, p.metadata.labels));
}

/** Budgets whose selector matches the pod. */
export function budgetsFor(store: Store, pod: KObject): KObject[] {
  return store
    .list('poddisruptionbudgets.policy', { namespace: pod.metadata.namespace ?? '' })
    .filter((b) => matchesLabelSelector(pdbSpec(b).selector, pod.metadata.labels));
}

/** intstr.GetScaledValueFromIntOrPercent with roundUp = true. */
function scaled(v: number | string, total: number): number {
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v);
  if (m) return Math.ceil((Number(m[1]) * total) / 100);
  const n = Number(v);
  return Number.isInteger(n) ? n : 0;
}

/** The replicas of the pod's controller, or undefined when it has none the disruption controller knows. */
function controllerScale(store: Store, pod: KObject): { uid: string; replicas: number } | undefined {
  const ref = pod.metadata.ownerReferences?.find((o) => o.controller);
  if (!ref) return undefined;
  const owner = store.getByUid(ref.uid);
  if (!owner) return undefined;
  const replicasOf = (o: KObject): number => (o.spec as { replicas?: number } | undefined)?.replicas ?? 1;
  if (owner.resource === 'replicasets.apps') {
    const dref = owner.object.metadata.ownerReferences?.find((o) => o.controller && o.kind === 'Deployment');
    const dep = dref && store.getByUid(dref.uid);
    if (dep) return { uid: dref.uid, replicas: replicasOf(dep.object) };
    return { uid: ref.uid, replicas: replicasOf(owner.object) };
  }
  if (owner.resource === 'statefulsets.apps' || owner.resource === 'deployments.apps')
    return { uid: ref.uid, replicas: replicasOf(owner.object) };
  return undefined;
}

/** The status the disruption controller would write for this budget now. */
export function computePdbStatus(store: Store, pdb: KObject, now: number): PdbStatus {
  const spec = pdbSpec(pdb);
  const pods = podsOf(store, pdb);
  const prior = (pdb.status as { disruptedPods?: Record<string, string> } | undefined)?.disruptedPods ?? {};
  const disrupted: Record<string, string> = {};
  for (const [name, at] of Object.entries(prior)) {
    const pod = pods.find((p) => p.metadata.name === name);
    if (pod && !pod.metadata.deletionTimestamp && Date.parse(at) + DISRUPTED_POD_TIMEOUT_MS > now) disrupted[name] = at;
  }
  const currentHealthy = pods.filter(
    (p) => !p.metadata.deletionTimestamp && !(p.metadata.name! in disrupted) && isPodReady(p),
  ).length;
  let expectedPods = pods.length;
  let desiredHealthy = 0;
  let failSafe = false;
  if (spec.maxUnavailable !== undefined || typeof spec.minAvailable === 'string') {
    const controllers = new Map<string, number>();
    for (const p of pods) {
      const c = controllerScale(store, p);
      if (!c) failSafe = true;
      else controllers.set(c.uid, c.replicas);
    }
    expectedPods = [...controllers.values()].reduce((a, b) => a + b, 0);
    desiredHealthy =
      spec.maxUnavailable !== undefined
        ? Math.max(0, expectedPods - scaled(spec.maxUnavailable, expectedPods))
        : scaled(spec.minAvailable!, expectedPods);
  } else if (spec.minAvailable !== undefined) {
    desiredHealthy = spec.minAvailable;
  }
  const disruptionsAllowed = failSafe ? 0 : Math.max(0, currentHealthy - desiredHealthy);
  const status: PdbStatus = {
    observedGeneration: pdb.metadata.generation ?? 1,
    currentHealthy,
    desiredHealthy,
    disruptionsAllowed,
    expectedPods,
  };
  if (Object.keys(disrupted).length) status.disruptedPods = disrupted;
  const allowed = disruptionsAllowed > 0;
  const prevCond = ((pdb.status as { conditions?: Array<Record<string, unknown>> } | undefined)?.conditions ?? []).find(
    (c) => c.type === 'DisruptionAllowed',
  );
  const condStatus = allowed ? 'True' : 'False';
  status.conditions = [
    {
      type: 'DisruptionAllowed',
      status: condStatus,
      reason: failSafe ? 'SyncFailed' : allowed ? 'SufficientPods' : 'InsufficientPods',
      message: '',
      observedGeneration: status.observedGeneration,
      lastTransitionTime: prevCond && prevCond.status === condStatus ? prevCond.lastTransitionTime : toKubeTime(now),
    },
  ];
  return status;
}
