// Prometheus metrics with Karpenter's names and labels (spec/disruption.md §7), so its Grafana dashboards
// work unchanged. One Registry per operator (not prom-client's global one), so tests and the simulator
// can run several operators in one process.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, Summary } from 'prom-client';

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const LONG_BUCKETS = [1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400, 604800];

export class Metrics {
  readonly registry = new Registry();

  // NodeClaims and nodes
  readonly nodeClaimsCreated = this.counter('karpenter_nodeclaims_created_total', 'NodeClaims created, by reason (provisioned, or the disruption reason) and NodePool', ['reason', 'nodepool', 'min_values_relaxed']);
  readonly nodeClaimsTerminated = this.counter('karpenter_nodeclaims_terminated_total', 'NodeClaims whose termination finalizer was removed', ['nodepool', 'capacity_type', 'zone']);
  readonly nodeClaimsDisrupted = this.counter('karpenter_nodeclaims_disrupted_total', 'NodeClaims deleted by the controller, by reason (empty, underutilized, drifted, expired, insufficient_capacity, launch_timeout, registration_timeout, garbage_collected, interrupted, ...)', ['reason', 'nodepool', 'capacity_type', 'consolidation_policy', 'termination_mode']);
  readonly nodeClaimsUnhealthyDisrupted = this.counter('karpenter_nodeclaims_unhealthy_disrupted_total', 'NodeClaims node repair replaced, by the unhealthy node condition (snake case), NodePool, capacity type and image', ['condition', 'nodepool', 'capacity_type', 'image_id']);
  readonly nodeClaimTerminationDuration = this.histogram('karpenter_nodeclaims_termination_duration_seconds', 'Time from a NodeClaim deletion request to its finalizer removal', ['nodepool'], LONG_BUCKETS);
  readonly instanceTerminationDuration = this.histogram('karpenter_nodeclaims_instance_termination_duration_seconds', 'Time from the cloud delete call to the instance being gone', ['nodepool'], LONG_BUCKETS);
  readonly nodesCreated = this.counter('karpenter_nodes_created_total', 'Nodes registered with their NodeClaim', ['nodepool', 'zone']);
  readonly nodesTerminated = this.counter('karpenter_nodes_terminated_total', 'Nodes whose termination finalizer was removed', ['nodepool', 'zone']);
  readonly nodesDrained = this.counter('karpenter_nodes_drained_total', 'Nodes drained during termination', ['nodepool']);
  readonly nodeTerminationDuration = new Summary({ name: 'karpenter_nodes_termination_duration_seconds', help: 'Time from a Node deletion request to its finalizer removal', labelNames: ['nodepool'], registers: [this.registry] });
  readonly nodeLifetime = this.histogram('karpenter_nodes_lifetime_duration_seconds', 'Node age when it was terminated', ['nodepool'], LONG_BUCKETS);

  // Pods
  readonly evictionRequests = this.counter('karpenter_pods_eviction_requests_total', 'Eviction API calls, by HTTP response code', ['code']);
  readonly podsDrained = this.counter('karpenter_pods_drained_total', 'Pods evicted or deleted while draining a node', ['reason']);
  readonly podsDisruptionInitiated = this.counter('karpenter_pods_disruption_initiated_total', 'Reschedulable pods on NodeClaims the controller disrupted', ['reason', 'nodepool', 'capacity_type', 'consolidation_policy', 'termination_mode']);
  readonly podsState = this.gauge('karpenter_pods_state', 'One series per pod: its phase and where it runs', ['name', 'namespace', 'owner', 'node', 'nodepool', 'zone', 'arch', 'capacity_type', 'instance_type', 'phase']);

  // Scheduler and cluster state
  readonly schedulingDuration = this.histogram('karpenter_scheduler_scheduling_duration_seconds', 'Duration of one provisioning scheduling simulation', ['controller'], DURATION_BUCKETS);
  readonly queueDepth = this.gauge('karpenter_scheduler_queue_depth', 'Pods waiting to be scheduled in the current simulation', ['controller', 'scheduling_id']);
  readonly unschedulablePods = this.gauge('karpenter_scheduler_unschedulable_pods_count', 'Pods the last provisioning pass could not place', ['controller']);
  readonly clusterStateSynced = this.gauge('karpenter_cluster_state_synced', '1 when cluster state reflects everything in the API server', []);
  readonly clusterStateNodeCount = this.gauge('karpenter_cluster_state_node_count', 'Nodes (and in-flight NodeClaims) in cluster state', []);
  readonly clusterStateUnsyncedTime = this.gauge('karpenter_cluster_state_unsynced_time_seconds', 'Seconds cluster state has been unsynced', []);

