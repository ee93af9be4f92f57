// Prometheus metrics with Karpenter's names, types and labels (every family of its v1.14.1 metrics
// reference; docs/controller.md lists them with the few that do not apply), so its Grafana dashboards and
// alerts work unchanged. One Registry per operator (not prom-client's global one), so tests and the
// simulator can run several operators in one process.
import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  Summary,
  type Metric,
  type MetricObject,
  type MetricObjectWithValues,
  type MetricValue,
} from 'prom-client';
import { nextTurn } from './chunks.ts';
import type { EventLoopLag } from './eventloop.ts';
import {
  DEFAULT_BUCKETS,
  DURATION_BUCKETS,
  exponentialBuckets,
  NODE_LABEL_NAMES,
  NODE_RESOURCE_LABEL_NAMES,
  objectLabelName,
  RECONCILE_BUCKETS,
  STATUS_KINDS,
  SUMMARY_PERCENTILES,
  type StatusKind,
} from './metriclabels.ts';
import { PodTimes } from './podtimes.ts';

const LONG_BUCKETS = [1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400, 604800];
const POD_LABELS = ['name', 'namespace'] as const;
const QUEUE_LABELS = ['name', 'controller'] as const;
const AWS_SDK_LABELS = ['service', 'action', 'code'] as const;

type LabelSet<L extends string> = Partial<Record<L, string>>;

/**
 * One series of a DerivedGauge: its labels and value, and optionally labels it shares with the series around it
 * (a node's ~40 labels, the same object for all its series): those come first, and the exposition formats them
 * once for the run of series that share them.
 */
export type DerivedSeries<L extends string = string> = readonly [
  labels: LabelSet<L>,
  value: number,
  shared?: LabelSet<L>,
];

/**
 * Work between two turns of the event loop while a scrape writes a derived family, counted in labels formatted
 * (and one per item of the source): about 90 nodes' series, or 300 pods', a slice.
 */
const SCRAPE_SLICE = 4_000;

/** Escapes as the Prometheus text format (and prom-client) does: `\` and newline; in label values `"` too. */
const escapeText = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const escapeLabelValue = (s: string): string => (/[\\\n"]/.test(s) ? escapeText(s).replace(/"/g, '\\"') : s);
/** `k="v"` pairs in the order of `labels`, leaving out the names `skip` has. */
function formatLabels(
  labels: Readonly<Record<string, string | number | undefined>>,
  skip?: Readonly<Record<string, unknown>>,
): string {
  let out = '';
  for (const k in labels) {
    if (skip && Object.hasOwn(skip, k)) continue;
    const v = labels[k];
    out += `${out ? ',' : ''}${k}="${typeof v === 'string' ? escapeLabelValue(v) : v}"`;
  }
  return out;
}
/** A sample value as prom-client writes it. */
const valueText = (v: number): string =>
  Number.isNaN(v) ? 'Nan' : Number.isFinite(v) ? `${v}` : v < 0 ? '-Inf' : '+Inf';
/** One sample's line: its name, the two parts of its formatted labels (either may be empty) and its value. */
function sampleLine(name: string, first: string, second: string, value: number): string {
  const all = first && second ? `${first},${second}` : first || second;
  return `${name}${all ? `{${all}}` : ''} ${valueText(value)}`;
}
const labelCount = (labels: object): number => {
  let n = 0;
  for (const _ in labels) n++;
  return n;
};

/** A sample line to write (undefined for an item of a source with no series here), and the work it took. */
type Written = readonly [line: string | undefined, work: number];

/**
 * A family's exposition in pieces: its header, then its lines, cut after about SCRAPE_SLICE of work, with a turn
 * of the event loop after each piece, so that a scrape of a large family never holds the loop for all of it.
 */
async function* inSlices(header: string, written: Iterable<Written>): AsyncGenerator<string> {
  yield header;
  let slice: string[] = [];
  let work = 0;
  for (const [line, cost] of written) {
    if (line !== undefined) slice.push(line);
    work += cost;
    if (work < SCRAPE_SLICE) continue;
    if (slice.length) yield `\n${slice.join('\n')}`;
    slice = [];
    work = 0;
    await nextTurn();
  }
  if (slice.length) yield `\n${slice.join('\n')}`;
}

/**
 * A gauge whose series are worked out when it is read (a scrape, or a test reading it) from a source, instead
 * of being held between scrapes: for per-object families (one series per pod, ~25 per node) whose labels are all
 * in cluster state anyway, so holding a labels object and prom-client's hash key for each would be a second copy
 * of that state. A scrape writes the family a slice of series at a time with a turn of the event loop between
 * slices (`lines`), in prom-client's text format. set/inc/remove are not for it: the source is the only truth.
 */
class DerivedGauge<L extends string> extends Gauge<L> {
  private source: () => Iterable<DerivedSeries<L> | undefined> = () => [];

  /**
   * Where the series come from, read at every get() and every scrape. A source that walks objects some of which
   * have no series in this family yields `undefined` for those, so that a scrape counts them as work.
   */
  derive(source: () => Iterable<DerivedSeries<L> | undefined>): void {
    this.source = source;
  }

