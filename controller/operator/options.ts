// Controller options: command-line flags with environment fallbacks, validated once into a frozen object.
// Names follow Karpenter's settings (pkg/operator/options) where it has them; flags win over the
// environment, which wins over the default. Every problem is reported at once, naming the flag.
import { parseArgs as parseCommandLine, type ParseArgsConfig } from 'node:util';
import { formatDuration, parseGoDuration, parseSchedulerConfig, type SchedulerConfig } from '../../engine/index.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface FeatureGates {
  readonly spotToSpotConsolidation: boolean;
  readonly nodeRepair: boolean;
  readonly reservedCapacity: boolean;
  readonly nodeOverlay: boolean;
  readonly staticCapacity: boolean;
  readonly capacityBuffer: boolean;
}

export interface ResolvedOptions {
  readonly clusterName: string;
  readonly batchMaxDurationMs: number;
  readonly batchIdleDurationMs: number;
  /** 0 disables the metrics server. */
  readonly metricsPort: number;
  /** 0 disables the health probe server. */
  readonly healthProbePort: number;
  readonly logLevel: LogLevel;
  readonly featureGates: FeatureGates;
  readonly preferencePolicy: 'Respect' | 'Ignore';
  readonly minValuesPolicy: 'Strict' | 'BestEffort';
  /** Karpenter's IGNORE_DRA_REQUESTS: pods with DRA resource claims are not provisioned (default true). */
  readonly ignoreDRARequests: boolean;
  /** Karpenter's SCHEDULER_CONFIG: the kube-scheduler settings to mirror (default topology spread); undefined = none. */
  readonly schedulerConfig: SchedulerConfig | undefined;
  /** A kubeconfig file; empty = in-cluster config, else the default kubeconfig loading rules. */
  readonly kubeconfig: string;
  /** SQS queue for interruption events (the AWS provider reads it); empty = no interruption handling. */
  readonly interruptionQueue: string;
  // The AWS provider's settings (Karpenter's pkg/operator/options of the AWS provider).
  /** The API server URL written into node user data (required by the AWS provider). */
  readonly clusterEndpoint: string;
  /** Base64 CA bundle for node user data; empty = the controller's own kubeconfig CA. */
  readonly clusterCABundle: string;
  /** The cluster's service CIDR for AL2023 user data (nodeadm requires it); empty = unknown. */
  readonly clusterCIDR: string;
  /** Fraction of memory taken off every instance type for the hypervisor, in [0, 1). */
  readonly vmMemoryOverheadPercent: number;
  /** ENIs left out of the max-pods computation. */
  readonly reservedENIs: number;
  /** No Pricing API calls: the static price table is used. */
  readonly isolatedVPC: boolean;
  /** Discover cluster details with eks:DescribeCluster (accepted; not used by this build). */
  readonly eksControlPlane: boolean;
  /** The disruption engine's global repack: after Karpenter's methods, instead of its consolidation, or off. */
  readonly consolidationRepack: 'after' | 'only' | 'off';
  /** The least share of its nodes' price a repack step must save (the engine's repackMinSavingsShare). */
  readonly consolidationRepackMinSavings: number;
  /** LOG_OUTPUT_PATHS: stdout, stderr or files. */
  readonly logOutputPaths: readonly string[];
  /** LOG_ERROR_OUTPUT_PATHS: where failures to write logs go. */
  readonly logErrorOutputPaths: readonly string[];
  /** KUBE_CLIENT_QPS and KUBE_CLIENT_BURST: the Kubernetes client's token bucket. */
  readonly kubeClientQPS: number;
  readonly kubeClientBurst: number;
  /** MALLOC_TRIM_INTERVAL: how often glibc's free arena pages go back to the system (ms; 0: never; malloc.ts). */
  readonly mallocTrimIntervalMs: number;
  /** HEAP_GROWING_PERCENT: how far past its live data a thread's heap may grow before V8 collects (heap.ts). */
  readonly heapGrowingPercent: number;
  /** ENGINE_WORKER_HEAP_MIB: each engine worker thread's old-generation heap limit, MiB; 0: as Node gives it (heap.ts). */
  readonly engineWorkerHeapMiB: number;
  /** CPU_REQUESTS (millicores): scales nodeclaim.lifecycle's and node.termination's reconciles (operator/reconciles.ts). */
  readonly cpuRequests: number;
  /** AMI_REFRESH_INTERVAL and SUBNET_REFRESH_INTERVAL (ms): how often a Ready EC2NodeClass is resolved again. */
  readonly amiRefreshIntervalMs: number;
  readonly subnetRefreshIntervalMs: number;
  /** DISABLE_CLUSTER_STATE_OBSERVABILITY: no pod, node, NodePool, offering or status-condition metrics. */
  readonly disableClusterStateObservability: boolean;
  /** Karpenter settings this build accepts and ignores, that were set: flag, variable and why (warned at start). */
  readonly ignored: ReadonlyArray<{ readonly flag: string; readonly env: string; readonly reason: string }>;
  /** Run without the leader Lease (one replica only). */
  readonly disableLeaderElection: boolean;
  /** The leader Lease's name. */
  readonly leaderElectionName: string;
  /** The leader Lease's namespace; empty = the pod's own namespace (in a cluster). */
  readonly leaderElectionNamespace: string;
  /** Bound of a Kubernetes request other than a list or watch (ms). */
  readonly kubeRequestTimeoutMs: number;
  /** Bound of a Kubernetes list (ms). */
  readonly kubeListTimeoutMs: number;
  /** Bound of one AWS SDK attempt (ms). */
  readonly awsRequestTimeoutMs: number;
}

