// metrics.node (Karpenter's node metrics controller): every 5 s, per Node in cluster state, its
// allocatable, system overhead (capacity - allocatable), pod and DaemonSet-pod requests and limits and its
// age, labelled with its well-known labels (karpenter_nodes_*), and the cluster's utilization (pod
// requests over allocatable, in percent). A pass works out again only the nodes whose Node, pods or
// NodeClaim moved since the last pass: it sets their series, then removes the ones it set last time that it
// did not set again (labels or resources changed), so a scrape never sees a half-empty node; a deleted node's
// series go at the end of the pass. Every series carries some 40 labels and prom-client hashes them on every
// set: setting all ~25 series of all 5,000 nodes every pass was 15% of the controller's CPU in the controller
// benchmark, for values that had mostly not changed. It walks nodes a chunk at a time with a turn of the event
// loop between chunks.
import { add, isActive, isOwnedByDaemonSet, sum, type Resources } from '../../../../engine/index.ts';
import { nodeLabelValues, resourceTypeLabel } from '../../../operator/metriclabels.ts';
import { requeueAfter, type ReconcileResult } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { NodeEntry } from '../../../state/statenode.ts';
import type { Metrics } from '../../../operator/metrics.ts';
import type { ControllerContext } from '../../context.ts';
import { STATE_NODES } from '../../reads.ts';
import { metricValue } from '../resources.ts';

const PERIOD_MS = 5_000;
/** Nodes observed between two turns of the event loop. */
const CHUNK = 100;

const yieldTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

/** A series a pass set: its gauge, labels, and a key that tells it from the node's other series. */
interface Series {
  readonly gauge: NodeGauge;
  readonly labels: Record<string, string>;
  readonly key: string;
}

/** A node's series as a pass set them, and the inputs they were worked out from. */
interface Observed {
  readonly entry: NodeEntry;
  readonly podsVersion: number;
  readonly managed: boolean;
  /** The node's labels (every series has them; its age's series has only them). */
  readonly base: Record<string, string>;
  readonly baseKey: string;
  readonly series: readonly Series[];
  readonly allocatable: Resources;
  readonly requests: Resources;
}

interface NodeUse {
  readonly requests: Resources;
  readonly limits: Resources;
  readonly daemonRequests: Resources;
  readonly daemonLimits: Resources;
}

type NodeGauge = Metrics['nodeAllocatable'];

function usageOf(ctx: ControllerContext, nodeName: string): NodeUse {
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

/** Sets one series of `g` per resource of `list`, noting each in `out` under `tag`/resource. */
function setAll(g: NodeGauge, tag: string, base: Record<string, string>, list: Resources, out: Series[]): void {
  for (const [r, v] of Object.entries(list)) {
    const labels = { ...base, resource_type: resourceTypeLabel(r) };
    g.set(labels, metricValue(r, v));
    out.push({ gauge: g, labels, key: `${tag}/${labels.resource_type}` });
  }
}

/** Removes the series of `prev` that `next` did not set again under the same labels (its age's too, if moved). */
function removeReplaced(m: Metrics, prev: Observed, next: Observed): void {
  const sameBase = prev.baseKey === next.baseKey;
  const kept = sameBase ? new Set(next.series.map((x) => x.key)) : undefined;
  for (const x of prev.series) if (!kept?.has(x.key)) x.gauge.remove(x.labels);
  if (!sameBase) m.nodeCurrentLifetime.remove(prev.base);
}

/** Removes every series of a node that is gone. */
function removeAll(m: Metrics, prev: Observed): void {
  for (const x of prev.series) x.gauge.remove(x.labels);
  m.nodeCurrentLifetime.remove(prev.base);
}

function observeCluster(m: Metrics, observed: Iterable<Observed>): void {
  const all = [...observed];
  const allocatable = sum(all.map((t) => t.allocatable));
  const requests = sum(all.map((t) => t.requests));
  m.clusterUtilization.reset();
  for (const [r, v] of Object.entries(allocatable)) {
    if (v > 0) m.clusterUtilization.set({ resource_type: resourceTypeLabel(r) }, (100 * (requests[r] ?? 0)) / v);
  }
}

/** Sets a node's series (not its age) from scratch, then removes those of `prev` that it did not set again. */
function observeNode(
  ctx: ControllerContext,
  n: NodeEntry,
  inputs: { podsVersion: number; managed: boolean },
  prev: Observed | undefined,
): Observed {
  const m = ctx.metrics;
  const info = n.info;
  const phase = String((n.obj.status as { phase?: string } | undefined)?.phase ?? '');
  const base = nodeLabelValues(info.name, info.labels, phase, inputs.managed);
  const use = usageOf(ctx, info.name);
  const overhead: Record<string, number> = {};
  for (const [r, v] of Object.entries(info.capacity)) overhead[r] = v - (info.allocatable[r] ?? 0);
  const series: Series[] = [];
  setAll(m.nodeAllocatable, 'allocatable', base, info.allocatable, series);
  setAll(m.nodeSystemOverhead, 'overhead', base, overhead, series);
  setAll(m.nodePodRequests, 'requests', base, use.requests, series);
  setAll(m.nodePodLimits, 'limits', base, use.limits, series);
  setAll(m.nodeDaemonRequests, 'daemonRequests', base, use.daemonRequests, series);
  setAll(m.nodeDaemonLimits, 'daemonLimits', base, use.daemonLimits, series);
  const next: Observed = {
    entry: n,
    ...inputs,
    base,
    baseKey: JSON.stringify(base),
    series,
    allocatable: info.allocatable,
    requests: use.requests,
  };
  if (prev) removeReplaced(m, prev, next);
  return next;
}

export function newNodeMetrics(ctx: ControllerContext): Controller {
  const m = ctx.metrics;
  /**
   * What the last pass set for each node, and the inputs it was worked out from: the node's entry (a new object
   * whenever the Node changes), the version of its pods (workloads.podsVersion: moves whenever a pod on it is
   * added, changed or removed) and whether a NodeClaim manages it. A node whose inputs did not move keeps its
   * series as they are (prom-client keeps a value until it is set again or removed); only its age is set again.
   */
  let last = new Map<string, Observed>();

  async function reconcile(): Promise<ReconcileResult> {
    const now = ctx.clock.now();
    const nodes = ctx.cluster.allNodes();
    const next = new Map<string, Observed>();
    for (let i = 0; i < nodes.length; i++) {
      if (i > 0 && i % CHUNK === 0) await yieldTurn();
      const n = nodes[i]!;
      const name = n.info.name;
      // Gone during a yield: its series go with the other gone nodes'.
      if (!ctx.cluster.node(name)) continue;
      const prev = last.get(name);
      const podsVersion = ctx.cluster.workloads.podsVersion(name);
      const managed =
        n.info.nodePoolName !== undefined || ctx.cluster.nodeClaimByProviderID(n.info.providerId ?? '') !== undefined;
      const unchanged = prev?.entry === n && prev.podsVersion === podsVersion && prev.managed === managed;
      const o = unchanged ? prev : observeNode(ctx, n, { podsVersion, managed }, prev);
      m.nodeCurrentLifetime.set(o.base, Math.max(0, (now - (n.info.creationTimestamp ?? now)) / 1000));
      next.set(name, o);
    }
    for (const [name, prev] of last) if (!next.has(name)) removeAll(m, prev);
    last = next;
    observeCluster(m, next.values());
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