  override async get(): Promise<Awaited<ReturnType<Gauge<L>['get']>>> {
    const values: Array<MetricValue<L>> = [];
    for (const s of this.source()) {
      if (!s) continue;
      const [labels, value, shared] = s;
      values.push({ labels: shared ? { ...shared, ...labels } : labels, value });
    }
    // The family's name, help, type and aggregator as prom-client's Gauge keeps them (set by its constructor).
    const { help, name, type, aggregator, collect } = this.family();
    return { help, name, type, aggregator, collect, values };
  }

  /** The family's exposition, as prom-client's Registry writes a gauge, in pieces: its header, then slices of series. */
  lines(): AsyncGenerator<string> {
    const { name, help } = this.family();
    return inSlices(
      `# HELP ${escapeText(name)} ${escapeText(help)}\n# TYPE ${escapeText(name)} gauge`,
      this.written(name),
    );
  }

  /** Each item of the source as its line: labels it shares with the items before it are formatted once. */
  private *written(name: string): Generator<Written> {
    let shared: LabelSet<L> | undefined;
    let prefix = '';
    for (const s of this.source()) {
      if (!s) {
        yield [undefined, 1];
        continue;
      }
      const [labels, value, sharedNow] = s;
      let work = 1 + labelCount(labels);
      if (sharedNow !== shared) {
        shared = sharedNow;
        prefix = shared ? formatLabels(shared) : '';
        work += shared ? labelCount(shared) : 0;
      }
      yield [sampleLine(name, prefix, formatLabels(labels), value), work];
    }
  }

  private family(): Omit<Awaited<ReturnType<Gauge<L>['get']>>, 'values'> {
    return this as unknown as Omit<Awaited<ReturnType<Gauge<L>['get']>>, 'values'>;
  }
}

/** A series as prom-client hands it to its Registry: histograms' buckets carry the series' labels as `sharedLabels`. */
type PromValue = MetricValue<string> & { metricName?: string; sharedLabels?: Record<string, string | number> };

/** One series' line as prom-client's Registry writes it (Prometheus text format; no default labels are set):
 * its own labels, then the shared ones. */
function promLine(name: string, v: PromValue): string {
  const shared = v.sharedLabels ?? {};
  return sampleLine(v.metricName ?? name, formatLabels(v.labels ?? {}, shared), formatLabels(shared), v.value);
}

/**
 * A family prom-client holds (counter, gauge, histogram, summary), written as its Registry writes it, in pieces:
 * its series are read in one go (prom-client's get), then formatted a slice at a time (SCRAPE_SLICE labels) with a
 * turn of the event loop between slices. The per-pod waiting gauges hold a series per pending pod and the offering
 * gauges one per instance type, capacity type and zone: thousands of lines that the Registry formatted in one turn.
 */
async function* promFamilyLines(metric: MetricObject): AsyncGenerator<string> {
  const m = metric as unknown as Metric & {
    getForPromString?: () => Promise<MetricObjectWithValues<MetricValue<string>>>;
  };
  const data = m.getForPromString ? await m.getForPromString() : await m.get();
  const name = escapeText(data.name);
  yield* inSlices(`# HELP ${name} ${escapeText(data.help)}\n# TYPE ${name} ${data.type}`, promLines(name, data.values));
}

/** The series' lines, each formatted when the scrape reaches it (not all before the first turn). */
function* promLines(name: string, values: readonly MetricValue<string>[] | undefined): Generator<Written> {
  for (const v of (values ?? []) as PromValue[]) yield [promLine(name, v), 1 + labelCount(v.labels ?? {})];
}

/** operator_<kind>_status_condition_* and operator_<kind>_termination_* for one kind. */
export interface StatusMetrics {
  readonly transitions: Counter<string>;
  readonly transitionSeconds: Histogram<string>;
  /** These three are derived at each scrape from cluster state (status.metrics sets their sources). */
  readonly currentStatusSeconds: DerivedGauge<string>;
  readonly count: DerivedGauge<string>;
  readonly terminationCurrentTime: DerivedGauge<string>;
  readonly terminationDuration: Histogram<string>;
}

/** glibc's arenas as the malloc addon counts them (operator/malloc.ts' MallocStats), bytes. */
type MallocArenas = Readonly<Record<'inUseBytes' | 'freeBytes' | 'mmapBytes', number>>;

export class Metrics {
  readonly registry = new Registry();
  /** When the provisioner first saw and first decided each pending pod (the pod metrics read it). */
  readonly podTimes = new PodTimes();

