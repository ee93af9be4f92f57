// The real operator (newOperator) with the AWS provider exactly as `karpenter-ts controller` builds it
// (awsProviderFactory), against the simulated API server and kubelets, with the AWS SDK clients answered by
// a fake account (test/fakes/aws-account.ts), all on a manual clock. The test's own writes go through the
// API in process, so the API server's HTTP request log holds only what the controller asked for (the RBAC
// test reads it). Instances that CreateFleet starts boot on the clock and register as Nodes with the labels,
// taints and resources of their NodeClaim, as the user data makes a real kubelet do.
import type { Instance } from '@aws-sdk/client-ec2';
import { awsProviderFactory, type AwsProviderHandle } from '../../controller/cloudprovider/aws/factory.ts';
import { newOperator, type Operator } from '../../controller/main.ts';
import { newLogger } from '../../controller/operator/logger.ts';
import { resolveOptions } from '../../controller/operator/options.ts';
import type { KObject, RequestRecord } from '../../sim/apiserver/index.ts';
import { manualClock, type SimClock } from '../../sim/clock.ts';
import { startSimCluster, type SimCluster } from '../../sim/cluster/cluster.ts';
import { installAdmission } from '../../sim/admission.ts';
import { settler } from '../../sim/environment.ts';
import { FakeAwsAccount, type FakeAccountOptions } from '../fakes/aws-account.ts';
import { applyToApi } from './apply.ts';

export const CLUSTER_ENDPOINT = 'https://0123456789ABCDEF.gr7.ap-northeast-2.eks.amazonaws.com';
export const CLUSTER_CA = Buffer.from('-----BEGIN CERTIFICATE-----\nsimulated\n-----END CERTIFICATE-----\n').toString(
  'base64',
);

export interface AwsSimulation {
  readonly clock: SimClock;
  readonly cluster: SimCluster;
  readonly operator: Operator;
  readonly account: FakeAwsAccount;
  readonly provider: AwsProviderHandle;
  /** Creates or updates (merge patch of spec, labels, annotations) every object in the YAML, in process. */
  apply(yaml: string): Promise<KObject[]>;
  get(resource: string, name: string, namespace?: string): KObject | undefined;
  settle(): Promise<void>;
  /** HTTP requests the controller made (verb, resource, subresource, namespace). */
  controllerRequests(): RequestRecord[];
  close(): Promise<void>;
}

const RESOURCE_OF: Readonly<Record<string, string>> = {
  EC2NodeClass: 'ec2nodeclasses.karpenter.k8s.aws',
  NodePool: 'nodepools.karpenter.sh',
  NodeClaim: 'nodeclaims.karpenter.sh',
  Deployment: 'deployments.apps',
  Pod: 'pods',
  DaemonSet: 'daemonsets.apps',
  PodDisruptionBudget: 'poddisruptionbudgets.policy',
};

interface AwsSimulationOptions {
  readonly account?: Partial<Omit<FakeAccountOptions, 'clock'>>;
  /** Controller option overrides by flag name. */
  readonly options?: Readonly<Record<string, string>>;
}

