// The real operator with the simulated cloud, against a simulated API server it reaches only over HTTP, with
// the simulated kubelets behind a port (SimKubeletPort): the pieces of startSimulation that can run in a
// process of their own. The controller benchmark runs the operator this way, in a child process, so that its
// event loop, memory and timings are the controller's alone and the simulated cluster's work stays in the
// parent (bench/controller/).
//
// The observers (observeDecisions, observeDisruptionPasses) watch a running operator from outside, through
// what it already exposes: its cluster-state change stream and its metrics.
import { KubeConfig } from '@kubernetes/client-node';
import { toNodeClass } from '../engine/index.ts';
import { newOperator, type Operator } from '../controller/main.ts';
import { realClock } from '../controller/operator/clock.ts';
import { newLogger } from '../controller/operator/logger.ts';
import { resolveOptions, type LogLevel, type ResolvedOptions } from '../controller/operator/options.ts';
import { Batcher } from '../controller/controllers/provisioning/batcher.ts';
import { triggers, type DecisionAccount } from '../controller/controllers/provisioning/reconcile.ts';
import { simNetwork } from './cloud/network.ts';
import { SimCloudProvider, type SimKubeletPort } from './cloud/provider.ts';

interface SimOperatorOptions {
  /** The simulated API server's kubeconfig (kubeConfigText / KubeConfig.exportConfig). */
  readonly kubeConfig: string;
  readonly kubelet: SimKubeletPort;
  /** Default ap-northeast-2, the guide's region. */
  readonly region?: string;
  /** Default my-cluster (the guide's examples select subnets tagged with it). */
  readonly clusterName?: string;
  /** Option overrides by flag name. */
  readonly options?: Readonly<Record<string, string>>;
  /** CreateFleet to instance running (the simulated cloud's default 2 s). */
  readonly launchMs?: number;
  /** Terminate call to instance gone (default 5 s). */
  readonly terminateMs?: number;
  readonly logLevel?: LogLevel | 'silent';
  /** Where log lines go (LOG_OUTPUT_PATHS: stdout, stderr or files; default stdout). */
  readonly logOutputPaths?: readonly string[];
}

export interface SimOperator {
  readonly operator: Operator;
  readonly options: ResolvedOptions;
  readonly provider: SimCloudProvider;
  stop(): Promise<void>;
}

/** Builds and starts the operator on the wall clock; resolves once it has started (informers listed). */
export async function startSimOperator(o: SimOperatorOptions): Promise<SimOperator> {
  const region = o.region ?? 'ap-northeast-2';
  const clusterName = o.clusterName ?? 'my-cluster';
  const kc = new KubeConfig();
  kc.loadFromString(o.kubeConfig);
  const overrides = {
    'cluster-name': clusterName,
    'metrics-port': '0',
    'health-probe-port': '0',
    'disable-leader-election': 'true',
    ...(o.options ?? {}),
  };
  const options = resolveOptions([], {}, overrides);
  const network = simNetwork(region, clusterName);
  let provider: SimCloudProvider | undefined;
  const operator = await newOperator({
    options,
    clock: realClock,
    log: newLogger({ level: o.logLevel ?? 'silent', ...(o.logOutputPaths ? { outputPaths: o.logOutputPaths } : {}) }),
    kubeConfig: kc,
    cloudProvider: (ctx) =>
      (provider = new SimCloudProvider({
        clock: realClock,
        region,
        kubelet: o.kubelet,
        network,
        nodeClass: ctx.nodeClass,
        zonesOf: (nc) => toNodeClass(nc).zones,
        reservedCapacity: options.featureGates.reservedCapacity,
        ...(o.launchMs !== undefined ? { launchMs: o.launchMs } : {}),
        ...(o.terminateMs !== undefined ? { terminateMs: o.terminateMs } : {}),
      })),
  });
  await operator.start();
  return { operator, options, provider: provider!, stop: () => operator.stop() };
}

interface DecisionObserver {
  /** A provisioning batch window closed (ms, the wall clock). */
  readonly onWindowClosed: (at: number) => void;
  /** A NodeClaim this operator did not know before entered its cluster state (created by it, or listed). */
  readonly onNodeClaimAdded: (at: number, name: string) => void;
  /**
   * A provisioning decision got its plan (ms, the wall clock): `speculative` is `taken` when it was the plan solved
   * while the window was open, else why not (karpenter_ts_provisioning_speculative_plans_total's outcome); `account`
   * what it found of the solve ahead and how long its engine call queued (the provisioner's `lastDecision`).
   */
  readonly onDecision?: (at: number, speculative: string, account: DecisionAccount | undefined) => void;
}

/**
 * Follows the provisioner's batch windows without touching it: a second Batcher with the operator's batch
 * durations, fed by the same change stream and the same trigger rule, opens and closes when the provisioner's
 * does (both timers are set in the same turn). Returns what stops observing.
 */
export function observeDecisions(sim: SimOperator, o: DecisionObserver, now: () => number = wallClockMs): () => void {
  const { batchIdleDurationMs, batchMaxDurationMs } = sim.options;
  const shadow = new Batcher(realClock, batchIdleDurationMs, batchMaxDurationMs, () => o.onWindowClosed(now()));
  const unsubscribe = sim.operator.cluster.subscribe((c) => {
    if (triggers(c)) shadow.trigger();
    if (c.kind === 'NodeClaim' && c.type === 'upsert' && !c.old) o.onNodeClaimAdded(now(), c.name);
  });
  const counter = sim.operator.metrics.speculativePlans;
  const original = counter.inc.bind(counter);
  const inc = ((labels: { outcome: string }, value?: number) => {
    original(labels, value);
    o.onDecision?.(now(), labels.outcome, sim.operator.controllers.provisioner?.lastDecision());
  }) as typeof counter.inc;
  if (o.onDecision) counter.inc = inc;
  return () => {
    unsubscribe();
    shadow.stop();
    if (counter.inc === inc) counter.inc = original;
  };
}

/** Wall-clock ms with sub-millisecond resolution (comparable across processes on one machine). */
export const wallClockMs = (): number => performance.timeOrigin + performance.now();

/** One disruption pass as the operator's decision-evaluation metric records it. */
interface DisruptionPass {
  readonly at: number;
  readonly seconds: number;
  /** The deciding method's reason label (empty for a pass that decided nothing). */
  readonly reason: string;
  readonly consolidationType: string;
}

/**
 * Every observation of karpenter_voluntary_disruption_decision_evaluation_duration_seconds (one per
 * disruption pass that ran the engine), as it is recorded. Returns what stops observing.
 */
export function observeDisruptionPasses(op: Operator, fn: (p: DisruptionPass) => void): () => void {
  const h = op.metrics.decisionEvaluationDuration;
  const original = h.observe.bind(h);
  const observe = ((labels: Record<string, string>, value: number) => {
    original(labels as never, value);
    fn({
      at: wallClockMs(),
      seconds: value,
      reason: labels['reason'] ?? '',
      consolidationType: labels['consolidation_type'] ?? '',
    });
  }) as typeof h.observe;
  h.observe = observe;
  return () => {
    if (h.observe === observe) h.observe = original;
  };
}