type Kind =
  | 'string'
  | 'duration'
  | 'port'
  | 'enum'
  | 'gates'
  | 'fraction'
  | 'count'
  | 'bool'
  | 'cidr'
  | 'name'
  | 'paths'
  | 'int'
  | 'interval'
  | 'period'
  | 'schedulerConfig';

interface Spec {
  readonly flag: string;
  readonly env: string;
  readonly kind: Kind;
  readonly default: string;
  readonly help: string;
  readonly values?: readonly string[];
  /** Accepted for Karpenter compatibility and ignored: why (a warning at start when it is set). */
  readonly noop?: string;
}

/** Every option, in the order `--help` and docs/controller.md list them. */
export const OPTION_SPECS: readonly Spec[] = [
  {
    flag: 'cluster-name',
    env: 'CLUSTER_NAME',
    kind: 'string',
    default: '',
    help: 'Cluster name, used to tag and discover resources (required by `controller`)',
  },
  {
    flag: 'batch-max-duration',
    env: 'BATCH_MAX_DURATION',
    kind: 'duration',
    default: '10s',
    help: 'Longest a provisioning batch window stays open',
  },
  {
    flag: 'batch-idle-duration',
    env: 'BATCH_IDLE_DURATION',
    kind: 'duration',
    default: '1s',
    help: 'A batch closes after this long without a new pending pod',
  },
  {
    flag: 'metrics-port',
    env: 'METRICS_PORT',
    kind: 'port',
    default: '8080',
    help: 'Port of the Prometheus /metrics endpoint (0 disables it)',
  },
  {
    flag: 'health-probe-port',
    env: 'HEALTH_PROBE_PORT',
    kind: 'port',
    default: '8081',
    help: 'Port of /healthz and /readyz (0 disables it)',
  },
  {
    flag: 'log-level',
    env: 'LOG_LEVEL',
    kind: 'enum',
    default: 'info',
    values: ['debug', 'info', 'warn', 'error'],
    help: 'Log level',
  },
  {
    flag: 'feature-gates',
    env: 'FEATURE_GATES',
    kind: 'gates',
    default:
      'SpotToSpotConsolidation=false,NodeRepair=false,ReservedCapacity=true,NodeOverlay=false,StaticCapacity=false,CapacityBuffer=false',
    help: 'Optional features, as Name=true|false pairs separated by commas',
  },
  {
    flag: 'preference-policy',
    env: 'PREFERENCE_POLICY',
    kind: 'enum',
    default: 'Respect',
    values: ['Respect', 'Ignore'],
    help: 'Whether preferred affinities and ScheduleAnyway spreads count when provisioning',
  },
  {
    flag: 'min-values-policy',
    env: 'MIN_VALUES_POLICY',
    kind: 'enum',
    default: 'Strict',
    values: ['Strict', 'BestEffort'],
    help: "What to do when a NodePool's minValues cannot be met",
  },
  {
    flag: 'scheduler-config',
    env: 'SCHEDULER_CONFIG',
    kind: 'schedulerConfig',
    default: '',
    help: 'A YAML/JSON document of the kube-scheduler settings to mirror in scheduling (podTopologySpread.defaultConstraints); empty = none',
  },
  {
    flag: 'ignore-dra-requests',
    env: 'IGNORE_DRA_REQUESTS',
    kind: 'bool',
    default: 'true',
    help: 'Leave pods with Dynamic Resource Allocation claims unprovisioned; false simulates device allocation from ResourceSlices (docs/solver.md, DRA)',
  },
  {
    flag: 'kubeconfig',
    env: 'KUBECONFIG',
    kind: 'string',
    default: '',
    help: 'Path to a kubeconfig (default: in-cluster, then ~/.kube/config)',
  },
  {
    flag: 'interruption-queue',
    env: 'INTERRUPTION_QUEUE',
    kind: 'string',
    default: '',
    help: 'SQS queue name for spot interruption and health events',
  },
  {
    flag: 'cluster-endpoint',
    env: 'CLUSTER_ENDPOINT',
    kind: 'string',
    default: '',
    help: "API server URL for node user data (default: eks:DescribeCluster's)",
  },
  {
    flag: 'cluster-ca-bundle',
    env: 'CLUSTER_CA_BUNDLE',
    kind: 'string',
    default: '',
    help: "Base64 cluster CA for node user data (default: the kubeconfig's CA)",
  },
  {
    flag: 'cluster-cidr',
    env: 'CLUSTER_CIDR',
    kind: 'cidr',
    default: '',
    help: "The cluster's service CIDR for AL2023 node user data (Karpenter reads it from eks:DescribeCluster)",
  },
  {
    flag: 'vm-memory-overhead-percent',
    env: 'VM_MEMORY_OVERHEAD_PERCENT',
    kind: 'fraction',
    default: '0.075',
    help: 'Fraction of instance memory reserved for the hypervisor',
  },
  {
    flag: 'reserved-enis',
    env: 'RESERVED_ENIS',
    kind: 'count',
    default: '0',
    help: 'ENIs left out of the max-pods computation',
  },
  {
    flag: 'isolated-vpc',
    env: 'ISOLATED_VPC',
    kind: 'bool',
    default: 'false',
    help: 'No Pricing API calls; use the static price table',
  },
  {
    flag: 'eks-control-plane',
    env: 'EKS_CONTROL_PLANE',
    kind: 'bool',
    default: 'false',
    help: 'On EKS: read the service CIDR (and the endpoint, when not set) with eks:DescribeCluster',
  },
  {
    flag: 'consolidation-repack',
    env: 'CONSOLIDATION_REPACK',
    kind: 'enum',
    default: 'after',
    values: ['after', 'only', 'off'],
    help: "Global repack: after Karpenter's consolidation finds nothing, instead of it, or off",
  },
  {
    flag: 'consolidation-repack-min-savings',
    env: 'CONSOLIDATION_REPACK_MIN_SAVINGS',
    kind: 'fraction',
    default: '0.05',
    help: 'The global repack replaces a group of nodes only when that saves at least this share of their price (0: any saving)',
  },
  {
    flag: 'disable-leader-election',
    env: 'DISABLE_LEADER_ELECTION',
    kind: 'bool',
    default: 'false',
    help: 'Run without leader election (only safe with a single replica)',
  },
  {
    flag: 'leader-election-name',
    env: 'LEADER_ELECTION_NAME',
    kind: 'name',
    default: 'karpenter-leader-election',
    help: 'Name of the coordination.k8s.io Lease the replicas elect a leader with',
  },
  {
    flag: 'leader-election-namespace',
    env: 'LEADER_ELECTION_NAMESPACE',
    kind: 'name',
    default: '',
    help: 'Namespace of the leader Lease (default: the namespace the controller runs in)',
  },
  {
    flag: 'log-output-paths',
    env: 'LOG_OUTPUT_PATHS',
    kind: 'paths',
    default: 'stdout',
    help: 'Where log lines go: comma-separated stdout, stderr or file paths',
  },
  {
    flag: 'log-error-output-paths',
    env: 'LOG_ERROR_OUTPUT_PATHS',
    kind: 'paths',
    default: 'stderr',
    help: 'Where failures to write log lines are reported (comma-separated)',
  },
  {
    flag: 'kube-client-qps',
    env: 'KUBE_CLIENT_QPS',
    kind: 'count',
    default: '200',
    help: 'Sustained requests per second to the Kubernetes API server',
  },
  {
    flag: 'kube-client-burst',
    env: 'KUBE_CLIENT_BURST',
    kind: 'count',
    default: '300',
    help: 'Requests to the API server allowed at once above the sustained rate',
  },
  {
    flag: 'ami-refresh-interval',
    env: 'AMI_REFRESH_INTERVAL',
    kind: 'interval',
    default: '1m',
    help: "How often a Ready EC2NodeClass's AMIs are resolved again (at least 1m)",
  },
  {
    flag: 'subnet-refresh-interval',
    env: 'SUBNET_REFRESH_INTERVAL',
    kind: 'interval',
    default: '1m',
    help: "How often a Ready EC2NodeClass's subnets are resolved again (at least 1m)",
  },
  {
    flag: 'disable-cluster-state-observability',
    env: 'DISABLE_CLUSTER_STATE_OBSERVABILITY',
    kind: 'bool',
    default: 'false',
    help: 'No pod, node, NodePool, offering or status-condition metrics (and no status transition events)',
  },
  {
    flag: 'disable-dry-run',
    env: 'DISABLE_DRY_RUN',
    kind: 'bool',
    default: 'false',
    help: 'Accepted for Karpenter compatibility',
    noop: 'this build validates EC2NodeClasses without dry-run EC2 calls, so there is no dry run to disable',
  },
  {
    flag: 'enable-zonal-shift',
    env: 'ENABLE_ZONAL_SHIFT',
    kind: 'bool',
    default: 'false',
    help: 'Accepted for Karpenter compatibility',
    noop: 'ARC zonal shifts are not followed by this build: offerings in a shifted zone stay in use',
  },
  {
    flag: 'enable-profiling',
    env: 'ENABLE_PROFILING',
    kind: 'bool',
    default: 'false',
    help: 'Accepted for Karpenter compatibility',
    noop: 'Go pprof endpoints have no Node.js counterpart here; profile with node --cpu-prof or --inspect',
  },
  {
    flag: 'disable-controller-warmup',
    env: 'DISABLE_CONTROLLER_WARMUP',
    kind: 'bool',
    default: 'false',
    help: 'Accepted for Karpenter compatibility',
    noop: 'followers always fill their caches before they lead; nothing to turn off',
  },
  {
    flag: 'heap-growing-percent',
    env: 'HEAP_GROWING_PERCENT',
    kind: 'count',
    default: '20',
    help: "How far past its live data each thread's JavaScript heap may grow before a full collection, percent (0: as Node started: V8's own choice)",
  },
  {
    flag: 'malloc-trim-interval',
    env: 'MALLOC_TRIM_INTERVAL',
    kind: 'period',
    default: '10s',
    help: "How often the controller hands the free pages of glibc's malloc arenas back to the system (malloc_trim); 0s: never",
  },
  {
    flag: 'engine-worker-heap-mib',
    env: 'ENGINE_WORKER_HEAP_MIB',
    kind: 'count',
    default: '0',
    help: "Each engine worker thread's old-generation heap limit, MiB, apart from the main thread's (NODE_OPTIONS=--max-old-space-size then sizes the main thread only); 0: the workers take the process's limit as Node gives it",
  },
  {
    flag: 'cpu-requests',
    env: 'CPU_REQUESTS',
    kind: 'int',
    default: '1000',
    help: "The controller container's CPU request (millicores): the busiest per-object controllers run more reconciles at once with more CPU (0 or less: 1000)",
  },
  {
    flag: 'memory-limit',
    env: 'MEMORY_LIMIT',
    kind: 'int',
    default: '-1',
    help: 'Accepted for Karpenter compatibility (bytes)',
    noop: "Karpenter sets Go's soft memory limit from it; Node.js takes its heap limit from NODE_OPTIONS=--max-old-space-size at start",
  },
  {
    flag: 'karpenter-service',
    env: 'KARPENTER_SERVICE',
    kind: 'string',
    default: '',
    help: 'Accepted for Karpenter compatibility',
    noop: "it names the Service of Karpenter's webhook certificate; this build runs no webhook",
  },
  {
    flag: 'aws-feature-gates',
    env: 'AWS_FEATURE_GATES',
    kind: 'string',
    default: 'NodeClassCEL=false',
    help: 'Accepted for Karpenter compatibility',
    noop: "the AWS provider's NodeClassCEL gate has no effect here: EC2NodeClasses are validated by this build's own parser",
  },
  {
    flag: 'kube-request-timeout',
    env: 'KUBE_REQUEST_TIMEOUT',
    kind: 'duration',
    default: '30s',
    help: 'A Kubernetes request (not a list or watch) without an answer by then fails, and its controller retries it',
  },
  {
    flag: 'kube-list-timeout',
    env: 'KUBE_LIST_TIMEOUT',
    kind: 'duration',
    default: '2m',
    help: 'A Kubernetes list without a full answer by then fails, and the informer retries it with backoff',
  },
  {
    flag: 'aws-request-timeout',
    env: 'AWS_REQUEST_TIMEOUT',
    kind: 'duration',
    default: '30s',
    help: 'One AWS SDK attempt without an answer by then times out (the SDK retries in its adaptive mode; a call whose attempts all timed out fails)',
  },
];