  // NodeClaims and nodes
  readonly nodeClaimsCreated = this.counter(
    'karpenter_nodeclaims_created_total',
    'NodeClaims created, by reason (provisioned, or the disruption reason) and NodePool',
    ['reason', 'nodepool', 'min_values_relaxed'],
  );
  readonly nodeClaimsTerminated = this.counter(
    'karpenter_nodeclaims_terminated_total',
    'NodeClaims whose termination finalizer was removed',
    ['nodepool', 'capacity_type', 'zone'],
  );
  readonly nodeClaimsDisrupted = this.counter(
    'karpenter_nodeclaims_disrupted_total',
    'NodeClaims deleted by the controller, by reason (empty, underutilized, drifted, expired, insufficient_capacity, launch_timeout, registration_timeout, garbage_collected, interrupted, ...)',
    ['reason', 'nodepool', 'capacity_type', 'consolidation_policy', 'termination_mode'],
  );
  readonly nodeClaimsUnhealthyDisrupted = this.counter(
    'karpenter_nodeclaims_unhealthy_disrupted_total',
    'NodeClaims node repair replaced, by the unhealthy node condition (snake case), NodePool, capacity type and image',
    ['condition', 'nodepool', 'capacity_type', 'image_id'],
  );
  readonly nodeClaimTerminationDuration = this.histogram(
    'karpenter_nodeclaims_termination_duration_seconds',
    'Time from a NodeClaim deletion request to its finalizer removal',
    ['nodepool'],
    exponentialBuckets(1, 2, 12),
  );
  readonly instanceTerminationDuration = this.histogram(
    'karpenter_nodeclaims_instance_termination_duration_seconds',
    'Time from the cloud delete call to the instance being gone',
    ['nodepool'],
    exponentialBuckets(1, 2, 11),
  );
  readonly nodesCreated = this.counter('karpenter_nodes_created_total', 'Nodes registered with their NodeClaim', [
    'nodepool',
    'zone',
  ]);
  readonly nodesTerminated = this.counter(
    'karpenter_nodes_terminated_total',
    'Nodes whose termination finalizer was removed',
    ['nodepool', 'zone'],
  );
  readonly nodesDrained = this.counter('karpenter_nodes_drained_total', 'Nodes drained during termination', [
    'nodepool',
  ]);
  readonly nodeTerminationDuration = this.summary(
    'karpenter_nodes_termination_duration_seconds',
    'Time from a Node deletion request to its finalizer removal',
    ['nodepool'],
  );
  readonly nodeLifetime = this.histogram(
    'karpenter_nodes_lifetime_duration_seconds',
    'Node age when it was terminated',
    ['nodepool'],
    LONG_BUCKETS,
  );
  // Derived at each scrape from cluster state (metrics.node sets the sources): nothing held per node.
  readonly nodeAllocatable = this.derived(
    'karpenter_nodes_allocatable',
    'Resources allocatable by each node',
    NODE_RESOURCE_LABEL_NAMES,
  );
  readonly nodePodRequests = this.derived(
    'karpenter_nodes_total_pod_requests',
    'Resources requested by the pods bound to each node, DaemonSet pods included',
    NODE_RESOURCE_LABEL_NAMES,
  );
  readonly nodePodLimits = this.derived(
    'karpenter_nodes_total_pod_limits',
    'Resource limits of the pods bound to each node, DaemonSet pods included',
    NODE_RESOURCE_LABEL_NAMES,
  );
  readonly nodeDaemonRequests = this.derived(
    'karpenter_nodes_total_daemon_requests',
    'Resources requested by the DaemonSet pods bound to each node',
    NODE_RESOURCE_LABEL_NAMES,
  );
  readonly nodeDaemonLimits = this.derived(
    'karpenter_nodes_total_daemon_limits',
    'Resource limits of the DaemonSet pods bound to each node',
    NODE_RESOURCE_LABEL_NAMES,
  );
  readonly nodeSystemOverhead = this.derived(
    'karpenter_nodes_system_overhead',
    'Capacity minus allocatable of each node (what the kubelet reserves)',
    NODE_RESOURCE_LABEL_NAMES,
  );
  readonly nodeCurrentLifetime = this.derived(
    'karpenter_nodes_current_lifetime_seconds',
    'Age of each node in seconds',
    NODE_LABEL_NAMES,
  );
  readonly clusterUtilization = this.derived(
    'karpenter_cluster_utilization_percent',
    'Pod requests as a percentage of allocatable, over all nodes',
    ['resource_type'],
  );

