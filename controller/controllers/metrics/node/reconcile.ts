// metrics.node (Karpenter's node metrics controller): per Node in cluster state, its allocatable, system
// overhead (capacity - allocatable), pod and DaemonSet-pod requests and limits and its age, labelled with its
// well-known labels (karpenter_nodes_*), and the cluster's utilization (pod requests over allocatable, in
// percent). The families are worked out at each scrape from cluster state (DerivedGauge, operator/metrics.ts),
// so a scrape always sees every node as cluster state has it now, a node's series go with the node, and nothing
// is held per node between scrapes but each node's summed pod usage, kept until its pods or its Node change.
// Holding the ~25 series of each node in prom-client (labels object, a ~900-character key each) and this
// controller's copy of them was about 2.5 KB a pod at 20 pods a node (docs/controller-benchmark.md).
import { add, isActive, isOwnedByDaemonSet, sum, type Resources } from '../../../../engine/index.ts';
import { nodeLabelValues, resourceTypeLabel } from '../../../operator/metriclabels.ts';
import type { DerivedSeries } from '../../../operator/metrics.ts';
import { done } from '../../../operator/result.ts';
import type { Controller } from '../../../operator/runtime.ts';
import type { NodeEntry } from '../../../state/statenode.ts';
import type { ControllerContext } from '../../context.ts';
import { STATE_NODES } from '../../reads.ts';
import { metricValue } from '../resources.ts';

interface NodeUse {
  readonly requests: Resources;
  readonly limits: Resources;
  readonly daemonRequests: Resources;
  readonly daemonLimits: Resources;
}

/** A node's summed pod usage, and the version of its pods it was summed from (workloads.podsVersion). */
interface CachedUse {
  readonly podsVersion: number;
  readonly use: NodeUse;
}

/** What one scrape reads of a node: its labels (one object for all its series) and the figures of each family. */
interface NodeView {
  readonly labels: () => Record<string, string>;
  readonly entry: NodeEntry;
  readonly use: NodeUse;
}

type PerResource = (v: NodeView) => Resources;

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

const overheadOf = (n: NodeEntry): Resources => {
  const out: Record<string, number> = {};
  for (const [r, v] of Object.entries(n.info.capacity)) out[r] = v - (n.info.allocatable[r] ?? 0);
  return out;
};

/** The per-resource families: each gauge and what of a node it reports. */
const FAMILIES = [
  ['nodeAllocatable', (v) => v.entry.info.allocatable],
  ['nodeSystemOverhead', (v) => overheadOf(v.entry)],
  ['nodePodRequests', (v) => v.use.requests],
  ['nodePodLimits', (v) => v.use.limits],
  ['nodeDaemonRequests', (v) => v.use.daemonRequests],
  ['nodeDaemonLimits', (v) => v.use.daemonLimits],
] as const satisfies ReadonlyArray<readonly [string, PerResource]>;

export function newNodeMetrics(ctx: ControllerContext): Controller {
  const m = ctx.metrics;
  /** Per node entry (a new one whenever the Node changes, so a gone node's goes with it): its summed usage. */
  const usage = new WeakMap<NodeEntry, CachedUse>();

  function useOf(n: NodeEntry): NodeUse {
    const podsVersion = ctx.cluster.workloads.podsVersion(n.info.name);
    const cached = usage.get(n);
    if (cached?.podsVersion === podsVersion) return cached.use;
    const use = usageOf(ctx, n.info.name);
    usage.set(n, { podsVersion, use });
    return use;
  }

  function labelsOf(n: NodeEntry): Record<string, string> {
    const managed =
      n.info.nodePoolName !== undefined || ctx.cluster.nodeClaimByProviderID(n.info.providerId ?? '') !== undefined;
    const phase = String((n.obj.status as { phase?: string } | undefined)?.phase ?? '');
    return nodeLabelValues(n.info.name, n.info.labels, phase, managed);
  }

  /**
   * The nodes as cluster state holds them while the caller walks them: a scrape turns the event loop between
   * slices, so a node gone meanwhile is skipped and a node changed meanwhile is read as it is now.
   */
  function* views(): Iterable<NodeView> {
    for (const listed of ctx.cluster.allNodes()) {
      const n = ctx.cluster.node(listed.info.name);
      if (!n) continue;
      let labels: Record<string, string> | undefined;
      yield { labels: () => (labels ??= labelsOf(n)), entry: n, use: useOf(n) };
    }
  }

  /** A family's series per node and resource; `undefined` for a node with none in it (a scrape counts it as work). */
  function perResource(pick: PerResource): () => Iterable<DerivedSeries | undefined> {
    return function* () {
      for (const v of views()) {
        const resources = Object.entries(pick(v));
        if (!resources.length) yield undefined;
        for (const [r, value] of resources)
          yield [{ resource_type: resourceTypeLabel(r) }, metricValue(r, value), v.labels()];
      }
    };
  }

  function* ages(): Iterable<DerivedSeries> {
    const now = ctx.clock.now();
    for (const v of views())
      yield [{}, Math.max(0, (now - (v.entry.info.creationTimestamp ?? now)) / 1000), v.labels()];
  }

  /** Pod requests over allocatable, in percent, per resource that some node has allocatable of. */
  function* utilization(): Iterable<DerivedSeries> {
    const nodes = ctx.cluster.allNodes();
    const allocatable = sum(nodes.map((n) => n.info.allocatable));
    const requests = sum(nodes.map((n) => useOf(n).requests));
    for (const [r, v] of Object.entries(allocatable))
      if (v > 0) yield [{ resource_type: resourceTypeLabel(r) }, (100 * (requests[r] ?? 0)) / v];
  }

  function derive(on: boolean): void {
    const none = (): Iterable<DerivedSeries> => [];
    for (const [gauge, pick] of FAMILIES) m[gauge].derive(on ? perResource(pick) : none);
    m.nodeCurrentLifetime.derive(on ? ages : none);
    m.clusterUtilization.derive(on ? utilization : none);
  }

  return {
    name: 'metrics.node',
    reads: STATE_NODES,
    concurrency: 1,
    // Nothing to do between scrapes: the families are read from cluster state when scraped.
    reconcile: async () => done,
    register() {
      derive(true);
      return () => derive(false);
    },
  };
}