export async function awsSimulation(o: AwsSimulationOptions = {}): Promise<AwsSimulation> {
  const clock = manualClock();
  const level = (process.env['LOG_LEVEL'] as 'debug' | 'info' | 'warn' | 'error' | undefined) ?? 'silent';
  const log = newLogger({ level, now: () => clock.now() });
  const cluster = await startSimCluster({
    clock,
    onError: (err) => log.error({ err: String(err) }, 'simulated cluster error'),
  });
  installAdmission(cluster.server);
  const account = new FakeAwsAccount({
    region: 'ap-northeast-2',
    clusterName: 'my-cluster',
    clock,
    zones: ['ap-northeast-2a', 'ap-northeast-2b', 'ap-northeast-2c', 'ap-northeast-2d'],
    ...(o.account ?? {}),
  });
  const factory = awsProviderFactory({ env: { AWS_REGION: 'ap-northeast-2' }, clients: () => account.clients });
  const operator = await newOperator({
    options: controllerOptions(o.options),
    clock,
    log,
    kubeConfig: cluster.kubeConfig(),
    cloudProvider: factory,
  });
  const boot = connectInstances(cluster, clock, account);
  const settle = settler(cluster, operator);
  const removeSettler = clock.addSettler(settle);
  const firstRequest = cluster.requests.find({}).length;
  await operator.start();
  await settle();
  return {
    clock,
    cluster,
    operator,
    account,
    provider: operator.cloudProvider as AwsProviderHandle,
    async apply(yaml) {
      const out = applyToApi(cluster.api, RESOURCE_OF, yaml);
      await settle();
      return out;
    },
    get: (resource, name, namespace) => cluster.api.find(RESOURCE_OF[resource] ?? resource, namespace, name),
    settle,
    controllerRequests: () =>
      cluster.requests
        .find({})
        .slice(firstRequest)
        .filter((r) => r.verb !== undefined),
    async close() {
      boot.stop();
      account.close();
      removeSettler();
      await operator.stop();
      await cluster.close();
      clock.dispose();
    },
  };
}

/** The controller's options as the guide's Helm values set them for my-cluster (no ports, no leader election). */
function controllerOptions(overrides: AwsSimulationOptions['options']) {
  return resolveOptions(
    [],
    {},
    {
      'cluster-name': 'my-cluster',
      'cluster-endpoint': CLUSTER_ENDPOINT,
      'cluster-ca-bundle': CLUSTER_CA,
      'cluster-cidr': '10.100.0.0/16',
      'interruption-queue': 'my-cluster',
      'metrics-port': '0',
      'health-probe-port': '0',
      'disable-leader-election': 'true',
      ...(overrides ?? {}),
    },
  );
}

/** The account's instances and the simulated kubelets: a running instance registers its Node, a terminated one loses it. */
function connectInstances(cluster: SimCluster, clock: SimClock, account: FakeAwsAccount): { stop: () => void } {
  const boot = bootNodes(cluster, clock);
  account.onRunning = boot.running;
  account.onTerminated = (i) =>
    cluster.kubelet.terminateInstance(`aws:///${i.Placement?.AvailabilityZone}/${i.InstanceId}`);
  return boot;
}

/** Running instances register as Nodes once their NodeClaim carries their providerID. */
function bootNodes(cluster: SimCluster, clock: SimClock): { running: (i: Instance) => void; stop: () => void } {
  let stopped = false;
  const register = (providerID: string, attempt: number): void => {
    if (stopped) return;
    const claim = cluster.store
      .list('nodeclaims.karpenter.sh')
      .find((c) => (c.status as { providerID?: string } | undefined)?.providerID === providerID);
    if (!claim) {
      if (attempt < 60) clock.setTimer(1_000, () => register(providerID, attempt + 1));
      return;
    }
    const spec = claim.spec as {
      taints?: Array<{ key: string; effect: string; value?: string }>;
      startupTaints?: Array<{ key: string; effect: string; value?: string }>;
    };
    const status = claim.status as { capacity?: Record<string, string>; allocatable?: Record<string, string> };
    const [, zone, id] = /^aws:\/\/\/([^/]+)\/(.+)$/.exec(providerID)!;
    cluster.kubelet.registerInstance({
      providerID,
      nodeName: `${id}.${zone!.slice(0, -1)}.compute.internal`, // EC2's resource-based host names
      labels: { ...claim.metadata.labels },
      taints: spec.taints ?? [],
      startupTaints: spec.startupTaints ?? [],
      capacity: status.capacity ?? {},
      allocatable: status.allocatable ?? {},
    });
  };
  return {
    running: (i) => register(`aws:///${i.Placement?.AvailabilityZone}/${i.InstanceId}`, 0),
    stop: () => {
      stopped = true;
    },
  };
}