  // Pods
  readonly evictionRequests = this.counter(
    'karpenter_pods_eviction_requests_total',
    'Eviction API calls, by HTTP response code',
    ['code'],
  );
  readonly podsDrained = this.counter('karpenter_pods_drained_total', 'Pods evicted or deleted while draining a node', [
    'reason',
  ]);
  readonly podsDisruptionInitiated = this.counter(
    'karpenter_pods_disruption_initiated_total',
    'Reschedulable pods on NodeClaims the controller disrupted',
    ['reason', 'nodepool', 'capacity_type', 'consolidation_policy', 'termination_mode'],
  );
  /** Derived at each scrape from cluster state (metrics.pod sets the source): no label set held per pod. */
  readonly podsState = new DerivedGauge({
    name: 'karpenter_pods_state',
    help: 'One series per pod: its phase and where it runs',
    registers: [this.registry],
    labelNames: [
      'name',
      'namespace',
      'owner',
      'node',
      'scheduled',
      'nodepool',
      'zone',
      'arch',
      'capacity_type',
      'instance_type',
      'phase',
      'ready',
      'managed',
    ] as const,
  });
  readonly podStartupDuration = this.summary(
    'karpenter_pods_startup_duration_seconds',
    'Time from pod creation until the pod is running',
    [],
  );
  readonly podBoundDuration = this.histogram(
    'karpenter_pods_bound_duration_seconds',
    'Time from pod creation until the pod is bound',
    [],
    DURATION_BUCKETS,
  );
  readonly podUnboundTime = this.gauge(
    'karpenter_pods_unbound_time_seconds',
    'Seconds since creation of each pod not yet bound',
    POD_LABELS,
  );
  readonly podUnstartedTime = this.gauge(
    'karpenter_pods_unstarted_time_seconds',
    'Seconds since creation of each pod not yet running',
    POD_LABELS,
  );
  readonly podSchedulingDecisionDuration = this.histogram(
    'karpenter_pods_scheduling_decision_duration_seconds',
    'Time from the provisioner first seeing a pod to its first scheduling decision for it',
    [],
    DURATION_BUCKETS,
  );
  readonly podProvisioningBoundDuration = this.histogram(
    'karpenter_pods_provisioning_bound_duration_seconds',
    'Time from the first scheduling decision for a pod until it is bound',
    [],
    DURATION_BUCKETS,
  );
  readonly podProvisioningStartupDuration = this.histogram(
    'karpenter_pods_provisioning_startup_duration_seconds',
    'Time from the first scheduling decision for a pod until it is running',
    [],
    DURATION_BUCKETS,
  );
  readonly podProvisioningUnboundTime = this.gauge(
    'karpenter_pods_provisioning_unbound_time_seconds',
    'Seconds since the first scheduling decision for each pod not yet bound',
    POD_LABELS,
  );
  readonly podProvisioningUnstartedTime = this.gauge(
    'karpenter_pods_provisioning_unstarted_time_seconds',
    'Seconds since the first scheduling decision for each pod not yet running',
    POD_LABELS,
  );
  readonly podSchedulingUndecidedTime = this.gauge(
    'karpenter_pods_provisioning_scheduling_undecided_time_seconds',
    'Seconds each pod the provisioner has seen has waited for a scheduling decision',
    POD_LABELS,
  );

  // Scheduler and cluster state
  readonly schedulingDuration = this.histogram(
    'karpenter_scheduler_scheduling_duration_seconds',
    'Duration of one provisioning scheduling simulation',
    ['controller'],
    DURATION_BUCKETS,
  );
  readonly queueDepth = this.gauge(
    'karpenter_scheduler_queue_depth',
    'Pods waiting to be scheduled in the current simulation',
    ['controller', 'scheduling_id'],
  );
  readonly unfinishedWork = this.gauge(
    'karpenter_scheduler_unfinished_work_seconds',
    'Seconds the scheduling simulation under way has run',
    ['controller', 'scheduling_id'],
  );
  readonly unschedulablePods = this.gauge(
    'karpenter_scheduler_unschedulable_pods_count',
    'Pods the last provisioning pass could not place',
    ['controller'],
  );
  readonly ignoredPods = this.gauge(
    'karpenter_scheduler_ignored_pods_count',
    'Pending pods the last provisioning pass left out (not provisionable)',
    [],
  );
  readonly pendingPodsByZone = this.gauge(
    'karpenter_scheduler_pending_pods_by_effective_zone_count',
    'Pods of the last provisioning pass by the zone their constraints allow: one zone, flexible (several or any), or none',
    ['controller', 'zone'],
  );
  readonly clusterStateSynced = this.gauge(
    'karpenter_cluster_state_synced',
    '1 when cluster state reflects everything in the API server',
    [],
  );
  readonly clusterStateNodeCount = this.gauge(
    'karpenter_cluster_state_node_count',
    'Nodes (and in-flight NodeClaims) in cluster state',
    [],
  );
  readonly clusterStateUnsyncedTime = this.gauge(
    'karpenter_cluster_state_unsynced_time_seconds',
    'Seconds cluster state has been unsynced',
    [],
  );

  // NodePools
  readonly nodePoolUsage = this.gauge('karpenter_nodepools_usage', 'Resources of the nodes a NodePool owns', [
    'nodepool',
    'resource_type',
  ]);
  readonly nodePoolLimit = this.gauge('karpenter_nodepools_limit', 'NodePool spec.limits', [
    'nodepool',
    'resource_type',
  ]);
  readonly nodePoolCost = this.gauge(
    'karpenter_nodepools_cost_total',
    "Sum of the hourly offering prices of the NodePool's NodeClaims (an estimate, not a bill)",
    ['nodepool'],
  );
  readonly costTrackerErrors = this.counter(
    'karpenter_nodepools_cost_tracker_errors_total',
    'NodeClaims whose offering price could not be found when costing their NodePool',
    ['nodepool'],
  );
  readonly allowedDisruptions = this.gauge(
    'karpenter_nodepools_allowed_disruptions',
    'Disruptions the NodePool budgets allow now',
    ['nodepool', 'reason'],
  );
  readonly nodesConsumingBudgets = this.gauge(
    'karpenter_nodepools_nodes_consuming_budgets',
    'Nodes of the NodePool that count against its disruption budgets (NotReady, deleting or marked)',
    ['nodepool', 'reason'],
  );

