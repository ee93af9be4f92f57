// `karpenter-ts controller`: the operator against a real cluster (in-cluster config, --kubeconfig or
// KUBECONFIG), with the AWS cloud provider, /metrics and /healthz, /readyz, until SIGTERM or SIGINT.
import type { Io } from '../io.ts';
import { loadKubeConfig, newOperator, type CloudProviderFactory, type Operator } from '../../controller/main.ts';
import type { Clock } from '../../controller/operator/clock.ts';
import { applyHeapPolicy } from '../../controller/operator/heap.ts';
import { startMallocTrimming } from '../../controller/operator/malloc.ts';
import { newLogger } from '../../controller/operator/logger.ts';
import { optionsHelp, OptionsError, resolveOptions } from '../../controller/operator/options.ts';
import type { KubeConfig } from '@kubernetes/client-node';

export const summary = 'run the controller against a Kubernetes cluster (in-cluster, --kubeconfig or KUBECONFIG)';

const USAGE = `usage: karpenter-ts controller [options]

Runs the karpenter-ts controller: watches NodePools, EC2NodeClasses, NodeClaims, nodes and pods, launches
and terminates EC2 capacity for pending pods, and serves Prometheus metrics and health probes. Every option
can also be set by its environment variable (flags win).

options:
${optionsHelp()}
  -h, --help                      show this help

exit status: 0 stopped by a signal, 1 lost the leader lease (restart it, as Kubernetes does), 2 bad options or
no usable kubeconfig / cloud provider / leader-election namespace
`;

/** Seams for tests: another cloud provider, a kubeconfig object, and a signal that stops the controller. */
export interface ControllerCommandDeps {
  readonly cloudProvider?: CloudProviderFactory;
  readonly kubeConfig?: KubeConfig;
  readonly signal?: AbortSignal;
  readonly onStarted?: (operator: Operator, ports: readonly number[]) => void;
  /** The operator's clock (default the wall clock). */
  readonly clock?: Clock;
}

/** The AWS cloud provider, loaded only when no other is given (tests pass their own and skip the AWS SDK). */
async function awsProvider(): Promise<CloudProviderFactory> {
  const { createCloudProvider } = await import('../../controller/cloudprovider/aws/index.ts');
  return createCloudProvider;
}

/** Resolves when the caller's signal aborts, or (without one) at the process's SIGTERM or SIGINT. */
function stopSignal(signal: AbortSignal | undefined): Promise<'signal'> {
  return new Promise<'signal'>((resolve) => {
    const stop = (): void => resolve('signal');
    if (signal?.aborted) stop();
    else if (signal) signal.addEventListener('abort', stop, { once: true });
    else {
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    }
  });
}

export async function run(args: string[], io: Io, deps: ControllerCommandDeps = {}): Promise<number> {
  if (args.includes('-h') || args.includes('--help')) {
    io.out(USAGE);
    return 0;
  }
  let options;
  try {
    options = resolveOptions(args, io.env);
  } catch (e) {
    if (!(e instanceof OptionsError)) throw e;
    io.err(`karpenter-ts controller: invalid options:\n${e.problems.map((p) => `  ${p}`).join('\n')}\n`);
    return 2;
  }
  if (!options.clusterName) {
    io.err(
      'karpenter-ts controller: --cluster-name (CLUSTER_NAME) is required: it names the cluster in instance tags and discovery\n',
    );
    return 2;
  }
  applyHeapPolicy(options.heapGrowingPercent);
  // LOG_OUTPUT_PATHS=stdout (the default) writes through io, so tests see the lines; other paths go to their files.
  const toStdout = options.logOutputPaths.length === 1 && options.logOutputPaths[0] === 'stdout';
  const log = newLogger({
    level: options.logLevel,
    ...(toStdout
      ? { destination: { write: (s: string) => io.out(s) } }
      : { outputPaths: options.logOutputPaths, errorOutputPaths: options.logErrorOutputPaths }),
  });
  let operator: Operator;
  let lost: () => void = () => {};
  const leadershipLost = new Promise<'lost'>((resolve) => (lost = () => resolve('lost')));
  try {
    const kubeConfig = deps.kubeConfig ?? loadKubeConfig(options.kubeconfig, io.env);
    const cloudProvider = deps.cloudProvider ?? (await awsProvider());
    operator = await newOperator({
      options,
      kubeConfig,
      cloudProvider,
      log,
      onLostLeadership: () => lost(),
      ...(deps.clock ? { clock: deps.clock } : {}),
    });
  } catch (e) {
    io.err(`karpenter-ts controller: ${(e as Error).message}\n`);
    return 2;
  }
  const trimmer = startMallocTrimming(options.mallocTrimIntervalMs, operator.metrics, log);
  const servers = await operator.serve();
  await operator.start();
  log.info(
    { cluster: options.clusterName, provider: operator.cloudProvider.name, ports: servers.map((s) => s.port) },
    'controller started',
  );
  deps.onStarted?.(
    operator,
    servers.map((s) => s.port),
  );
  const why = await Promise.race([leadershipLost, stopSignal(deps.signal)]);
  trimmer?.stop();
  if (why === 'lost') {
    // As controller-runtime: a replica that lost its lease exits, and comes back as a follower.
    // Its controllers are already halted and fenced; do not wait for reconciles that may never finish.
    log.error({}, 'leader election lost; exiting');
    operator.kill();
    return 1;
  }
  log.info({}, 'stopping');
  await operator.stop();
  return 0;
}