  // NodePools
  readonly nodePoolUsage = this.gauge('karpenter_nodepools_usage', 'Resources of the nodes a NodePool owns', ['nodepool', 'resource_type']);
  readonly nodePoolLimit = this.gauge('karpenter_nodepools_limit', 'NodePool spec.limits', ['nodepool', 'resource_type']);
  readonly allowedDisruptions = this.gauge('karpenter_nodepools_allowed_disruptions', 'Disruptions the NodePool budgets allow now', ['nodepool', 'reason']);
  readonly nodesConsumingBudgets = this.gauge('karpenter_nodepools_nodes_consuming_budgets', 'Nodes of the NodePool that count against its disruption budgets (NotReady, deleting or marked)', ['nodepool', 'reason']);

  // Disruption
  readonly disruptionDecisions = this.counter('karpenter_voluntary_disruption_decisions_total', 'Disruption commands started', ['decision', 'reason', 'consolidation_type']);
  readonly eligibleNodes = this.gauge('karpenter_voluntary_disruption_eligible_nodes', 'Candidates found by the last evaluation of a disruption method', ['reason']);
  readonly disruptionDecisionsByNodePool = this.counter('karpenter_voluntary_disruption_decisions_by_nodepool_total', 'Disruption commands started, per NodePool of their candidates', ['nodepool', 'decision', 'reason', 'consolidation_type']);
  readonly decisionEvaluationDuration = this.histogram('karpenter_voluntary_disruption_decision_evaluation_duration_seconds', 'Time to compute one disruption decision (labelled by the method that decided; empty for no decision)', ['reason', 'consolidation_type'], DURATION_BUCKETS);
  readonly consolidationTimeouts = this.counter('karpenter_voluntary_disruption_consolidation_timeouts_total', 'Single- and multi-node consolidation searches that ran out of time', ['consolidation_type']);
  readonly failedValidations = this.counter('karpenter_voluntary_disruption_failed_validations_total', 'Disruption candidates that failed validation after the delay', ['consolidation_type']);
  readonly consolidationScore = this.histogram('karpenter_consolidation_score', 'Balanced consolidation scores of scored moves, by decision, NodePool and consolidation policy', ['decision', 'nodepool', 'policy'], [0.1, 0.25, 0.33, 0.5, 1, 2, 5, 10]);
  readonly consolidationMoves = this.counter('karpenter_consolidation_moves_total', 'Consolidation moves scored, by decision, NodePool and consolidation policy (other policies count as approved)', ['decision', 'nodepool', 'policy']);
  readonly disruptionQueueFailures = this.counter('karpenter_voluntary_disruption_queue_failures_total', 'Disruption commands that failed in the orchestration queue, counted by their uninitialized replacements', ['decision', 'reason', 'consolidation_type']);

  // Cloud provider and interruption
  readonly cloudProviderDuration = this.histogram('karpenter_cloudprovider_duration_seconds', 'Duration of cloud provider calls', ['controller', 'method', 'provider'], DURATION_BUCKETS);
  readonly cloudProviderErrors = this.counter('karpenter_cloudprovider_errors_total', 'Failed cloud provider calls, by error type', ['controller', 'method', 'provider', 'error']);
  readonly interruptionReceived = this.counter('karpenter_interruption_received_messages_total', 'Interruption messages received, by type', ['message_type']);
  readonly interruptionDeleted = this.counter('karpenter_interruption_deleted_messages_total', 'Interruption messages acknowledged', []);
  readonly interruptionQueueDuration = this.histogram('karpenter_interruption_message_queue_duration_seconds', 'Time from an interruption event being emitted to the controller handling it', [], [0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600]);
  readonly interruptionActions = this.counter('karpenter_interruption_actions_performed_total', 'Actions taken on NodeClaims for interruption messages (CordonAndDrain, NoAction)', ['action_type']);

  // Leader election (client-go's gauge, as controller-runtime registers it): 1 while this replica leads.
  readonly leaderElectionStatus = this.gauge('leader_election_master_status', '1 while this replica holds the leader lease, else 0', ['name']);

  readonly buildInfo = this.gauge('karpenter_build_info', 'Version of the running controller', ['version', 'runtime']);

  // This build's own (no Karpenter counterpart): safety counters.
  readonly reconcileConflicts = this.counter('karpenter_ts_reconcile_conflicts_total', 'Reconciles that ended in a 409 Conflict (a write raced another writer; retried with backoff)', ['controller']);
  readonly requestTimeouts = this.counter('karpenter_ts_request_timeouts_total', 'Outbound calls that got no answer in time (a Kubernetes request; an AWS SDK call once its retries timed out too); the operation failed and its controller retries it', ['client', 'operation']);

  constructor(opts: { version?: string; processMetrics?: boolean } = {}) {
    this.buildInfo.set({ version: opts.version ?? '0.1.0', runtime: `node ${process.versions.node}` }, 1);
    if (opts.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** The exposition text (what /metrics serves). */
  text(): Promise<string> {
    return this.registry.metrics();
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

  private histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]): Histogram<L> {
    return new Histogram({ name, help, labelNames, buckets, registers: [this.registry] });
  }
}