  // Disruption
  readonly disruptionDecisions = this.counter(
    'karpenter_voluntary_disruption_decisions_total',
    'Disruption commands started',
    ['decision', 'reason', 'consolidation_type'],
  );
  readonly eligibleNodes = this.gauge(
    'karpenter_voluntary_disruption_eligible_nodes',
    'Candidates found by the last evaluation of a disruption method',
    ['reason'],
  );
  readonly disruptionDecisionsByNodePool = this.counter(
    'karpenter_voluntary_disruption_decisions_by_nodepool_total',
    'Disruption commands started, per NodePool of their candidates',
    ['nodepool', 'decision', 'reason', 'consolidation_type'],
  );
  readonly decisionEvaluationDuration = this.histogram(
    'karpenter_voluntary_disruption_decision_evaluation_duration_seconds',
    'Time to compute one disruption decision (labelled by the method that decided; empty for no decision)',
    ['reason', 'consolidation_type'],
    DURATION_BUCKETS,
  );
  readonly consolidationTimeouts = this.counter(
    'karpenter_voluntary_disruption_consolidation_timeouts_total',
    'Single- and multi-node consolidation searches that ran out of time',
    ['consolidation_type'],
  );
  readonly failedValidations = this.counter(
    'karpenter_voluntary_disruption_failed_validations_total',
    'Disruption candidates that failed validation after the delay',
    ['consolidation_type'],
  );
  readonly consolidationScore = this.histogram(
    'karpenter_consolidation_score',
    'Balanced consolidation scores of scored moves, by decision, NodePool and consolidation policy',
    ['decision', 'nodepool', 'policy'],
    [0.1, 0.25, 0.33, 0.5, 1, 2, 5, 10],
  );
  readonly consolidationMoves = this.counter(
    'karpenter_consolidation_moves_total',
    'Consolidation moves scored, by decision, NodePool and consolidation policy (other policies count as approved)',
    ['decision', 'nodepool', 'policy'],
  );
  readonly disruptionQueueFailures = this.counter(
    'karpenter_voluntary_disruption_queue_failures_total',
    'Disruption commands that failed in the orchestration queue, counted by their uninitialized replacements',
    ['decision', 'reason', 'consolidation_type'],
  );

  // Cloud provider and interruption
  readonly cloudProviderDuration = this.histogram(
    'karpenter_cloudprovider_duration_seconds',
    'Duration of cloud provider calls',
    ['controller', 'method', 'provider'],
    DURATION_BUCKETS,
  );
  readonly cloudProviderErrors = this.counter(
    'karpenter_cloudprovider_errors_total',
    'Failed cloud provider calls, by error type',
    ['controller', 'method', 'provider', 'error'],
  );
  readonly offeringPrice = this.gauge(
    'karpenter_cloudprovider_instance_type_offering_price_estimate',
    'Hourly price of each offering (instance type, capacity type, zone) the decisions use',
    ['instance_type', 'capacity_type', 'zone'],
  );
  readonly offeringAvailable = this.gauge(
    'karpenter_cloudprovider_instance_type_offering_available',
    '1 when the offering can be launched now, else 0',
    ['instance_type', 'capacity_type', 'zone'],
  );
  readonly instanceTypeCpu = this.gauge(
    'karpenter_cloudprovider_instance_type_cpu_cores',
    'vCPUs of each instance type',
    ['instance_type'],
  );
  readonly instanceTypeMemory = this.gauge(
    'karpenter_cloudprovider_instance_type_memory_bytes',
    'Memory of each instance type, in bytes',
    ['instance_type'],
  );
  readonly instanceLaunchFailures = this.counter(
    'karpenter_cloudprovider_instance_launch_failures_total',
    'Offerings a CreateFleet call could not launch, by zone, capacity type and EC2 error code',
    ['zone', 'zone_id', 'capacity_type', 'reason'],
  );
  readonly instanceTerminationFailures = this.counter(
    'karpenter_cloudprovider_instance_termination_failures_total',
    'Failed TerminateInstances calls, by zone',
    ['zone', 'zone_id'],
  );
  readonly batchSize = this.histogram(
    'karpenter_cloudprovider_batcher_batch_size',
    'Requests per batched AWS call',
    ['batcher'],
    [
      1, 2, 4, 5, 10, 15, 20, 25, 30, 40, 50, 60, 70, 80, 90, 100, 125, 150, 175, 200, 225, 250, 275, 300, 350, 400,
      450, 500, 550, 600, 700, 800, 900, 1000,
    ],
  );
  readonly batchTime = this.histogram(
    'karpenter_cloudprovider_batcher_batch_time_seconds',
    'Duration of the batching window per batcher',
    ['batcher'],
    DURATION_BUCKETS,
  );
  readonly interruptionReceived = this.counter(
    'karpenter_interruption_received_messages_total',
    'Interruption messages received, by type',
    ['message_type'],
  );
  readonly interruptionDeleted = this.counter(
    'karpenter_interruption_deleted_messages_total',
    'Interruption messages acknowledged',
    [],
  );
  readonly interruptionQueueDuration = this.histogram(
    'karpenter_interruption_message_queue_duration_seconds',
    'Time from an interruption event being emitted to the controller handling it',
    [],
    DURATION_BUCKETS,
  );
  readonly interruptionActions = this.counter(
    'karpenter_interruption_actions_performed_total',
    'Actions taken on NodeClaims for interruption messages (CordonAndDrain, NoAction)',
    ['action_type'],
  );