const GATE_NAMES: Readonly<Record<string, keyof FeatureGates>> = {
  SpotToSpotConsolidation: 'spotToSpotConsolidation',
  NodeRepair: 'nodeRepair',
  ReservedCapacity: 'reservedCapacity',
  NodeOverlay: 'nodeOverlay',
  StaticCapacity: 'staticCapacity',
  CapacityBuffer: 'capacityBuffer',
};

/**
 * The gates this build implements. Karpenter's other gate names are known (so a typo is told apart from a
 * feature we lack), but turning one of them on is refused at start: a gate must never be accepted and then
 * have no effect.
 */
export const IMPLEMENTED_GATES: ReadonlySet<keyof FeatureGates> = new Set<keyof FeatureGates>([
  'spotToSpotConsolidation',
  'reservedCapacity',
  'nodeRepair',
  'staticCapacity',
  'nodeOverlay',
  'capacityBuffer',
]);

export class OptionsError extends Error {
  override name = 'OptionsError';
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
  }
}

/**
 * Reads the command line as Go's flag package does, with node:util's parseArgs: `--name=value`, `--name value`,
 * the same with one dash (`-name=value`), and a boolean alone (`--disable-leader-election`) or followed by true or
 * false. Unknown flags, flags without their value and stray words are problems; later flags win.
 */
