// metrics.node (Karpenter's node metrics controller): every 5 s, per Node in cluster state, its
// allocatable, system overhead (capacity - allocatable), pod and DaemonSet-pod requests and limits and its
// age, labelled with its well-known labels (karpenter_nodes_*), and the cluster's utilization (pod
// requests over allocatable, in percent). A pass sets every node's series, then removes the series it set last
// time that it did not set again (a deleted node's, or a node's whose labels or resources changed), so a scrape
// never sees a half-empty set. It observes nodes a chunk at a time with a turn of the event loop between chunks:
// at 5,000 nodes and 100,000 pods a pass in one go held the loop for longer than a second.
import { add, isActive, isOwnedByDaemonSet, sum, type Resources } from '../../../../engine/index.ts';
import type { Gauge } from 'prom-client';
import { nodeLabelValues, resourceTypeLabel } from '../../../operator/metriclabels.ts';
import { requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { NodeEntry } from '../../../state/statenode.ts';
import type { ControllerContext } from '../../context.ts';
import { STATE_NODES } from '../../reads.ts';
import { metricValue } from '../resources.ts';

const PERIOD_MS = 5_000;
/** Nodes observed between two turns of the event loop. */
const CHUNK = 200;

const yieldTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

/** A series a pass set: its gauge, labels, and a key that tells it from the node's other series. */
interface Series {
  readonly gauge: Gauge<string>;
  readonly labels: Record<string, string>;
  readonly key: string;
}

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
      const l = ctx.cluster.workloads.pod(pod.namespace, pod.name)?.limits ?? {};
      requests = add(requests, pod.requests);
      limits = add(limits, l);
      if (isOwnedByDaemonSet(pod)) {
        daemonRequests = add(daemonRequests, pod.requests);
        daemonLimits = add(daemonLimits, l);
      }
    }
    return { requests, limits, daemonRequests, daemonLimits };
  }

  function setAll(g: Gauge<string>, base: Record<string, string>, list: Resources, out: Series[]): void {
    for (const [r, v] of Object.entries(list)) {
      const labels = { ...base, resource_type: resourceTypeLabel(r) };
      g.set(labels, metricValue(r, v));
      out.push({ gauge: g, labels, key: `${resourceGauges.indexOf(g)}/${labels.resource_type}` });
    }
  }

  /** The series a node had in the last pass, with the key of the labels they were set under. */
  let last = new Map<string, { readonly base: string; readonly series: readonly Series[] }>();

  function observeNode(n: NodeEntry, now: number, out: Series[]): { allocatable: Resources; requests: Resources } {
    const info = n.info;
    const phase = String((n.obj.status as { phase?: string } | undefined)?.phase ?? '');
    const managed =
      info.nodePoolName !== undefined || ctx.cluster.nodeClaimByProviderID(info.providerId ?? '') !== undefined;
    const base = nodeLabelValues(info.name, info.labels, phase, managed);
    const use = usageOf(info.name);
    const overhead: Record<string, number> = {};
    for (const [r, v] of Object.entries(info.capacity)) overhead[r] = v - (info.allocatable[r] ?? 0);
    setAll(m.nodeAllocatable, base, info.allocatable, out);
    setAll(m.nodeSystemOverhead, base, overhead, out);
    setAll(m.nodePodRequests, base, use.requests, out);
    setAll(m.nodePodLimits, base, use.limits, out);
    setAll(m.nodeDaemonRequests, base, use.daemonRequests, out);
    setAll(m.nodeDaemonLimits, base, use.daemonLimits, out);
    m.nodeCurrentLifetime.set(base, Math.max(0, (now - (info.creationTimestamp ?? now)) / 1000));
    out.push({ gauge: m.nodeCurrentLifetime, labels: base, key: 'lifetime' });
    return { allocatable: info.allocatable, requests: use.requests };
  }

  function observeCluster(totals: Array<{ allocatable: Resources; requests: Resources }>): void {
    const allocatable = sum(totals.map((t) => t.allocatable));
    const requests = sum(totals.map((t) => t.requests));
    for (const [r, v] of Object.entries(allocatable)) {
      if (v > 0) m.clusterUtilization.set({ resource_type: resourceTypeLabel(r) }, (100 * (requests[r] ?? 0)) / v);
    }
  }

  /** Removes the series of the last pass that this pass (`next`) did not set again. */
  function removeStale(next: ReadonlyMap<string, { readonly base: string; readonly series: readonly Series[] }>): void {
    for (const [name, old] of last) {
      const cur = next.get(name);
      const kept = cur?.base === old.base ? new Set(cur.series.map((x) => x.key)) : undefined;
      for (const x of old.series) if (!kept?.has(x.key)) x.gauge.remove(x.labels);
    }
  }

  async function reconcile(): Promise<ReconcileResult> {
    const now = ctx.clock.now();
    const nodes = ctx.cluster.allNodes();
    const next = new Map<string, { base: string; series: Series[] }>();
    const totals: Array<{ allocatable: Resources; requests: Resources }> = [];
    for (let i = 0; i < nodes.length; i++) {
      if (i > 0 && i % CHUNK === 0) await yieldTurn();
      const n = nodes[i]!;
      // Gone during a yield: its series go with the stale ones.
      if (!ctx.cluster.node(n.info.name)) continue;
      const series: Series[] = [];
      totals.push(observeNode(n, now, series));
      next.set(n.info.name, { base: JSON.stringify(series.at(-1)!.labels), series });
    }
    removeStale(next);
    last = next;
    m.clusterUtilization.reset();
    observeCluster(totals);
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