  // controller-runtime and its work queues, per controller
  readonly reconcileTotal = this.counter(
    'controller_runtime_reconcile_total',
    'Reconciles per controller, by result (success, error, requeue_after)',
    ['controller', 'result'],
  );
  readonly reconcileErrors = this.counter(
    'controller_runtime_reconcile_errors_total',
    'Reconciles that failed, per controller',
    ['controller'],
  );
  readonly terminalReconcileErrors = this.counter(
    'controller_runtime_terminal_reconcile_errors_total',
    'Reconciles that failed and are not retried, per controller',
    ['controller'],
  );
  readonly reconcilePanics = this.counter(
    'controller_runtime_reconcile_panics_total',
    'Reconciles that threw something other than an Error, per controller',
    ['controller'],
  );
  readonly reconcileTimeouts = this.counter(
    'controller_runtime_reconcile_timeouts_total',
    'Reconciles that ran out of time, per controller',
    ['controller'],
  );
  readonly reconcileTime = this.histogram(
    'controller_runtime_reconcile_time_seconds',
    'Wall time of one reconcile, per controller',
    ['controller'],
    RECONCILE_BUCKETS,
  );
  readonly maxConcurrentReconciles = this.gauge(
    'controller_runtime_max_concurrent_reconciles',
    'Reconciles a controller may run at once',
    ['controller'],
  );
  readonly activeWorkers = this.gauge('controller_runtime_active_workers', 'Reconciles running now, per controller', [
    'controller',
  ]);
  readonly conversionWebhookPanics = this.counter(
    'controller_runtime_conversion_webhook_panics_total',
    'Conversion webhook panics (no conversion webhook runs here: always 0)',
    [],
  );
  readonly workqueueDepth = this.gauge('workqueue_depth', "Keys waiting in each controller's work queue", [
    'name',
    'controller',
    'priority',
  ]);
  readonly workqueueAdds = this.counter('workqueue_adds_total', 'Keys added to each work queue', QUEUE_LABELS);
  readonly workqueueRetries = this.counter(
    'workqueue_retries_total',
    'Keys added back with a delay (failures backing off and requeueAfter)',
    QUEUE_LABELS,
  );
  readonly workqueueLatency = this.histogram(
    'workqueue_queue_duration_seconds',
    'Time a key waits in the queue before a reconcile takes it',
    QUEUE_LABELS,
    exponentialBuckets(1e-8, 10, 12),
  );
  readonly workqueueWorkDuration = this.histogram(
    'workqueue_work_duration_seconds',
    'Time one key takes to process',
    QUEUE_LABELS,
    exponentialBuckets(1e-8, 10, 12),
  );
  readonly workqueueUnfinished = this.gauge(
    'workqueue_unfinished_work_seconds',
    'Seconds of work in progress not yet observed by work_duration (large values: stuck reconciles)',
    QUEUE_LABELS,
  );
  readonly workqueueLongestRunning = this.gauge(
    'workqueue_longest_running_processor_seconds',
    'Seconds the longest running reconcile of each queue has run',
    QUEUE_LABELS,
  );

  // Clients
  readonly clientRequests = this.counter(
    'client_go_request_total',
    'Kubernetes API requests, by HTTP status code and method',
    ['code', 'method'],
  );
  readonly clientRequestDuration = this.histogram(
    'client_go_request_duration_seconds',
    'Kubernetes API request latency, by verb, group, version, kind and subresource',
    ['verb', 'group', 'version', 'kind', 'subresource'],
    exponentialBuckets(0.001, 1.5, 20),
  );
  readonly awsRequests = this.counter(
    'aws_sdk_go_request_total',
    'AWS SDK requests (the JavaScript SDK, under the Go SDK metric names Karpenter exports)',
    AWS_SDK_LABELS,
  );
  readonly awsRequestAttempts = this.counter(
    'aws_sdk_go_request_attempt_total',
    'AWS SDK request attempts (retries included)',
    AWS_SDK_LABELS,
  );
  readonly awsRequestDuration = this.histogram(
    'aws_sdk_go_request_duration_seconds',
    'AWS SDK request latency, retries included',
    AWS_SDK_LABELS,
    exponentialBuckets(0.01, 1.5, 20),
  );
  readonly awsAttemptDuration = this.histogram(
    'aws_sdk_go_request_attempt_duration_seconds',
    'AWS SDK latency of one attempt',
    AWS_SDK_LABELS,
    exponentialBuckets(0.01, 1.5, 20),
  );
  readonly awsRetryCount = this.histogram(
    'aws_sdk_go_request_retry_count',
    'Retries per AWS SDK request',
    AWS_SDK_LABELS,
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  );

