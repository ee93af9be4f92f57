// metrics.pod (Karpenter's pod metrics controller): one karpenter_pods_state series per pod, labelled with
// its phase, readiness and where it runs (node, NodePool, zone, arch, capacity type, instance type), and the
// pod timing metrics: seconds unbound and unstarted since creation (gauges, per pending pod), the time
// from creation to bound and to running (observed once per pod), and the same measured from the
// provisioner's first decision for the pod (karpenter_pods_provisioning_*), with the wait for that decision.
// The pods still waiting are looked at again every 15 s, so their gauges move: one sweep over them all, a chunk
// of pods per turn of the event loop. (Until 2026-12-03 each waiting pod requeued itself after 15 s: with 10,000
// pods pending, 10,000 timers fired in one turn and queued 10,000 reconciles.) karpenter_pods_state is worked out
// at each scrape from cluster state, for the pods this controller has seen (a DerivedGauge): holding its
// 13 labels and prom-client's key for every pod between scrapes cost about 0.5 KiB a pod. What this controller
// remembers of a pod (seen, its bound and started times observed) are fields of the pod's record in cluster
// state, carried over while the pod (uid) stays: a map of its own by `namespace/name` cost a key string and a
// small object a pod.
import type { Pod } from '../../../../engine/index.ts';
import { findCondition, transitionTime } from '../../../operator/conditions.ts';
import type { KubeObject } from '../../../operator/kube.ts';
import type { PodRecord } from '../../../state/podrecord.ts';
import { forEachInChunks } from '../../../operator/chunks.ts';
import { done, requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { Metrics } from '../../../operator/metrics.ts';
import type { ControllerContext } from '../../context.ts';
import { STATE_NODES } from '../../reads.ts';

const WAITING_REFRESH_MS = 15_000;
/** The queue key of the sweep over the waiting pods: a pod's key is always `namespace/name`, this has no slash. */
export const REFRESH_KEY = 'refresh-waiting';
/** Waiting pods the sweep refreshes in one turn of the event loop (a pod is ten gauge writes at most). */
const REFRESH_CHUNK = 100;
type Labels = Record<string, string>;

/** karpenter_pods_state's labels for a pod: who and where it is, and where it runs (its node's labels). */
function stateLabels(ctx: ControllerContext, obj: KubeObject, pod: Pod): Labels {
  const nodeLabels = pod.nodeName ? (ctx.cluster.node(pod.nodeName)?.info.labels ?? {}) : {};
  const owner = obj.metadata.ownerReferences?.find((o) => o.controller) ?? obj.metadata.ownerReferences?.[0];
  return {
    name: pod.name,
    namespace: pod.namespace,
    owner: owner ? `${owner.kind}/${owner.name}` : '',
    node: pod.nodeName ?? '',
    scheduled: findCondition(obj, 'PodScheduled')?.status ?? '',
    nodepool: nodeLabels['karpenter.sh/nodepool'] ?? '',
    zone: nodeLabels['topology.kubernetes.io/zone'] ?? '',
    arch: nodeLabels['kubernetes.io/arch'] ?? '',
    capacity_type: nodeLabels['karpenter.sh/capacity-type'] ?? '',
    instance_type: nodeLabels['node.kubernetes.io/instance-type'] ?? '',
    phase: pod.phase,
    ready: findCondition(obj, 'Ready')?.status ?? '',
    managed: String(nodeLabels['karpenter.sh/nodepool'] !== undefined),
  };
}

/** Removes the pod name's waiting gauges. */
function clearWaiting(m: Metrics, ident: Labels): void {
  for (const g of [
    m.podUnboundTime,
    m.podUnstartedTime,
    m.podProvisioningUnboundTime,
    m.podProvisioningUnstartedTime,
    m.podSchedulingUndecidedTime,
  ])
    g.remove(ident);
}

const isRunning = (pod: Pod): boolean => pod.phase === 'Running' || pod.phase === 'Succeeded';

/** Observes, once each (`rec` remembers), the time to bound and to running, from creation and from the decision. */
function observeDurations(m: Metrics, rec: PodRecord, pod: Pod, now: number): void {
  const created = pod.creationTimestamp;
  const decided = rec.decidedAt;
  if (pod.nodeName !== undefined && !rec.boundObserved) {
    rec.boundObserved = true;
    const at = transitionTime(findCondition(rec, 'PodScheduled')) ?? now;
    m.podBoundDuration.observe(Math.max(0, (at - created) / 1000));
    if (decided !== undefined) m.podProvisioningBoundDuration.observe(Math.max(0, (at - decided) / 1000));
  }
  if (isRunning(pod) && !rec.startedObserved) {
    rec.startedObserved = true;
    const at = transitionTime(findCondition(rec, 'Ready')) ?? now;
    m.podStartupDuration.observe(Math.max(0, (at - created) / 1000));
    if (decided !== undefined) m.podProvisioningStartupDuration.observe(Math.max(0, (at - decided) / 1000));
  }
}

/** Sets a waiting pod's gauges: seconds unbound and unstarted since creation and since the decision, or undecided. */
function setWaiting(m: Metrics, rec: PodRecord, pod: Pod, now: number): void {
  const ident = { name: pod.name, namespace: pod.namespace };
  const created = pod.creationTimestamp;
  const bound = pod.nodeName !== undefined;
  const decided = rec.decidedAt;
  if (!bound) m.podUnboundTime.set(ident, (now - created) / 1000);
  m.podUnstartedTime.set(ident, (now - created) / 1000);
  if (decided === undefined && rec.seenAt !== undefined)
    m.podSchedulingUndecidedTime.set(ident, (now - rec.seenAt) / 1000);
  if (decided !== undefined) {
    if (!bound) m.podProvisioningUnboundTime.set(ident, (now - decided) / 1000);
    m.podProvisioningUnstartedTime.set(ident, (now - decided) / 1000);
  }
}

/** Observes the pod's timings (`rec` remembers which were observed); true while it still waits (not yet running). */
function timings(m: Metrics, rec: PodRecord, pod: Pod, now: number): boolean {
  observeDurations(m, rec, pod, now);
  clearWaiting(m, { name: pod.name, namespace: pod.namespace });
  if (isRunning(pod) || pod.deletionTimestamp !== undefined) return false;
  setWaiting(m, rec, pod, now);
  return true;
}

export function newPodMetrics(ctx: ControllerContext): Controller {
  const m = ctx.metrics;
  /** Keys of the pods whose waiting gauges are set: what the next sweep refreshes. */
  const waiting = new Set<string>();

  /** Looks at the pod now: observes its timings and (re)sets or clears its waiting gauges. */
  function refresh(key: string): void {
    const [namespace = '', name = ''] = key.split('/');
    const entry = ctx.cluster.workloads.pod(namespace, name);
    if (!entry) {
      // Gone: its times and marks went with its record.
      clearWaiting(m, { name, namespace });
      waiting.delete(key);
      return;
    }
    // timings() clears the waiting gauges of the name first: a new pod of a deleted one's name starts afresh.
    entry.metricsSeen = true;
    if (timings(m, entry, entry.pod, ctx.clock.now())) waiting.add(key);
    else waiting.delete(key);
  }

  /** Every waiting pod looked at again, REFRESH_CHUNK a turn; the pods that started or went drop out. */
  async function sweep(): Promise<ReconcileResult> {
    await forEachInChunks([...waiting], REFRESH_CHUNK, refresh);
    return requeueAfter(WAITING_REFRESH_MS);
  }

  async function reconcile(key: string): Promise<ReconcileResult> {
    if (key === REFRESH_KEY) return sweep();
    refresh(key);
    return done;
  }

  /** karpenter_pods_state now: a series for each pod seen here that cluster state still holds. */
  function* states(): Iterable<readonly [Labels, number]> {
    for (const rec of ctx.cluster.workloads.podRecords())
      if (rec.metricsSeen) yield [stateLabels(ctx, rec, rec.pod), 1];
  }

  return {
    name: 'metrics.pod',
    reads: STATE_NODES,
    reconcile,
    register(enqueue, enqueueAfter) {
      m.podsState.derive(states);
      for (const p of ctx.cluster.workloads.allPods()) enqueue(`${p.namespace}/${p.name}`);
      enqueueAfter(REFRESH_KEY, WAITING_REFRESH_MS);
      return ctx.cluster.subscribe((c) => {
        if (c.kind === 'Pod') enqueue(`${c.namespace ?? 'default'}/${c.name}`);
      });
    },
  };
}