function readFlags(
  argv: readonly string[],
  known: ReadonlySet<string>,
  problems: string[],
  booleans: ReadonlySet<string> = new Set(),
): Map<string, string> {
  const options: ParseArgsConfig['options'] = Object.fromEntries(
    [...known].map((name) => [name, { type: booleans.has(name) ? ('boolean' as const) : ('string' as const) }]),
  );
  const { tokens } = parseCommandLine({
    // Go's flag package takes `-name` as `--name` (parseArgs would read -n -a -m -e), but not where it is a value.
    args: argv.map((arg, i) => (i > 0 && awaitsValue(argv[i - 1]!) ? arg : goStyleFlag(arg))),
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const out = new Map<string, string>();
  const consumed = new Set<number>();
  tokens.forEach((t, i) => {
    if (t.kind === 'positional' && !consumed.has(t.index))
      problems.push(`unexpected argument "${t.value}" (options look like --name=value)`);
    if (t.kind !== 'option') return;
    if (!known.has(t.name)) {
      problems.push(`unknown option --${t.name}`);
      return;
    }
    let value = t.value;
    if (booleans.has(t.name) && value === undefined) {
      // A boolean's value may follow it as a separate word, as with Go's flag package on Karpenter's command line.
      const next = tokens[i + 1];
      const word =
        next?.kind === 'positional' && next.index === t.index + 1 && /^(true|false)$/i.test(next.value)
          ? next
          : undefined;
      if (word) consumed.add(word.index);
      value = word?.value ?? 'true';
    }
    if (value === undefined || (!t.inlineValue && value.startsWith('--'))) {
      problems.push(`--${t.name} needs a value`);
      return;
    }
    out.set(t.name, value);
  });
  return out;

  function awaitsValue(prev: string): boolean {
    const m = /^--?([a-z0-9-]+)$/i.exec(prev);
    return m !== null && known.has(m[1]!) && !booleans.has(m[1]!);
  }
}

/** `-name` and `-name=value` as `--name...` (a word starting with a letter: `-1s` stays a value). */
function goStyleFlag(arg: string): string {
  return /^-[a-z][a-z0-9-]*(=|$)/i.test(arg) ? `-${arg}` : arg;
}

function parseGates(raw: string, where: string, problems: string[]): FeatureGates {
  const defaults = OPTION_SPECS.find((s) => s.kind === 'gates')!.default;
  const gates: Record<keyof FeatureGates, boolean> = {} as Record<keyof FeatureGates, boolean>;
  const apply = (text: string, origin: string): void => {
    for (const part of text
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      const [name = '', value, ...rest] = part.split('=');
      const key = GATE_NAMES[name.trim()];
      if (!key) {
        problems.push(
          `${origin}: unknown feature gate "${name.trim()}" (known: ${Object.keys(GATE_NAMES).join(', ')})`,
        );
        continue;
      }
      const v = value?.trim().toLowerCase();
      if (rest.length || (v !== 'true' && v !== 'false')) {
        problems.push(`${origin}: feature gate ${name.trim()} must be =true or =false, got "${part}"`);
        continue;
      }
      gates[key] = v === 'true';
    }
  };
  apply(defaults, 'default');
  apply(raw, where);
  problems.push(...unimplementedGates(gates, where));
  return gates;
}

/** One problem per gate that is on but not in `implemented`, naming the gate and where it was set. */
export function unimplementedGates(
  gates: FeatureGates,
  where: string,
  implemented: ReadonlySet<keyof FeatureGates> = IMPLEMENTED_GATES,
): string[] {
  return Object.entries(GATE_NAMES)
    .filter(([, key]) => gates[key] && !implemented.has(key))
    .map(
      ([name]) =>
        `${where}: feature gate ${name} is not implemented by this build of karpenter-ts, so turning it on is refused rather than ignored (set ${name}=false or leave it out)`,
    );
}

/**
 * Resolves options from arguments and environment. Throws OptionsError listing every problem, each
 * naming the flag (and the environment variable when the value came from there).
 */
export function resolveOptions(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  overrides: Readonly<Record<string, string>> = {},
): ResolvedOptions {
  const problems: string[] = [];
  const values = readValues(argv, env, overrides, problems);
  problems.push(...crossChecks(values));
  if (problems.length) throw new OptionsError(problems);
  return resolved(values);
}

/** Each option's value: its flag, else its environment variable, else the override, else the default. */
function readValues(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  overrides: Readonly<Record<string, string>>,
  problems: string[],
): Record<string, unknown> {
  const flags = readFlags(
    argv,
    new Set(OPTION_SPECS.map((s) => s.flag)),
    problems,
    new Set(OPTION_SPECS.filter((s) => s.kind === 'bool').map((s) => s.flag)),
  );
  const values: Record<string, unknown> = {};
  for (const spec of OPTION_SPECS) {
    const fromFlag = flags.get(spec.flag);
    const fromEnv = env[spec.env];
    const raw =
      fromFlag ??
      (fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined) ??
      overrides[spec.flag] ??
      spec.default;
    const where =
      fromFlag !== undefined ? `--${spec.flag}` : fromEnv ? `${spec.env} (--${spec.flag})` : `--${spec.flag}`;
    values[spec.flag] = parseValue(spec, raw, where, problems);
  }
  return values;
}

/** The rules between options (and the ones a single option's parser cannot see). */
function crossChecks(values: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  const idle = values['batch-idle-duration'] as number;
  const max = values['batch-max-duration'] as number;
  if (Number.isFinite(idle) && Number.isFinite(max) && max < idle) {
    problems.push(
      `--batch-max-duration (${formatDuration(max)}) must be >= --batch-idle-duration (${formatDuration(idle)})`,
    );
  }
  const metrics = values['metrics-port'] as number;
  if (metrics !== 0 && metrics === values['health-probe-port'])
    problems.push(`--metrics-port and --health-probe-port must differ (both ${metrics})`);
  if (values['leader-election-name'] === '') problems.push('--leader-election-name must not be empty');
  for (const flag of ['kube-request-timeout', 'kube-list-timeout', 'aws-request-timeout']) {
    if (!((values[flag] as number) > 0))
      problems.push(`--${flag} must be longer than 0 (every outbound call is bounded)`);
  }
  return problems;
}

/** The checked values under their ResolvedOptions names; options accepted with no effect listed in `ignored`. */
function resolved(values: Readonly<Record<string, unknown>>): ResolvedOptions {
  const ignored = OPTION_SPECS.filter(
    (spec) => spec.noop && values[spec.flag] !== parseValue(spec, spec.default, '', []),
  ).map((spec) => ({ flag: spec.flag, env: spec.env, reason: spec.noop! }));
  return Object.freeze({
    clusterName: values['cluster-name'] as string,
    batchMaxDurationMs: values['batch-max-duration'] as number,
    batchIdleDurationMs: values['batch-idle-duration'] as number,
    metricsPort: values['metrics-port'] as number,
    healthProbePort: values['health-probe-port'] as number,
    logLevel: values['log-level'] as LogLevel,
    featureGates: Object.freeze(values['feature-gates'] as FeatureGates),
    preferencePolicy: values['preference-policy'] as 'Respect' | 'Ignore',
    minValuesPolicy: values['min-values-policy'] as 'Strict' | 'BestEffort',
    ignoreDRARequests: values['ignore-dra-requests'] as boolean,
    schedulerConfig: values['scheduler-config'] as SchedulerConfig | undefined,
    kubeconfig: values['kubeconfig'] as string,
    interruptionQueue: values['interruption-queue'] as string,
    clusterEndpoint: values['cluster-endpoint'] as string,
    clusterCABundle: values['cluster-ca-bundle'] as string,
    clusterCIDR: values['cluster-cidr'] as string,
    vmMemoryOverheadPercent: values['vm-memory-overhead-percent'] as number,
    reservedENIs: values['reserved-enis'] as number,
    isolatedVPC: values['isolated-vpc'] as boolean,
    eksControlPlane: values['eks-control-plane'] as boolean,
    consolidationRepack: values['consolidation-repack'] as 'after' | 'only' | 'off',
    consolidationRepackMinSavings: values['consolidation-repack-min-savings'] as number,
    disableLeaderElection: values['disable-leader-election'] as boolean,
    leaderElectionName: values['leader-election-name'] as string,
    leaderElectionNamespace: values['leader-election-namespace'] as string,
    logOutputPaths: values['log-output-paths'] as string[],
    logErrorOutputPaths: values['log-error-output-paths'] as string[],
    kubeClientQPS: values['kube-client-qps'] as number,
    kubeClientBurst: values['kube-client-burst'] as number,
    heapGrowingPercent: values['heap-growing-percent'] as number,
    mallocTrimIntervalMs: values['malloc-trim-interval'] as number,
    engineWorkerHeapMiB: values['engine-worker-heap-mib'] as number,
    cpuRequests: values['cpu-requests'] as number,
    amiRefreshIntervalMs: values['ami-refresh-interval'] as number,
    subnetRefreshIntervalMs: values['subnet-refresh-interval'] as number,
    disableClusterStateObservability: values['disable-cluster-state-observability'] as boolean,
    ignored,
    kubeRequestTimeoutMs: values['kube-request-timeout'] as number,
    kubeListTimeoutMs: values['kube-list-timeout'] as number,
    awsRequestTimeoutMs: values['aws-request-timeout'] as number,
  });
}

/** Parses one option's raw text; appends a problem naming the option (`where`) when the text is not valid. */
type Parser = (raw: string, where: string, problems: string[], spec: Spec) => unknown;

/** A Go duration in milliseconds, which must be at least `min` (exclusive when `min` is 0): `what` says the rule. */
function durationMs(raw: string, where: string, problems: string[], min: number, what: string): number {
  const r = parseGoDuration(raw.trim());
  if (!r.ok) {
    problems.push(`${where}: ${r.message}`);
    return NaN;
  }
  const ms = Number(r.ns) / 1e6;
  if (!(min === 0 ? ms > 0 : ms >= min)) problems.push(`${where} must be ${what}, got "${raw}"`);
  return ms;
}

/** A number when `raw` matches `shape`, else NaN. */
const numberIf = (shape: RegExp, raw: string): number => (shape.test(raw) ? Number(raw) : NaN);

// Go's strconv.ParseBool, which Karpenter's flags use.
const TRUE_WORDS = ['1', 't', 'T', 'true', 'TRUE', 'True'];
const FALSE_WORDS = ['0', 'f', 'F', 'false', 'FALSE', 'False'];
const CIDR = /^(\d{1,3}(\.\d{1,3}){3}\/\d{1,2}|[0-9a-fA-F:]+:[0-9a-fA-F:]*\/\d{1,3})$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const PARSERS: Record<Kind, Parser> = {
  string: (raw) => raw.trim(),
  duration: (raw, where, problems) => durationMs(raw, where, problems, 0, 'a positive duration'),
  interval: (raw, where, problems) => durationMs(raw, where, problems, 60_000, 'at least 1m'),
  period: (raw, where, problems) => {
    const r = parseGoDuration(raw.trim());
    return r.ok && r.ns === 0n ? 0 : durationMs(raw, where, problems, 0, 'a positive duration, or 0s for never');
  },
  paths: (raw, where, problems) => {
    const list = raw
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    if (!list.length) problems.push(`${where} must name at least one of stdout, stderr or a file path, got "${raw}"`);
    return list;
  },
  int: (raw, where, problems) => {
    const n = numberIf(/^\s*-?\d+\s*$/, raw);
    if (!Number.isSafeInteger(n)) problems.push(`${where} must be a whole number, got "${raw}"`);
    return n;
  },
  count: (raw, where, problems) => {
    const n = numberIf(/^\s*\d+\s*$/, raw);
    if (!Number.isSafeInteger(n)) problems.push(`${where} must be a whole number >= 0, got "${raw}"`);
    return n;
  },
  port: (raw, where, problems) => {
    const n = numberIf(/^\d+$/, raw.trim());
    if (!(n >= 0 && n <= 65535)) problems.push(`${where} must be a port number from 0 to 65535, got "${raw}"`);
    return n;
  },
  fraction: (raw, where, problems) => {
    const n = numberIf(/^\s*\d*\.?\d+(e-?\d+)?\s*$/i, raw);
    if (!(n >= 0 && n < 1)) problems.push(`${where} must be a number from 0 up to (not including) 1, got "${raw}"`);
    return n;
  },
  enum: (raw, where, problems, spec) => {
    const v = spec.values!.find((x) => x.toLowerCase() === raw.trim().toLowerCase());
    if (!v) problems.push(`${where} must be one of ${spec.values!.join(', ')}, got "${raw}"`);
    return v;
  },
  gates: (raw, where, problems) => parseGates(raw, where, problems),
  schedulerConfig: (raw, where, problems) => {
    const r = parseSchedulerConfig(raw);
    if (!r.ok) for (const p of r.problems) problems.push(`${where}: ${p}`);
    return r.ok ? r.value : undefined;
  },
  cidr: (raw, where, problems) => {
    const v = raw.trim();
    if (v && !CIDR.test(v)) problems.push(`${where} must be a CIDR such as 10.100.0.0/16, got "${raw}"`);
    return v;
  },
  bool: (raw, where, problems) => {
    const v = raw.trim();
    if (TRUE_WORDS.includes(v)) return true;
    if (FALSE_WORDS.includes(v)) return false;
    problems.push(`${where} must be true or false, got "${raw}"`);
    return false;
  },
  // A Kubernetes object name (DNS-1123 subdomain); empty means "not set".
  name: (raw, where, problems) => {
    const v = raw.trim();
    if (v && (v.length > 253 || !DNS_SUBDOMAIN.test(v)))
      problems.push(`${where} must be a lower-case DNS name (letters, digits, '-' and '.'), got "${raw}"`);
    return v;
  },
};

function parseValue(spec: Spec, raw: string, where: string, problems: string[]): unknown {
  return PARSERS[spec.kind](raw, where, problems, spec);
}

/** The options as `--help` prints them. */
export function optionsHelp(): string {
  return OPTION_SPECS.map(
    (s) =>
      `  --${s.flag.padEnd(27)} ${s.help}\n  ${''.padEnd(29)} env ${s.env}${s.default ? `, default ${s.default.length > 40 ? 'see docs' : s.default}` : ''}`,
  ).join('\n');
}