  // Leader election (client-go's, as controller-runtime registers them).
  readonly leaderElectionStatus = this.gauge(
    'leader_election_master_status',
    '1 while this replica holds the leader lease, else 0',
    ['name'],
  );
  readonly leaderElectionSlowpath = this.counter(
    'leader_election_slowpath_total',
    'Lease renewals that had to read the Lease again (the renewal with the cached Lease was refused)',
    ['name'],
  );

  readonly buildInfo = this.gauge(
    'karpenter_build_info',
    'Version of the running controller (goversion: the Node.js runtime)',
    ['version', 'goversion', 'goarch', 'commit'],
  );

  // This build's own (no Karpenter counterpart): safety counters.
  readonly reconcileConflicts = this.counter(
    'karpenter_ts_reconcile_conflicts_total',
    'Reconciles that ended in a 409 Conflict (a write raced another writer; retried with backoff)',
    ['controller'],
  );
  readonly requestTimeouts = this.counter(
    'karpenter_ts_request_timeouts_total',
    'Outbound calls that got no answer in time (a Kubernetes request; an AWS SDK call once its retries timed out too); the operation failed and its controller retries it',
    ['client', 'operation'],
  );
  readonly watchEventsRejected = this.counter(
    'karpenter_ts_watch_events_rejected_total',
    'Watch events and listed objects an informer left out because they could not be handled, by kind and stage (decode: the line is no watch event; transform, keep: stripping or parsing the object threw; handle: cluster state threw); each is logged at error with the object and field',
    ['kind', 'stage'],
  );
  readonly solverTruncated = this.counter(
    'karpenter_ts_solver_truncated_total',
    "Decisions a wall-clock safety net cut short: a provisioning plan's improvement phase, a disruption decision's simulations or repack search (each is budgeted by work; a decision cut short by the clock may depend on the machine's load)",
    ['controller'],
  );
  readonly speculativePlans = this.counter(
    'karpenter_ts_provisioning_speculative_plans_total',
    'Provisioning decisions by whether they took the plan solved while the batch window was open (outcome: taken) or solved afresh, and why (none kept, model changed, other pods or options)',
    ['outcome'],
  );
  readonly eventLoopLag = new Gauge({
    name: 'karpenter_ts_event_loop_lag_seconds',
    help: "Delay of the controller's event loop since the last scrape, by quantile (1: the maximum); decisions run on the engine's workers, off this loop",
    labelNames: ['quantile'] as const,
    registers: [this.registry],
    collect: () => this.readLag(),
  });
  private lag: EventLoopLag | undefined;
  readonly mallocTrimDuration = this.histogram(
    'karpenter_ts_malloc_trim_duration_seconds',
    "Time of each malloc_trim (MALLOC_TRIM_INTERVAL): glibc giving its arenas' free pages back, on libuv's thread pool, off the event loop",
    [],
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
  );
  readonly mallocArenaBytes = new Gauge({
    name: 'karpenter_ts_malloc_arena_bytes',
    help: "glibc's malloc arenas (mallinfo2, every thread's summed) by state: in_use, free (resident or not), mmap (blocks with pages of their own); absent where the malloc addon is not loaded",
    labelNames: ['state'] as const,
    registers: [this.registry],
    collect: () => this.readMalloc(),
  });
  private malloc: (() => MallocArenas | null) | undefined;

  /** operator_<kind>_* per kind, and (for the kinds Karpenter emits them for) the deprecated operator_status_condition_* ones. */
  readonly status: Readonly<Record<StatusKind, StatusMetrics>> = this.statusFamilies();
  readonly deprecatedStatus: StatusMetrics = this.statusMetrics('', ['group', 'kind'], DEFAULT_BUCKETS);

