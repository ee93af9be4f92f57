// metrics.node (Karpenter's node metrics controller): every 5 s, per Node in cluster state, its
// allocatable, system overhead (capacity - allocatable), pod and DaemonSet-pod requests and limits and its
// age, labelled with its well-known labels (karpenter_nodes_*), and the cluster's utilization (pod
// requests over allocatable, in percent). Every pass replaces the whole set, so a deleted node's series go.
import { add, isActive, isOwnedByDaemonSet, sum, type Resources } from '../../../../engine/index.ts';
import type { Gauge } from 'prom-client';
import { nodeLabelValues, resourceTypeLabel } from '../../../operator/metriclabels.ts';
import { requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { NodeEntry } from '../../../state/statenode.ts';
import type { ControllerContext } from '../../context.ts';
import { STATE_NODES } from '../../reads.ts';
import { metricValue, podLimits } from '../resources.ts';

const PERIOD_MS = 5_000;

interface NodeUse {
  readonly requests: Resources;
  readonly limits: Resources;
  readonly daemonRequests: Resources;
  readonly daemonLimits: Resources;
}

export function newNodeMetrics(ctx: ControllerContext): Controller {
  const m = ctx.metrics;
  const resourceGauges = [
    m.nodeAllocatable,
    m.nodeSystemOverhead,
    m.nodePodRequests,
    m.nodePodLimits,
    m.nodeDaemonRequests,
    m.nodeDaemonLimits,
  ];

  function usageOf(nodeName: string): NodeUse {
    let requests: Resources = {},
      limits: Resources = {},
      daemonRequests: Resources = {},
      daemonLimits: Resources = {};
    for (const pod of ctx.cluster.workloads.podsOn(nodeName)) {
      if (!isActive(pod)) continue;
      const obj = ctx.cluster.workloads.pod(pod.namespace, pod.name)?.obj;
      const l = obj ? podLimits(obj) : {};
      requests = add(requests, pod.requests);
      limits = add(limits, l);
      if (isOwnedByDaemonSet(pod)) {
        daemonRequests = add(daemonRequests, pod.requests);
        daemonLimits = add(daemonLimits, l);
      }
    }
    return { requests, limits, daemonRequests, daemonLimits };
  }

  function setAll(g: Gauge<string>, base: Record<string, string>, list: Resources): void {
    for (const [r, v] of Object.entries(list))
      g.set({ ...base, resource_type: resourceTypeLabel(r) }, metricValue(r, v));
  }

  function observeNode(n: NodeEntry, now: number): { allocatable: Resources; requests: Resources } {
    const info = n.info;
    const phase = String((n.obj.status as { phase?: string } | undefined)?.phase ?? '');
    const managed =
      info.nodePoolName !== undefined || ctx.cluster.nodeClaimByProviderID(info.providerId ?? '') !== undefined;
    const base = nodeLabelValues(info.name, info.labels, phase, managed);
    const use = usageOf(info.name);
    const overhead: Record<string, number> = {};
    for (const [r, v] of Object.entries(info.capacity)) overhead[r] = v - (info.allocatable[r] ?? 0);
    setAll(m.nodeAllocatable, base, info.allocatable);
    setAll(m.nodeSystemOverhead, base, overhead);
    setAll(m.nodePodRequests, base, use.requests);
    setAll(m.nodePodLimits, base, use.limits);
    setAll(m.nodeDaemonRequests, base, use.daemonRequests);
    setAll(m.nodeDaemonLimits, base, use.daemonLimits);
    m.nodeCurrentLifetime.set(base, Math.max(0, (now - (info.creationTimestamp ?? now)) / 1000));
    return { allocatable: info.allocatable, requests: use.requests };
  }

  function observeCluster(totals: Array<{ allocatable: Resources; requests: Resources }>): void {
    const allocatable = sum(totals.map((t) => t.allocatable));
    const requests = sum(totals.map((t) => t.requests));
    for (const [r, v] of Object.entries(allocatable)) {
      if (v > 0) m.clusterUtilization.set({ resource_type: resourceTypeLabel(r) }, (100 * (requests[r] ?? 0)) / v);
    }
  }

  async function reconcile(): Promise<ReconcileResult> {
    const now = ctx.clock.now();
    for (const g of [...resourceGauges, m.nodeCurrentLifetime, m.clusterUtilization]) g.reset();
    observeCluster(ctx.cluster.allNodes().map((n) => observeNode(n, now)));
    return requeueAfter(PERIOD_MS);
  }

  return {
    name: 'metrics.node',
    reads: STATE_NODES,
    concurrency: 1,
    reconcile,
    register(enqueue) {
      enqueue('');
      return () => {};
    },
  };
}