  constructor(opts: { version?: string; commit?: string; processMetrics?: boolean } = {}) {
    const goarch = process.arch === 'x64' ? 'amd64' : process.arch;
    this.buildInfo.set(
      {
        version: opts.version ?? '0.1.0',
        goversion: `node${process.versions.node}`,
        goarch,
        commit: opts.commit ?? '',
      },
      1,
    );
    // Karpenter registers both series at start, so a dashboard shows 0 rather than no data.
    for (const t of ['multi', 'single']) this.consolidationTimeouts.inc({ consolidation_type: t }, 0);
    this.conversionWebhookPanics.inc(0);
    if (opts.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** Reports `lag` in karpenter_ts_event_loop_lag_seconds, read at each scrape. */
  watchEventLoop(lag: EventLoopLag): void {
    this.lag = lag;
  }

  /** Reports `stats` in karpenter_ts_malloc_arena_bytes, read at each scrape. */
  watchMalloc(stats: () => MallocArenas | null): void {
    this.malloc = stats;
  }

  private readMalloc(): void {
    const m = this.malloc?.();
    if (!m) return;
    this.mallocArenaBytes.set({ state: 'in_use' }, m.inUseBytes);
    this.mallocArenaBytes.set({ state: 'free' }, m.freeBytes);
    this.mallocArenaBytes.set({ state: 'mmap' }, m.mmapBytes);
  }

  private readLag(): void {
    if (!this.lag) return;
    const r = this.lag.read();
    this.eventLoopLag.set({ quantile: '0.5' }, r.p50);
    this.eventLoopLag.set({ quantile: '0.9' }, r.p90);
    this.eventLoopLag.set({ quantile: '0.99' }, r.p99);
    this.eventLoopLag.set({ quantile: '1' }, r.max);
  }

  /** Run before every scrape: gauges of work in progress are set then (the runtime adds one). */
  readonly beforeScrape: Array<() => void> = [];

  /**
   * The exposition (what /metrics serves) in pieces, in prom-client's text format: each family as its Registry
   * writes it, a derived one a slice of series at a time with a turn of the event loop between slices (at 5,000
   * nodes the node families are ~125,000 series of ~1 KB each).
   */
  async *exposition(): AsyncGenerator<string> {
    for (const f of this.beforeScrape) f();
    let sep = '';
    for (const metric of this.registry.getMetricsAsArray()) {
      for await (const piece of metric instanceof DerivedGauge ? metric.lines() : promFamilyLines(metric)) {
        yield sep + piece;
        sep = '';
      }
      sep = '\n\n';
    }
    yield '\n';
  }

  /** The exposition text, whole. */
  async text(): Promise<string> {
    const pieces: string[] = [];
    for await (const piece of this.exposition()) pieces.push(piece);
    return pieces.join('');
  }

  /**
   * The sum over series matching `labels` (tests and the simulator read metrics this way); for
   * histograms and summaries, the observation count. undefined when no series matches.
   */
  async value(name: string, labels: Readonly<Record<string, string>> = {}): Promise<number | undefined> {
    const metric = this.registry.getSingleMetric(name);
    if (!metric) throw new Error(`no metric named ${name}`);
    const data = await metric.get();
    const plain = ['counter', 'gauge'].includes(String(data.type));
    const match = data.values.filter((v) => {
      if (!plain && (v as { metricName?: string }).metricName !== `${name}_count`) return false;
      return Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want);
    });
    return match.length ? match.reduce((a, v) => a + v.value, 0) : undefined;
  }

  private counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  private gauge<L extends string>(name: string, help: string, labelNames: readonly L[]): Gauge<L> {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }

  private derived<L extends string>(name: string, help: string, labelNames: readonly L[]): DerivedGauge<L> {
    return new DerivedGauge({ name, help, labelNames, registers: [this.registry] });
  }

  private histogram<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    buckets: number[],
  ): Histogram<L> {
    return new Histogram({ name, help, labelNames, buckets, registers: [this.registry] });
  }

  private summary<L extends string>(name: string, help: string, labelNames: readonly L[]): Summary<L> {
    return new Summary({ name, help, labelNames, percentiles: SUMMARY_PERCENTILES, registers: [this.registry] });
  }

  /** One kind's status-condition and termination families (`prefix` '' gives the deprecated kind-less ones). */
  private statusMetrics(prefix: string, extra: readonly string[], buckets: number[]): StatusMetrics {
    const sub = prefix ? `operator_${prefix}_` : 'operator_';
    const what = prefix || 'object';
    return {
      transitions: this.counter(
        `${sub}status_condition_transitions_total`,
        `Status condition transitions of each ${what}, by type, status and reason`,
        ['type', 'status', 'reason', ...extra],
      ),
      transitionSeconds: this.histogram(
        `${sub}status_condition_transition_seconds`,
        `Time a ${what}'s condition spent in a status before it changed`,
        ['type', 'status', ...extra],
        buckets,
      ),
      currentStatusSeconds: this.derived(
        `${sub}status_condition_current_status_seconds`,
        `Seconds each ${what}'s condition has been in its current status`,
        ['namespace', 'name', 'type', 'status', 'reason', ...extra],
      ),
      count: this.derived(
        `${sub}status_condition_count`,
        `1 per ${what}, condition type, status and reason present now`,
        ['namespace', 'name', 'type', 'status', 'reason', ...extra],
      ),
      terminationCurrentTime: this.derived(
        `${sub}termination_current_time_seconds`,
        `Seconds each terminating ${what} has been terminating`,
        ['namespace', 'name', ...extra],
      ),
      terminationDuration: this.histogram(
        `${sub}termination_duration_seconds`,
        `Time a ${what} took from its deletion request until it was gone`,
        [...extra],
        buckets,
      ),
    };
  }

  private statusFamilies(): Record<StatusKind, StatusMetrics> {
    const out = {} as Record<StatusKind, StatusMetrics>;
    for (const [kind, spec] of Object.entries(STATUS_KINDS) as Array<[StatusKind, (typeof STATUS_KINDS)[StatusKind]]>) {
      // Karpenter passes 0.5 s doubling buckets for NodeClaims, NodePools and Nodes; EC2NodeClasses keep the default.
      out[kind] = this.statusMetrics(
        kind,
        spec.labels.map(objectLabelName),
        kind === 'ec2nodeclass' ? DEFAULT_BUCKETS : exponentialBuckets(0.5, 2, 15),
      );
    }
    return out;
  }
}
